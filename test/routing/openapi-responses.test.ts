import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeMiddleware } from "../../src/http/described";
import { type Handler, type HttpRequest, type HttpResponse, json } from "../../src/http/message";
import { isHttpProblem } from "../../src/http/problem";
import { idempotency, MemoryIdempotencyStore } from "../../src/idempotency/index";
import { createRouter, type Router } from "../../src/routing/index";
import { expectValid, type Loose, operation } from "./openapi-support";

const info = { title: "t", version: "1" };
const encoder = new TextEncoder();

function request(
  method: string,
  path: string,
  options: { search?: string; headers?: Record<string, string>; body?: string } = {},
): HttpRequest {
  const search = options.search ?? "";
  return {
    method,
    path,
    search,
    query: Object.fromEntries(new URLSearchParams(search)),
    headers: options.headers ?? {},
    body: encoder.encode(options.body ?? ""),
  };
}

// What the router answers, a thrown problem rendered as the adapters render it.
async function send(router: Router, req: HttpRequest): Promise<HttpResponse> {
  try {
    return await router.handler()(req);
  } catch (error) {
    if (isHttpProblem(error)) return error.toResponse();
    throw error;
  }
}

const statuses = (op: Loose) => Object.keys(op["responses"]);

describe("a declared 2xx of the kind's own status is merged over the router's", () => {
  const User = z.object({ id: z.string(), name: z.string() });
  const router = createRouter().resource("/users/{user_id}", (users) => {
    users.create(
      { body: User.omit({ id: true }), response: User, responses: { 201: { description: "The new user." } } },
      ({ created, body }) => created("u1", { id: "u1", ...body }),
    );
    users.read(
      {
        response: User,
        responses: { 200: { description: "The user.", headers: { "Cache-Control": { description: "c" } } } },
      },
      () => json(200, { id: "u1", name: "a" }),
    );
  });
  const doc = router.openapi(info);

  it("keeps Location and the response schema of a create's 201", async () => {
    const response = await send(
      router,
      request("POST", "/users", { headers: { "content-type": "application/json" }, body: '{"name":"a"}' }),
    );
    expect(response.status).toBe(201);
    expect(response.headers["location"]).toBe("/users/u1");
    const created = operation(doc, "/users", "post")["responses"]["201"];
    expect(created.description).toBe("The new user.");
    expect(Object.keys(created.headers)).toEqual(["Location", "Content-Location"]);
    expect(created.content["application/json"].schema.required).toEqual(["id", "name"]);
    await expectValid(doc);
  });

  it("adds the declared headers to the 200 and keeps its body schema", () => {
    const ok = operation(doc, "/users/{user_id}", "get")["responses"]["200"];
    expect(ok).toMatchObject({ description: "The user.", headers: { "Cache-Control": { description: "c" } } });
    expect(ok.content["application/json"].schema.properties.name).toEqual({ type: "string" });
  });
});

describe("replace and update answer 200 or 204", () => {
  const User = z.object({ id: z.string(), name: z.string() });
  const router = createRouter()
    .resource("/docs/{doc_id}", (docs) => {
      docs.replace({}, ({ body }) => json(200, body));
      docs.update({}, ({ patch }) => json(200, patch));
    })
    .resource("/users/{user_id}", (users) => {
      users.replace({ body: User, response: User }, ({ body }) => json(200, body));
      users.update({ body: User, responses: { 204: { description: "Saved." } } }, () => ({
        status: 204,
        headers: {},
        body: null,
      }));
    });
  const doc = router.openapi(info);

  it("documents the 200 a handler without a response schema may send (docs/routing.md's PUT did), beside 204", async () => {
    const put = await send(
      router,
      request("PUT", "/docs/1", { headers: { "content-type": "application/json" }, body: '{"a":1}' }),
    );
    expect(put.status).toBe(200);
    expect(statuses(operation(doc, "/docs/{doc_id}", "put")).slice(0, 2)).toEqual(["200", "204"]);
    expect(statuses(operation(doc, "/docs/{doc_id}", "patch")).slice(0, 2)).toEqual(["200", "204"]);
  });

  it("documents only the 200 with a response schema, only the declared 204 when one is declared", async () => {
    expect(statuses(operation(doc, "/users/{user_id}", "put"))).not.toContain("204");
    expect(operation(doc, "/users/{user_id}", "put")["responses"]["200"].content).toBeDefined();
    expect(statuses(operation(doc, "/users/{user_id}", "patch"))[0]).toBe("204");
    expect(statuses(operation(doc, "/users/{user_id}", "patch"))).not.toContain("200");
    await expectValid(doc);
  });
});

describe("every status the router itself sends is declared", () => {
  const router = createRouter()
    .resource("/users/{user_id}", (users) => {
      users.read({}, () => json(200, {}));
      users.replace({}, () => json(200, {}));
      users.update({}, () => json(200, {}));
    })
    .route("GET", "/health", {}, () => json(200, {}));
  const doc = router.openapi(info);
  const cases: [string, HttpRequest, string, string][] = [
    ["an undecodable path parameter", request("GET", "/users/%ZZ"), "/users/{user_id}", "get"],
    ["an over-long path parameter", request("GET", `/users/${"a".repeat(101)}`), "/users/{user_id}", "get"],
    ["a malformed query", request("GET", "/users/1", { search: "x=%ZZ" }), "/users/{user_id}", "get"],
    ["a malformed query without parameters", request("GET", "/health", { search: "x=%ZZ" }), "/health", "get"],
    [
      "a NUL in a PUT body without a body schema",
      request("PUT", "/users/1", { headers: { "content-type": "application/json" }, body: '{"a":"\\u0000"}' }),
      "/users/{user_id}",
      "put",
    ],
    [
      "a lone surrogate in a merge patch without a body schema",
      request("PATCH", "/users/1", {
        headers: { "content-type": "application/merge-patch+json" },
        body: '{"a":"\\ud800"}',
      }),
      "/users/{user_id}",
      "patch",
    ],
    [
      "a PATCH that is not a merge patch",
      request("PATCH", "/users/1", { headers: { "content-type": "application/json" }, body: "{}" }),
      "/users/{user_id}",
      "patch",
    ],
  ];

  it.each(cases)("%s", async (_, req, path, method) => {
    const response = await send(router, req);
    expect(response.status).toBeGreaterThanOrEqual(400);
    const declared = operation(doc, path, method)["responses"][String(response.status)];
    expect(declared?.content?.["application/problem+json"]).toBeDefined();
  });

  it("declares Accept-Patch on a PATCH's 415 (RFC 5789 §3.1)", async () => {
    const response = await send(router, cases[6]![1]);
    expect(response.headers["accept-patch"]).toBe("application/merge-patch+json");
    expect(operation(doc, "/users/{user_id}", "patch")["responses"]["415"].headers).toEqual({
      "Accept-Patch": {
        description: expect.any(String),
        schema: { type: "string", const: "application/merge-patch+json" },
      },
      "Accept-Encoding": { description: expect.any(String), schema: { type: "string", const: "identity" } },
    });
    await expectValid(doc);
  });
});

describe("regression: header fields the router sends that its document left out", () => {
  const Item = z.object({ id: z.string(), name: z.string() });
  const router = createRouter()
    .resource("/items/{item_id}", (items) => {
      items.create({ body: Item.omit({ id: true }), response: Item }, ({ created, body }) =>
        created("i1", { id: "i1", ...body }),
      );
      items.update({ body: Item }, ({ merge }) => json(200, merge({ id: "i1", name: "a" })));
    })
    .route("POST", "/forms", { body: z.object({ a: z.string() }), form: true }, () => json(200, {}));
  const doc = router.openapi(info);
  const send415 = (method: string, path: string, headers: Record<string, string>) =>
    send(router, request(method, path, { headers, body: '{"name":"a"}' }));
  const plain = { "content-type": "text/plain" };
  const gzip = { "content-type": "application/json", "content-encoding": "gzip" };
  const codedPatch = { "content-type": "application/merge-patch+json", "content-encoding": "br" };

  it.each([
    ["a create's 201 with its body (Content-Location)", "/items", "POST", { "content-type": "application/json" }],
    ["a JSON body of another media type (Accept-Post, Accept-Patch)", "/items", "POST", plain],
    ["a form body of another media type", "/forms", "POST", plain],
    ["a coded body (Accept-Encoding)", "/items", "POST", gzip],
    ["a coded merge patch", "/items/{item_id}", "PATCH", codedPatch],
  ] as const)("%s", async (_, path, method, headers) => {
    const response = await send415(method, path.replace("{item_id}", "i1"), headers);
    const sent = Object.keys(response.headers).filter((name) => name !== "content-type");
    expect(sent.length).toBeGreaterThan(0);
    const declared = operation(doc, path, method.toLowerCase())["responses"][String(response.status)].headers;
    expect(Object.keys(declared ?? {}).map((name) => name.toLowerCase())).toEqual(expect.arrayContaining(sent));
    await expectValid(doc);
  });

  it("regression: a PUT's 415 neither sends nor declares Accept-Post or Accept-Patch (it said application/json)", async () => {
    const things = createRouter().resource("/things/{thing_id}", (r) => {
      r.replace({ body: Item }, ({ body }) => json(200, body));
    });
    const response = await send(things, request("PUT", "/things/t1", { headers: plain, body: '{"id":"t1"}' }));
    expect(response.status).toBe(415);
    expect(Object.keys(response.headers).filter((name) => name.startsWith("accept-"))).toEqual([]);
    const declared = operation(things.openapi(info), "/things/{thing_id}", "put")["responses"]["415"].headers;
    expect(Object.keys(declared ?? {})).toEqual(["Accept-Encoding"]);
  });
});

describe("two sources describing one status", () => {
  it("join the router's 400 and 422 with idempotency's instead of replacing them", async () => {
    const router = createRouter()
      .use(idempotency({ store: new MemoryIdempotencyStore(), identify: () => "me" }))
      .route("POST", "/orders", { body: z.object({ n: z.number() }) }, () => json(200, {}));
    const responses = operation(router.openapi(info), "/orders", "post")["responses"];
    expect(responses["400"].description).toContain("the body is empty, malformed");
    expect(responses["400"].description).toContain("Idempotency-Key is malformed");
    expect(responses["422"].description).toContain("the body fails its schema");
    expect(responses["422"].description).toContain("Idempotency-Key was used with another request");
    await expectValid(router.openapi(info));
  });

  it("keep a middleware's headers when the operation declares the same status", () => {
    const busy = describeMiddleware((next: Handler) => next, {
      responses: { 409: { description: "Busy.", headers: { "Retry-After": { description: "s" } } } },
    });
    const doc = createRouter()
      .use(busy)
      .route("POST", "/jobs", { responses: { 409: { description: "Already done." } } }, () => json(200, {}))
      .openapi(info);
    expect(operation(doc, "/jobs", "post")["responses"]["409"]).toMatchObject({
      description: "Busy. Already done.",
      headers: { "Retry-After": { description: "s" } },
      content: { "application/problem+json": expect.any(Object) },
    });
  });
});

describe("the 400 of a query schema that takes other parameters (looseObject, catchall)", () => {
  it("says an unknown parameter is refused only where it is", () => {
    const doc = createRouter()
      .route("GET", "/loose", { query: z.looseObject({ q: z.string() }) }, () => json(200, {}))
      .route("GET", "/plain", { query: z.object({ q: z.string() }) }, () => json(200, {}))
      .openapi({ title: "t", version: "1" });
    expect(operation(doc, "/loose", "get")["responses"]["400"].description).not.toContain("unknown parameter");
    expect(operation(doc, "/plain", "get")["responses"]["400"].description).toContain("unknown parameter");
  });
});

describe("regression: the router's 400 and 422 name every code it answers (forbidden_member, duplicate_member)", () => {
  const Item = z.object({ name: z.string() });
  const FORM = "application/x-www-form-urlencoded";
  const router = createRouter()
    .route("GET", "/health", {}, () => json(200, {}))
    .route("POST", "/items", { body: Item }, () => json(200, {}))
    .route("POST", "/loose", { body: Item, json: { allowPrototypeKeys: true, allowDuplicateMembers: true } }, () =>
      json(200, {}),
    )
    .route("POST", "/forms", { body: Item, form: true, requestMediaTypes: [FORM] }, () => json(200, {}))
    .resource("/docs/{doc_id}", (docs) => {
      docs.update({}, ({ patch }) => json(200, patch));
    });
  const doc = router.openapi(info);
  const described = (path: string, method: string, status: number): string =>
    operation(doc, path, method)["responses"][String(status)]?.description ?? "";
  const jsonType = { "content-type": "application/json" };

  it.each([
    ["a __proto__ query parameter", "GET", "/health", { search: "__proto__=x" }, 400, "forbidden_member"],
    ["a __proto__ member", "POST", "/items", { headers: jsonType, body: '{"__proto__":{}}' }, 422, "forbidden_member"],
    [
      "a member named twice",
      "POST",
      "/items",
      { headers: jsonType, body: '{"name":"a","name":"b"}' },
      422,
      "duplicate_member",
    ],
    ["a body nested too deep", "POST", "/items", { headers: jsonType, body: "[".repeat(65) }, 400, "json_too_deep"],
    ["a lone surrogate", "POST", "/items", { headers: jsonType, body: '{"name":"\\ud800"}' }, 422, "invalid_string"],
    [
      "a __proto__ form field",
      "POST",
      "/forms",
      { headers: { "content-type": FORM }, body: "__proto__=a" },
      422,
      "forbidden_member",
    ],
    [
      "a merge patch naming a member twice",
      "PATCH",
      "/docs/d1",
      { headers: { "content-type": "application/merge-patch+json" }, body: '{"a":1,"a":null}' },
      422,
      "duplicate_member",
    ],
  ] as const)("%s: answered and documented", async (_, method, path, options, status, code) => {
    const response = await send(router, request(method, path, options));
    expect(response.status).toBe(status);
    expect(JSON.parse(response.body as string).code).toBe(code);
    const documented = path === "/docs/d1" ? "/docs/{doc_id}" : path;
    expect(described(documented, method.toLowerCase(), status)).toContain(`\`${code}\``);
  });

  it("lists neither code where the operation's json option lets them through", async () => {
    const response = await send(
      router,
      request("POST", "/loose", { headers: jsonType, body: '{"name":"a","name":"b"}' }),
    );
    expect(response.status).toBe(200);
    expect(described("/loose", "post", 422)).not.toContain("`forbidden_member`");
    expect(described("/loose", "post", 422)).not.toContain("`duplicate_member`");
    expect(described("/loose", "post", 400)).not.toContain("`forbidden_member`");
    expect(described("/loose", "post", 422)).toContain("`invalid_string`");
    await expectValid(doc);
  });

  it("lists neither code, nor NUL, where the router's json option lets them through", () => {
    const open = createRouter({ json: { allowPrototypeKeys: true, allowDuplicateMembers: true, allowNul: true } })
      .route("POST", "/items", { body: Item }, () => json(200, {}))
      .route("POST", "/forms", { body: Item, form: true, requestMediaTypes: [FORM] }, () => json(200, {}))
      .openapi(info);
    const items = operation(open, "/items", "post")["responses"];
    expect(items["400"].description).not.toContain("`forbidden_member`");
    expect(items["422"].description).not.toMatch(/`forbidden_member`|`duplicate_member`|NUL/);
    expect(items["422"].description).toContain("lone surrogate");
    // A form's text is UTF-8 throughout: with NUL allowed, only its schema is left to fail.
    expect(operation(open, "/forms", "post")["responses"]["422"].description).not.toContain("`invalid_string`");
  });

  it("a form-only body: no duplicate_member or json_too_deep (a repeated field is a list), malformed_form", () => {
    expect(described("/forms", "post", 422)).not.toContain("`duplicate_member`");
    expect(described("/forms", "post", 400)).not.toContain("`json_too_deep`");
    expect(described("/forms", "post", 400)).toContain("`malformed_form`");
    expect(described("/forms", "post", 400)).not.toContain("`malformed_json`");
    expect(described("/items", "post", 400)).not.toContain("`malformed_form`");
  });
});
