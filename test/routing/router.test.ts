import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { adapt } from "../../src/fetch/index";
import type { HttpRequest, HttpResponse } from "../../src/http/message";
import { json } from "../../src/http/message";
import { isHttpProblem } from "../../src/http/problem";
import { createRouter, type Middleware, RoutingError, routeOf } from "../../src/routing/index";
import { app, newStore } from "./app";

function request(method: string, target: string, body?: unknown, type = "application/json"): HttpRequest {
  const [path = "", search = ""] = target.split("?");
  const bytes = body === undefined ? new Uint8Array(0) : new TextEncoder().encode(JSON.stringify(body));
  return {
    method,
    path,
    search,
    query: Object.fromEntries(new URLSearchParams(search)),
    headers: body === undefined ? {} : { "content-type": type },
    body: bytes,
  };
}

async function codeOf(promise: unknown): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return error instanceof RoutingError ? error.code : isHttpProblem(error) ? `problem:${error.code}` : String(error);
  }
  return undefined;
}

function buildCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof RoutingError ? error.code : String(error);
  }
  return undefined;
}

// Any resource builder: the refusal is about the declaration, not the types.
type ResourceBuilderOf = {
  read: (...args: never[]) => unknown;
  list: (...args: never[]) => unknown;
  remove: (...args: never[]) => unknown;
};

describe("Router", () => {
  it("lists its routes with names, methods, templates and kinds", () => {
    const routes = app(newStore()).routes();
    expect(routes.map((r) => `${r.method} ${r.template} ${r.name}`)).toEqual([
      "GET /users users.list",
      "POST /users users.create",
      "GET /users/{user_id} users.read",
      "PUT /users/{user_id} users.replace",
      "PATCH /users/{user_id} users.update",
      "DELETE /users/{user_id} users.remove",
      "GET /users/{user_id}/orders users.orders.list",
      "POST /users/{user_id}/orders users.orders.create",
      "GET /users/{user_id}/orders/{order_id} users.orders.read",
      "POST /users/{user_id}/orders/{order_id}/ship users.orders.ship",
      "GET /static/{path*} static",
    ]);
  });

  it("builds URLs by route name, percent-encoding parameters", () => {
    const router = app(newStore());
    expect(router.url("users.orders.read", { user_id: "a b", order_id: 7 })).toBe("/users/a%20b/orders/7");
    expect(router.url("static", { path: "css/a b.css" })).toBe("/static/css/a%20b.css");
    expect(buildCode(() => router.url("nope"))).toBe("unknown_route");
    expect(buildCode(() => router.url("users.read", {}))).toBe("unknown_route");
  });

  describe("url() → match round-trips (regression: a value '.' or '..' made a dot segment clients remove, RFC 3986 §5.2.4)", () => {
    const build = (caseSensitive: boolean) =>
      createRouter({ caseSensitive, maxParamLength: 10_000 })
        .route("GET", "/users/{id}", { name: "user" }, () => json(200, 1))
        .route("GET", "/files/{name}.json", { name: "file" }, () => json(200, 1))
        .route("GET", "/v1/{base}...{head}", { name: "compare" }, () => json(200, 1))
        .route("GET", "/jobs/{id}X{verb}", { name: "verb" }, () => json(200, 1))
        .route("GET", "/dots/.{a}", { name: "dotted" }, () => json(200, 1))
        .route("GET", "/static/{path*}", { name: "static" }, () => json(200, 1))
        .build();
    const segmentsOf = (path: string) => path.split("/").slice(1);

    it("percent-encodes a value that would be a dot segment", () => {
      const router = build(true);
      expect(router.url("user", { id: ".." })).toBe("/users/%2E%2E");
      expect(router.url("user", { id: "." })).toBe("/users/%2E");
      expect(router.url("user", { id: "..." })).toBe("/users/...");
      expect(router.url("dotted", { a: "." })).toBe("/dots/.%2E");
      expect(router.url("static", { path: "a/../b/./c" })).toBe("/static/a/%2E%2E/b/%2E/c");
      expect(router.match("GET", "/users/%2E%2E")).toMatchObject({ kind: "found", params: { id: ".." } });
      expect(router.match("GET", "/static/a/%2E%2E/b")).toMatchObject({ kind: "found", params: { path: "a/../b" } });
    });

    it("a composite's value may hold the literal after it", () => {
      const router = build(true);
      const path = router.url("compare", { base: "a...b", head: "c...d" });
      expect(router.match("GET", path)).toMatchObject({ params: { base: "a...b", head: "c...d" } });
    });

    // U+0000 is refused by the matcher (malformed_path), and a lone surrogate has no UTF-8 form.
    const value = fc.string({ unit: "binary", minLength: 1, maxLength: 40 }).filter((v) => !v.includes("\u0000"));
    const tricky = fc.oneof(
      value,
      fc.string({
        unit: fc.constantFrom(".", "/", "x", "X", "%", "2", "E", "json", "...", "a"),
        minLength: 1,
        maxLength: 8,
      }),
    );

    it.each([true, false])(
      "for every string, caseSensitive: %s: the path has no dot segment and matches back to the value",
      (caseSensitive) => {
        const router = build(caseSensitive);
        fc.assert(
          fc.property(tricky, tricky, fc.boolean(), (a, b, empty) => {
            const cases: [string, Record<string, string>][] = [
              ["user", { id: a }],
              ["file", { name: a }],
              ["compare", { base: a, head: b }],
              ["verb", { id: a, verb: b }],
              ["dotted", { a }],
              ["static", { path: empty ? "" : `${a}/${b}` }],
            ];
            for (const [name, params] of cases) {
              const path = router.url(name, params);
              for (const segment of segmentsOf(path)) expect([".", ".."]).not.toContain(segment);
              expect(router.match("GET", path), `${name} ${path}`).toMatchObject({ kind: "found", params });
            }
          }),
          { numRuns: 300 },
        );
      },
    );
  });

  it("matches on its own, without running anything", () => {
    const result = app(newStore()).match("GET", "/users/u1/orders/o2");
    expect(result).toMatchObject({
      kind: "found",
      route: { name: "users.orders.read" },
      params: { user_id: "u1", order_id: "o2" },
    });
  });

  describe("build-time errors", () => {
    it("refuses a query string in a template", () => {
      expect(buildCode(() => createRouter().route("GET", "/users?active=1", {}, () => json(200, 1)))).toBe(
        "query_in_template",
      );
    });

    it("refuses a duplicate and an ambiguous route at build, naming both declarations", () => {
      const router = createRouter()
        .route("GET", "/users/{id}", { name: "a" }, () => json(200, 1))
        .route("GET", "/users/{user_id}", { name: "b" }, () => json(200, 2));
      expect(buildCode(() => router.build())).toBe("ambiguous_route");
      expect(() => router.build()).toThrow(/\(a\)[\s\S]*\(b\)|\(b\)[\s\S]*\(a\)/);
      const dup = createRouter()
        .resource("/users/{id}", (r) => r.read({}, () => json(200, 1)))
        .route("GET", "/users/{id}", { name: "again" }, () => json(200, 2));
      expect(buildCode(() => dup.handler())).toBe("duplicate_route");
    });

    it("refuses two composite templates that can match one segment, naming both declarations", () => {
      const router = createRouter()
        .route("GET", "/{a}-x", { name: "dash-x" }, () => json(200, 1))
        .route("GET", "/x-{a}", { name: "x-dash" }, () => json(200, 2));
      expect(buildCode(() => router.build())).toBe("ambiguous_route");
      expect(() => router.build()).toThrow(/\(dash-x\)[\s\S]*\(x-dash\)/);
    });

    it("refuses a duplicate name, a bad method, a bad resource template and mismatched schemas", () => {
      const router = createRouter().route("GET", "/a", { name: "x" }, () => json(200, 1));
      expect(buildCode(() => router.route("GET", "/b", { name: "x" }, () => json(200, 1)))).toBe("duplicate_name");
      expect(buildCode(() => router.route("GE T", "/c", {}, () => json(200, 1)))).toBe("invalid_method");
      expect(buildCode(() => router.resource("/users", () => undefined))).toBe("invalid_template");
      expect(
        buildCode(() =>
          router.route("GET", "/d/{id}", { params: z.object({ other: z.string() }) }, () => json(200, 1)),
        ),
      ).toBe("invalid_schema");
      expect(
        buildCode(() => router.route("GET", "/e", { query: z.string() as unknown as z.ZodObject }, () => json(200, 1))),
      ).toBe("invalid_schema");
    });

    it("refuses a body schema on list, read and remove, which carry no body, instead of ignoring it", () => {
      const Body = z.object({ text: z.string() });
      for (const declare of [
        (r: ResourceBuilderOf) => r.read({ body: Body } as never, (() => json(200, 1)) as never),
        (r: ResourceBuilderOf) => r.list({ body: Body } as never, (() => json(200, [])) as never),
        (r: ResourceBuilderOf) => r.remove({ body: Body } as never, (() => true) as never),
      ]) {
        let thrown: unknown;
        try {
          createRouter()
            .resource("/notes/{note_id}", (r) => void declare(r as never))
            .build();
        } catch (error) {
          thrown = error;
        }
        expect((thrown as { code?: string }).code).toBe("invalid_schema");
        expect(String(thrown)).toMatch(/reads no request body/);
      }
    });

    it("refuses a body schema declared for a 204 or a 304, which never have content (RFC 9110 §15.3.5, §15.4.5)", () => {
      for (const status of [204, 304]) {
        expect(
          buildCode(() =>
            createRouter().route("PUT", "/n", { responses: { [status]: { schema: z.object({}) } } }, () =>
              json(200, {}),
            ),
          ),
        ).toBe("invalid_schema");
      }
      expect(
        buildCode(() =>
          createRouter().route("PUT", "/n", { responses: { 204: { description: "Done." } } }, () => json(200, {})),
        ),
      ).toBeUndefined();
    });

    it("refuses a declared success a remove (204) or a create (201, 202) never answers, which the document listed", () => {
      const notes = () => createRouter();
      expect(
        buildCode(() =>
          notes().resource("/notes/{note_id}", (r) => {
            r.remove({ responses: { 200: { description: "Gone." } } }, () => true);
          }),
        ),
      ).toBe("invalid_schema");
      expect(
        buildCode(() =>
          notes().resource("/notes/{note_id}", (r) => {
            r.create({ responses: { 200: {} } }, ({ created }) => created("1"));
          }),
        ),
      ).toBe("invalid_schema");
      expect(
        buildCode(() =>
          notes().resource("/notes/{note_id}", (r) => {
            r.remove({ responses: { 204: { description: "Gone." }, 409: { description: "Locked." } } }, () => true);
            r.create({ responses: { 201: {}, 202: {} } }, ({ created }) => created("1"));
          }),
        ),
      ).toBeUndefined();
    });
  });

  describe("method rules", () => {
    it("PUT without a body schema parses the JSON body and hands it over as unknown", async () => {
      const seen: unknown[] = [];
      const router = createRouter().resource("/things/{id}", (r) => {
        r.replace({}, ({ body }) => {
          seen.push(body);
          return json(200, { ok: true });
        });
      });
      expect((await router.handler()(request("PUT", "/things/1", { a: [1] }))).status).toBe(200);
      expect(seen).toEqual([{ a: [1] }]);
      expect(await codeOf(router.handler()(request("PUT", "/things/1", "x", "text/plain")))).toBe(
        "problem:unsupported_media_type",
      );
      expect(await codeOf(router.handler()(request("PUT", "/things/1")))).toBe("problem:body_required");
      expect(seen).toHaveLength(1);
    });

    it("never reads a body for list, read and remove (GET and DELETE content has no semantics, RFC 9110 §9.3)", async () => {
      const contexts: object[] = [];
      const keep = (context: object) => {
        contexts.push(context);
        return json(200, {});
      };
      const router = createRouter().resource("/things/{id}", (r) => {
        r.list({}, keep);
        r.read({}, keep);
      });
      expect((await router.handler()(request("GET", "/things", "{oops", "application/json"))).status).toBe(200);
      expect((await router.handler()(request("GET", "/things/1", "{oops", "application/json"))).status).toBe(200);
      expect(contexts.map((context) => "body" in context)).toEqual([false, false]);
    });

    it("refuses a create that does not answer 201 + Location (or 202)", async () => {
      const router = createRouter().resource("/things/{id}", (r) => {
        r.create({}, () => json(200, {}));
      });
      expect(await codeOf(router.handler()(request("POST", "/things")))).toBe("method_rule_violation");
    });

    it("refuses a remove handler that does not say whether it deleted", async () => {
      const router = createRouter().resource("/things/{id}", (r) => {
        r.remove({}, (() => "yes") as unknown as () => boolean);
      });
      expect(await codeOf(router.handler()(request("DELETE", "/things/1")))).toBe("method_rule_violation");
    });

    it("with validateResponses, a body the response schema refuses is an invalid_response", async () => {
      const router = createRouter({ validateResponses: true }).route(
        "GET",
        "/n",
        { response: z.object({ n: z.number() }) },
        () => json(200, { n: "one" }),
      );
      expect(await codeOf(router.handler()(request("GET", "/n")))).toBe("invalid_response");
      const off = createRouter().route("GET", "/n", { response: z.object({ n: z.number() }) }, () =>
        json(200, { n: "one" }),
      );
      expect((await off.handler()(request("GET", "/n"))).status).toBe(200);
    });

    it("with validateResponses, a declared 2xx's body is checked against its own schema, not `response`", async () => {
      const Job = z.object({ state: z.enum(["queued"]) });
      const router = createRouter({ validateResponses: true })
        .route(
          "POST",
          "/jobs/{id}/retry",
          { response: z.object({ n: z.number() }), responses: { 202: { schema: Job } } },
          () => json(202, { state: "queued" }),
        )
        .route("POST", "/jobs/{id}/cancel", { responses: { 202: { schema: Job } } }, () =>
          json(202, { state: "gone" }),
        );
      expect((await router.handler()(request("POST", "/jobs/1/retry"))).status).toBe(202);
      expect(await codeOf(router.handler()(request("POST", "/jobs/1/cancel")))).toBe("invalid_response");
    });
  });

  describe("composition", () => {
    it("runs router, resource, then operation middleware, outermost first, and exposes the match", async () => {
      const order: string[] = [];
      const layer =
        (name: string): Middleware =>
        (next) =>
        (req) => {
          order.push(`${name}:${routeOf(req)?.route.name}`);
          return next(req);
        };
      const router = createRouter()
        .use(layer("router"))
        .resource("/users/{user_id}", (users) => {
          users.use(layer("users"));
          users.read({ use: [layer("op")] }, ({ params }) => json(200, params));
        });
      const response = await router.handler()(request("GET", "/users/u1"));
      expect(response.status).toBe(200);
      expect(order).toEqual(["router:users.read", "users:users.read", "op:users.read"]);
      order.length = 0;
      await router.handler()(request("GET", "/nowhere"));
      expect(order).toEqual([]);
    });

    it("gives middleware the match of a frozen request too, and adds no enumerable key to a request", async () => {
      const seen: (string | undefined)[] = [];
      const router = createRouter()
        .use((next) => (req) => {
          seen.push(routeOf(req)?.params.user_id);
          return next(req);
        })
        .resource("/users/{user_id}", (users) => users.read({}, ({ params }) => json(200, params)));
      const frozen = Object.freeze(request("GET", "/users/f1"));
      expect((await router.handler()(frozen)).body).toBe('{"user_id":"f1"}');
      const plain = request("GET", "/users/p1");
      const keys = Object.keys(plain);
      await router.handler()(plain);
      expect(seen).toEqual(["f1", "p1"]);
      expect(Object.keys(plain)).toEqual(keys);
      expect(JSON.stringify(plain)).not.toContain("route");
      expect(routeOf(request("GET", "/users/p1"))).toBeUndefined();
    });
  });

  it("answers OPTIONS * with every declared method (RFC 9110 §9.3.7)", async () => {
    const response = await app(newStore()).handler()(request("OPTIONS", "*"));
    expect(response).toMatchObject({ status: 204, headers: { allow: "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH" } });
  });

  it("names in OPTIONS what a form-taking POST takes, and nothing for a POST or PATCH that reads no body", async () => {
    const router = createRouter()
      .route("POST", "/forms", { body: z.object({ a: z.string() }), form: true }, () => json(200, {}))
      .route("POST", "/pings", {}, () => json(200, {}))
      .route("PATCH", "/pings", {}, () => json(200, {}));
    const forms = await router.handler()(request("OPTIONS", "/forms"));
    expect(forms.headers).toEqual({
      allow: "POST, OPTIONS",
      "accept-post": "application/json, application/x-www-form-urlencoded",
    });
    const pings = await router.handler()(request("OPTIONS", "/pings"));
    expect(pings.headers).toEqual({ allow: "POST, OPTIONS, PATCH" });
  });

  it("serves through the Fetch adapter too", async () => {
    const fetchHandler = adapt(app(newStore()).handler());
    const created = await fetchHandler(
      new Request("http://localhost/users", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "A", email: "a@example.com", tags: [] }),
      }),
    );
    expect(created.status).toBe(201);
    const location = created.headers.get("location") as string;
    const head = await fetchHandler(new Request(`http://localhost${location}`, { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const notAllowed = await fetchHandler(new Request("http://localhost/users", { method: "DELETE" }));
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
  });
});

describe("a method without a route at a path the router has: 405 with Allow (RFC 9110 §15.5.6)", () => {
  // Not 501 (§15.6.2): the router's handler may be one part of an app (Hono, Next.js, a handler of your own) that
  // implements the method elsewhere, so it cannot say the server implements it for no resource.
  const router = createRouter()
    .route("GET", "/a", {}, () => json(200, {}))
    .route("POST", "/b", {}, () => json(200, {}))
    .route("PURGE", "/c", {}, () => json(200, {}));
  const handler = router.handler();
  const fetchHandler = adapt(handler);

  it.each([
    ["a method another route implements", "POST", "/a", "GET, HEAD, OPTIONS"],
    ["an extension method another route implements", "PURGE", "/a", "GET, HEAD, OPTIONS"],
    ["an extension method no route implements", "FOO", "/a", "GET, HEAD, OPTIONS"],
    ["a method no route implements", "DELETE", "/b", "POST, OPTIONS"],
    ["GET where only POST is declared", "GET", "/b", "POST, OPTIONS"],
  ])("answers %s, handler and Fetch adapter alike", async (_, method, path, allow) => {
    const direct = await handler(request(method, path));
    const fetched = await fetchHandler(new Request(`http://x${path}`, { method }));
    expect([direct.status, fetched.status]).toEqual([405, 405]);
    expect([direct.headers.allow, fetched.headers.get("allow")]).toEqual([allow, allow]);
    expect(await fetched.json()).toMatchObject({ code: "method_not_allowed" });
  });

  it("answers 404 at a path no route has, whatever the method", async () => {
    expect((await handler(request("FOO", "/nowhere"))).status).toBe(404);
  });
});

// A JSON (or other) body as sent, for the body-limit tests.
const raw = (method: string, path: string, text: string, type = "application/json"): HttpRequest => ({
  method,
  path,
  search: "",
  query: {},
  headers: { "content-type": type },
  body: new TextEncoder().encode(text),
});

// The router's answer with its problems as responses, and "status code" for a problem (the status alone otherwise).
function answering(router: { handler(): (request: HttpRequest) => HttpResponse | Promise<HttpResponse> }) {
  const handler = router.handler();
  const answer = async (request: HttpRequest) => {
    try {
      return await handler(request);
    } catch (error) {
      if (isHttpProblem(error)) return error.toResponse();
      throw error;
    }
  };
  const code = async (request: HttpRequest) => {
    const response = await answer(request);
    return response.status >= 400 ? `${response.status} ${JSON.parse(String(response.body)).code}` : response.status;
  };
  return { answer, code };
}

describe("JSON body limits through the router (issue 16)", () => {
  const router = createRouter({ json: { maxDepth: 3 } })
    .route("POST", "/notes", { body: z.unknown() }, ({ body }) => json(200, { body }))
    .route("POST", "/raw", { body: z.unknown(), json: { allowNul: true, maxDepth: 10 } }, ({ body }) =>
      json(200, { body }),
    )
    .resource("/docs/{id}", (docs) => {
      docs.update({ body: z.record(z.string(), z.unknown()) }, ({ merge }) => json(200, merge({ a: 1 })));
    });
  const { code } = answering(router);

  it("applies the router's depth to bodies and merge patches", async () => {
    expect(await code(raw("POST", "/notes", "[[[1]]]"))).toBe(200);
    expect(await code(raw("POST", "/notes", "[[[[1]]]]"))).toBe("400 json_too_deep");
    const patch = "application/merge-patch+json";
    expect(await code(raw("PATCH", "/docs/d1", '{"b":{"c":1}}', patch))).toBe(200);
    expect(await code(raw("PATCH", "/docs/d1", '{"b":{"c":{"d":{"e":1}}}}', patch))).toBe("400 json_too_deep");
  });

  it("refuses NUL unless the operation allows it, and lone surrogates always", async () => {
    expect(await code(raw("POST", "/notes", '{"a":"\\u0000"}'))).toBe("422 invalid_string");
    expect(await code(raw("POST", "/raw", '{"a":"\\u0000"}'))).toBe(200);
    expect(await code(raw("POST", "/raw", "[[[[[1]]]]]"))).toBe(200);
    expect(await code(raw("POST", "/raw", '{"a":"\\udfff"}'))).toBe("422 invalid_string");
  });

  it("refuses a member name given twice, in a body and in a merge patch (RFC 7493 §2.3)", async () => {
    expect(await code(raw("POST", "/notes", '{"role":"user","role":"admin"}'))).toBe("422 duplicate_member");
    const patch = "application/merge-patch+json";
    expect(await code(raw("PATCH", "/docs/d1", '{"b":1,"b":null}', patch))).toBe("422 duplicate_member");
    expect(await code(raw("POST", "/notes", '[{"role":"user"},{"role":"admin"}]'))).toBe(200);
  });

  it("refuses a query parameter that decodes to NUL or to bytes that are not UTF-8", async () => {
    for (const search of ["x=%00", "x=%FF", "%00=1"]) {
      expect(await code({ ...raw("POST", "/notes", "{}"), search }), search).toBe("400 malformed_query");
    }
  });
});

describe("regression: prototype poisoning, a body's own __proto__ reached a handler that Object.assign-ed it", () => {
  const reached: string[] = [];
  const stored: Record<string, unknown> = { a: 1 };
  const router = createRouter()
    .route("POST", "/settings", { body: z.unknown() }, ({ body }) => {
      reached.push("settings");
      const settings: Record<string, unknown> = {};
      Object.assign(settings, body);
      return json(200, { admin: settings["admin"] === true });
    })
    .route("POST", "/users", { body: z.object({ name: z.string() }) }, ({ body }) => json(200, body))
    .route("POST", "/trusted", { body: z.unknown(), json: { allowPrototypeKeys: true } }, ({ body }) =>
      json(200, { keys: Object.keys(body as object) }),
    )
    .resource("/docs/{id}", (docs) => {
      docs.update({}, ({ merge }) => json(200, merge(stored)));
      docs.replace({}, ({ body }) => json(200, body));
    });
  const { answer, code } = answering(router);
  const poison = '{"__proto__":{"admin":true}}';

  it("refuses it with 422 forbidden_member before any handler runs", async () => {
    reached.length = 0;
    expect(await code(raw("POST", "/settings", poison))).toBe("422 forbidden_member");
    expect(await code(raw("POST", "/settings", '{"x":{"constructor":{"prototype":{"admin":true}}}}'))).toBe(
      "422 forbidden_member",
    );
    expect(reached).toStrictEqual([]);
    expect(({} as Record<string, unknown>)["admin"]).toBeUndefined();
  });

  it("refuses it under a schema that would strip it too, uniformly at parse time", async () => {
    expect(await code(raw("POST", "/users", '{"name":"a","__proto__":{"admin":true}}'))).toBe("422 forbidden_member");
    expect(await code(raw("POST", "/users", '{"name":"a"}'))).toBe(200);
  });

  it("refuses it in a merge patch and in a PUT body, so no document of the API can carry one", async () => {
    const patch = "application/merge-patch+json";
    expect(await code(raw("PATCH", "/docs/d1", poison, patch))).toBe("422 forbidden_member");
    expect(await code(raw("PATCH", "/docs/d1", '{"__proto__":null}', patch))).toBe("422 forbidden_member");
    expect(await code(raw("PUT", "/docs/d1", poison))).toBe("422 forbidden_member");
    expect(await code(raw("PATCH", "/docs/d1", '{"b":2}', patch))).toBe(200);
  });

  it("takes it, as a plain own member, where the operation's json option allows prototype keys", async () => {
    const response = await answer(raw("POST", "/trusted", poison));
    expect(response.status).toBe(200);
    expect(JSON.parse(String(response.body))).toStrictEqual({ keys: ["__proto__"] });
  });
});

describe("regression: created() wrote a Location that matched another resource under a composite parent", () => {
  const router = createRouter().resource("/compare/{base}...{head}/items/{item_id}", (items) => {
    items.create({}, ({ created }) => created("n 1"));
    items.read({}, ({ params }) => json(200, params));
  });

  it("encodes the parent's values as url() does, so the Location leads back to the same parent", async () => {
    // base "a...b" arrives encoded (%2E); sent back as "a...b...c" it would be base "a", head "b...c".
    const response = await router.handler()(request("POST", "/compare/a%2E%2E%2Eb...c/items"));
    expect(response.status).toBe(201);
    const location = response.headers["location"] as string;
    expect(location).toBe(router.url("items.read", { base: "a...b", head: "c", item_id: "n 1" }));
    expect(router.match("GET", location)).toMatchObject({
      kind: "found",
      params: { base: "a...b", head: "c", item_id: "n 1" },
    });
  });
});

describe("regression: a query schema that takes other parameters (looseObject, catchall) was refused them", () => {
  const router = createRouter()
    .route("GET", "/loose", { query: z.looseObject({ q: z.string().optional() }) }, ({ query }) => json(200, query))
    .route(
      "GET",
      "/catchall",
      { query: z.object({ q: z.string().optional() }).catchall(z.string().max(3)) },
      ({ query }) => json(200, query),
    )
    .route("GET", "/strict", { query: z.strictObject({ q: z.string().optional() }) }, ({ query }) => json(200, query));
  const answer = async (target: string) => {
    try {
      const response = await router.handler()(request("GET", target));
      return { status: response.status, body: JSON.parse(String(response.body)) };
    } catch (error) {
      if (!isHttpProblem(error)) throw error;
      return { status: error.status, body: { code: error.code, ...error.extensions } };
    }
  };

  it("hands a looseObject's other parameters to the handler", async () => {
    expect(await answer("/loose?q=1&utm_source=x")).toEqual({ status: 200, body: { q: "1", utm_source: "x" } });
  });

  it("validates other parameters with the catchall schema (400 validation_failed naming the parameter)", async () => {
    expect(await answer("/catchall?filter=abc")).toEqual({ status: 200, body: { filter: "abc" } });
    const refused = await answer("/catchall?filter=abcdef");
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/filter", in: "query" }] });
  });

  it("still refuses an unknown name for a plain or strict object (400 unknown_query_parameter)", async () => {
    expect((await answer("/strict?x=1")).body).toMatchObject({ code: "unknown_query_parameter", parameters: ["x"] });
  });
});

describe("regression: a form body's one value for an array member was refused (OpenAPI 3.1 §4.8.15.1, form + explode)", () => {
  const form = (text: string, type = "application/x-www-form-urlencoded"): HttpRequest => ({
    method: "POST",
    path: "/things",
    search: "",
    query: {},
    headers: { "content-type": type },
    body: new TextEncoder().encode(text),
  });
  const router = createRouter().route(
    "POST",
    "/things",
    { body: z.object({ tags: z.array(z.string()), name: z.string().optional() }), form: true },
    ({ body }) => json(200, body),
  );

  it("reads tags=a as the list [a], as tags=a&tags=b is [a, b]", async () => {
    for (const [text, tags] of [
      ["tags=a", ["a"]],
      ["tags=a&tags=b", ["a", "b"]],
      ["tags[]=a&name=n", ["a"]],
    ] as const) {
      const response = await router.handler()(form(text));
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body as string).tags).toEqual(tags);
    }
  });

  it("leaves a JSON body as sent: a string is not an array there", async () => {
    expect(await codeOf(router.handler()(form('{"tags":"a"}', "application/json")))).toBe("problem:validation_failed");
  });
});

describe("regression: a query parameter named __proto__ reached a handler without a query schema as an own key", () => {
  const reached: string[] = [];
  const search = ({ query }: { query: unknown }) => {
    reached.push("search");
    const filters: Record<string, unknown> = {};
    Object.assign(filters, query);
    return json(200, { keys: Object.keys(filters), poisoned: Object.getPrototypeOf(filters) !== Object.prototype });
  };
  const router = createRouter()
    .route("GET", "/search", {}, search)
    .route("GET", "/trusted", { json: { allowPrototypeKeys: true } }, search)
    .route("GET", "/loose", { query: z.looseObject({ q: z.string().optional() }) }, ({ query }) => json(200, query));
  const trusting = createRouter({ json: { allowPrototypeKeys: true } }).route("GET", "/search", {}, search);
  const through = (handler: ReturnType<typeof adapt>) => async (target: string) => {
    const response = await handler(new Request(`http://localhost${target}`));
    return { status: response.status, body: await response.json() };
  };
  const get = through(adapt(router.handler()));

  it.each([
    ["as a name", "/search?__proto__=x"],
    ["as a list, __proto__[]", "/search?__proto__[]=x"],
    ["percent-encoded", "/search?%5F%5Fproto%5F%5F=x"],
    ["as a list with encoded brackets", "/search?__proto__%5B%5D=x"],
    ["given twice", "/search?__proto__=x&__proto__=y"],
    ["without a value", "/search?__proto__"],
    ["after another parameter", "/search?q=1&__proto__=x"],
  ])("refuses one %s with 400 forbidden_member in the query, before the handler", async (_, target) => {
    reached.length = 0;
    expect(await get(target)).toMatchObject({
      status: 400,
      body: { code: "forbidden_member", errors: [{ pointer: "/__proto__", in: "query", code: "proto_key" }] },
    });
    expect(reached).toStrictEqual([]);
  });

  it("accepts constructor as a name and __proto__ as a value: strings set no prototype", async () => {
    expect(await get("/search?constructor=x&q=__proto__")).toStrictEqual({
      status: 200,
      body: { keys: ["constructor", "q"], poisoned: false },
    });
  });

  it("takes it where the operation's or the router's json option allows prototype keys, as a body's", async () => {
    const trusted = [
      await get("/trusted?__proto__[]=x"),
      await through(adapt(trusting.handler()))("/search?__proto__[]=x"),
    ];
    // The handler then gets it as an own key, and an Object.assign of the query sets a prototype: the option's risk.
    for (const response of trusted) expect(response).toStrictEqual({ status: 200, body: { keys: [], poisoned: true } });
  });

  it("refuses it with a query schema too, one that takes others included (query-prototype.test.ts)", async () => {
    expect(await get("/loose?q=1&__proto__=x")).toMatchObject({ status: 400, body: { code: "forbidden_member" } });
  });
});
