import { type IncomingHttpHeaders, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json } from "../../src/http/message";
import { createServer } from "../../src/node/index";
import { createRouter, type RouterOptions, RoutingError } from "../../src/routing/index";
import { app, newStore } from "./app";

// Every edge case through a real node:http server on 127.0.0.1.
let server: Server;
let strictServer: Server;
const strictStore = newStore();
let base = "";
let strictBase = "";
const errors: unknown[] = [];

function listen(s: Server): Promise<string> {
  return new Promise((resolve) =>
    s.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  server = createServer(app(newStore(), { trailingSlash: "redirect", maxParamLength: 40 }).handler(), {
    onError: (error) => errors.push(error),
  });
  strictServer = createServer(app(strictStore, { validateResponses: true }).handler(), {
    onError: (e) => errors.push(e),
  });
  base = await listen(server);
  strictBase = await listen(strictServer);
});

afterAll(async () => {
  await Promise.all([server, strictServer].map((s) => new Promise((resolve) => s.close(resolve))));
});

async function call(method: string, path: string, body?: unknown, type = "application/json", root = base) {
  const response = await fetch(`${root}${path}`, {
    method,
    redirect: "manual",
    headers: body === undefined ? {} : { "content-type": type },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : undefined };
}

const alice = { name: "Alice", email: "alice@example.com", tags: ["admin"] };

describe("router over node:http", () => {
  describe("POST to a collection creates", () => {
    it("answers 201 with Location and the item, and POST twice creates two", async () => {
      const a = await call("POST", "/users", alice);
      const b = await call("POST", "/users", alice);
      expect(a.status).toBe(201);
      expect(a.headers.get("location")).toBe(`/users/${a.json.id}`);
      expect(a.json).toMatchObject(alice);
      expect(b.json.id).not.toBe(a.json.id);
      const read = await call("GET", a.headers.get("location") as string);
      expect(read.status).toBe(200);
      expect(read.json).toEqual(a.json);
    });

    it("builds a nested Location from the parent's parameters", async () => {
      const user = await call("POST", "/users", alice);
      const order = await call("POST", `/users/${user.json.id}/orders`, { status: "pending", total: 10 });
      expect(order.status).toBe(201);
      expect(order.headers.get("location")).toMatch(new RegExp(`^/users/${user.json.id}/orders/o\\d+$`));
      expect(order.text).toBe("");
    });

    it("answers 422 with field errors for an invalid body", async () => {
      const r = await call("POST", "/users", { name: "", email: "nope", tags: [] });
      expect(r.status).toBe(422);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.json.code).toBe("validation_failed");
      expect(r.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(["/email", "/name"]);
    });

    it("answers 400 for malformed JSON and 415 for a non-JSON body", async () => {
      expect((await call("POST", "/users", "{oops")).json.code).toBe("malformed_json");
      expect((await call("POST", "/users", "name=a", "application/x-www-form-urlencoded")).status).toBe(415);
    });
  });

  describe("GET, HEAD, OPTIONS", () => {
    it("answers HEAD from GET: same status and headers, no body", async () => {
      const user = await call("POST", "/users", alice);
      const get = await call("GET", `/users/${user.json.id}`);
      const head = await call("HEAD", `/users/${user.json.id}`);
      expect(head.status).toBe(200);
      expect(head.text).toBe("");
      expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
      expect(head.headers.get("content-length")).toBe(get.headers.get("content-length"));
      expect(head.headers.get("content-type")).toBe("application/json");
      expect((await call("HEAD", "/users/missing")).status).toBe(404);
    });

    it("answers OPTIONS with 204 and Allow", async () => {
      const r = await call("OPTIONS", "/users/u1");
      expect(r.status).toBe(204);
      expect(r.headers.get("allow")).toBe("GET, HEAD, PUT, DELETE, OPTIONS, PATCH");
      expect((await call("OPTIONS", "/nowhere")).status).toBe(404);
    });

    it("names what PATCH and POST take in the OPTIONS answer (RFC 5789 §3.1, W3C LDP §4.2.3.14)", async () => {
      const item = await call("OPTIONS", "/users/u1");
      expect(item.headers.get("accept-patch")).toBe("application/merge-patch+json");
      expect(item.headers.get("accept-post")).toBeNull();
      const collection = await call("OPTIONS", "/users");
      expect(collection.headers.get("accept-post")).toBe("application/json");
      expect(collection.headers.get("accept-patch")).toBeNull();
      // The same list the operation's 415 names.
      const refused = await call("PATCH", "/users/u1", "{}", "application/json");
      expect(refused.status).toBe(415);
      expect(refused.headers.get("accept-patch")).toBe(item.headers.get("accept-patch"));
    });
  });

  describe("regression: a CORS preflight to /users/ answered 308 under trailingSlash: redirect", () => {
    // Fetch §4.8 (CORS-preflight fetch): a redirect is a network error for a preflight, so the request never went.
    const preflight = { origin: "https://app.example", "access-control-request-method": "POST" };

    it("answers OPTIONS as on the canonical path: 204, its Allow and Accept-Post / Accept-Patch", async () => {
      for (const [sent, canonical] of [
        ["/users/", "/users"],
        ["/users/u1/", "/users/u1"],
      ] as const) {
        const slashed = await fetch(`${base}${sent}`, { method: "OPTIONS", redirect: "manual", headers: preflight });
        const plain = await fetch(`${base}${canonical}`, { method: "OPTIONS", redirect: "manual", headers: preflight });
        expect(slashed.status).toBe(204);
        expect(slashed.headers.get("location")).toBeNull();
        for (const field of ["allow", "accept-post", "accept-patch"]) {
          expect(slashed.headers.get(field)).toBe(plain.headers.get(field));
        }
      }
      const collection = await call("OPTIONS", "/users/");
      expect(collection.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
      expect(collection.headers.get("accept-post")).toBe("application/json");
      const item = await call("OPTIONS", "/users/u1/");
      expect(item.headers.get("accept-patch")).toBe("application/merge-patch+json");
    });

    it("still redirects the other methods with 308", async () => {
      for (const [method, path] of [
        ["POST", "/users/"],
        ["GET", "/users/u1/"],
        ["HEAD", "/users/u1/"],
        ["PATCH", "/users/u1/"],
        ["DELETE", "/users/u1/"],
      ] as const) {
        const r = await call(method, path);
        expect(r.status, `${method} ${path}`).toBe(308);
        expect(r.headers.get("location")).toBe(path.slice(0, -1));
      }
    });
  });

  describe("405 and 404", () => {
    it("answers 405 with Allow when the path exists but the method is not declared", async () => {
      const r = await call("PUT", "/users");
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
      expect(r.json.code).toBe("method_not_allowed");
    });

    it("answers an extension method the router has no route for 405, one node's parser refuses 501 (RFC 9110 §9.1)", async () => {
      // PURGE reaches the router, which answers for its path only; FOO cannot reach any handler behind node's parser.
      const purge = await call("PURGE", "/users");
      expect(purge.status).toBe(405);
      expect(purge.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
      const foo = await call("FOO", "/users");
      expect(foo.status).toBe(501);
      expect(foo.json.code).toBe("method_not_implemented");
    });

    it("answers a 404 problem when no route matches", async () => {
      const r = await call("GET", "/nowhere");
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.json.code).toBe("not_found");
    });
  });

  describe("path edge cases", () => {
    it("decodes parameters and answers 400 for malformed percent-encoding, never a 500", async () => {
      const r = await call("GET", "/static/a%20b/c");
      expect(r.json).toEqual({ path: "a b/c" });
      for (const path of ["/users/%E0%A4%A", "/users/%", "/users/%C0%80", "/static/%ff"]) {
        const bad = await call("GET", path);
        expect(bad.status).toBe(400);
        expect(bad.json.code).toBe("malformed_path");
      }
    });

    it("answers 400 param_too_long over maxParamLength", async () => {
      const r = await call("GET", `/users/${"x".repeat(41)}`);
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ code: "param_too_long", param: "user_id" });
    });

    it("redirects a trailing slash with 308, keeping the query", async () => {
      const r = await call("GET", "/users/?tag=admin");
      expect(r.status).toBe(308);
      expect(r.headers.get("location")).toBe("/users?tag=admin");
    });

    it("answers a params-schema failure with 422 in params", async () => {
      const r = await call("GET", "/users/u1/orders/not-an-order");
      expect(r.status).toBe(422);
      expect(r.json.errors[0]).toMatchObject({ in: "params", pointer: "/order_id" });
    });
  });

  describe("query parameters filter lists", () => {
    it("filters, coerces, and refuses an unknown filter with 400", async () => {
      const listed = await call("GET", "/users?tag=admin&limit=1");
      expect(listed.status).toBe(200);
      expect(listed.json).toHaveLength(1);
      const unknown = await call("GET", "/users?colour=red");
      expect(unknown.status).toBe(400);
      expect(unknown.json).toMatchObject({ code: "unknown_query_parameter", parameters: ["colour"] });
      const bad = await call("GET", "/users?limit=0");
      expect(bad.status).toBe(400);
      expect(bad.json.errors[0]).toMatchObject({ in: "query", pointer: "/limit" });
    });

    it("filters nested lists: /users/{user_id}/orders?status=shipped", async () => {
      const user = await call("POST", "/users", alice);
      const one = await call("POST", `/users/${user.json.id}/orders`, { status: "pending", total: 1 });
      await call("POST", `/users/${user.json.id}/orders`, { status: "pending", total: 2 });
      const ship = await call("POST", `${one.headers.get("location")}/ship`);
      expect(ship.status).toBe(303);
      expect(ship.headers.get("location")).toBe(one.headers.get("location"));
      const shipped = await call("GET", `/users/${user.json.id}/orders?status=shipped`);
      expect(shipped.json.map((o: { total: number }) => o.total)).toEqual([1]);
    });
  });

  describe("PUT, PATCH, DELETE", () => {
    it("PUT replaces wholesale: a partial body is refused, PUT twice equals PUT once", async () => {
      const user = await call("POST", "/users", alice);
      const path = `/users/${user.json.id}`;
      expect((await call("PUT", path, { name: "Bob" })).status).toBe(422);
      const bob = { name: "Bob", email: "bob@example.com", tags: [] };
      const once = await call("PUT", path, bob);
      const twice = await call("PUT", path, bob);
      expect(once.status).toBe(200);
      expect(twice.json).toEqual(once.json);
      expect((await call("GET", path)).json).toEqual({ id: user.json.id, ...bob });
    });

    it("PATCH takes application/merge-patch+json only, removes nulls and validates the result", async () => {
      const user = await call("POST", "/users", { ...alice, tags: ["a", "b"] });
      const path = `/users/${user.json.id}`;
      const wrongType = await call("PATCH", path, { name: "Al" });
      expect(wrongType.status).toBe(415);
      expect(wrongType.headers.get("accept-patch")).toBe("application/merge-patch+json");
      // The body readers' one 415: what was sent and what to send instead.
      expect(wrongType.json.detail).toBe(
        'Content-Type "application/json" is not accepted here; send application/merge-patch+json.',
      );
      const patched = await call("PATCH", path, { name: "Al", tags: ["c"] }, "application/merge-patch+json");
      expect(patched.json).toEqual({ ...user.json, name: "Al", tags: ["c"] });
      const again = await call("PATCH", path, { name: "Al", tags: ["c"] }, "application/merge-patch+json");
      expect(again.json).toEqual(patched.json);
      const invalid = await call("PATCH", path, { email: null }, "application/merge-patch+json");
      expect(invalid.status).toBe(422);
      expect(invalid.json.errors[0]).toMatchObject({ in: "body", pointer: "/email" });
    });

    it("DELETE answers 204, then 404 once gone", async () => {
      const user = await call("POST", "/users", alice);
      const path = `/users/${user.json.id}`;
      const first = await call("DELETE", path);
      expect(first.status).toBe(204);
      expect(first.text).toBe("");
      expect((await call("DELETE", path)).status).toBe(404);
      expect((await call("GET", path)).status).toBe(404);
    });
  });

  describe("middleware and rules", () => {
    it("applies resource middleware to the resource's operations and nested ones only", async () => {
      expect((await call("GET", "/users")).headers.get("x-layer")).toBe("users");
      expect((await call("GET", "/users/u1/orders")).headers.get("x-layer")).toBe("users");
      expect((await call("GET", "/static/x")).headers.get("x-layer")).toBeNull();
    });

    it("answers 500 and reports a RoutingError when validateResponses finds a bad body", async () => {
      // A valid answer passes the check untouched.
      const before = errors.length;
      const ok = await call("POST", "/users", alice, undefined, strictBase);
      expect(ok.status).toBe(201);
      expect((await call("GET", "/users", undefined, undefined, strictBase)).status).toBe(200);
      expect(errors.length).toBe(before);
      // The list's response schema wants users with an email; the store now holds one without.
      strictStore.users.set("u_bad", { id: "u_bad", name: "Bad", email: "not-an-email", tags: [] });
      const bad = await call("GET", "/users", undefined, undefined, strictBase);
      expect(bad.status).toBe(500);
      expect(bad.headers.get("content-type")).toBe("application/problem+json");
      expect(bad.json).toMatchObject({ status: 500, code: "internal_error" });
      expect(bad.text).not.toContain("not-an-email");
      expect(errors.length).toBe(before + 1);
      expect(errors.at(-1)).toBeInstanceOf(RoutingError);
      expect((errors.at(-1) as RoutingError).code).toBe("invalid_response");
      // The same body is served as is where responses are not validated.
      strictStore.users.delete("u_bad");
      expect((await call("GET", "/users", undefined, undefined, strictBase)).status).toBe(200);
    });
  });
});

// The edge-case policy of docs/routing.md, each option through a real node:http server; paths are sent
// byte for byte with node:http (no client-side URL normalization).
describe("edge cases through node:http, per policy", () => {
  const servers: Server[] = [];
  const replaced: unknown[] = [];
  const bases = new Map<string, string>();

  function edgeRouter(options: RouterOptions) {
    const echo = (name: string) => (context: { params: unknown }) => json(200, { route: name, params: context.params });
    return createRouter(options)
      .route("GET", "/users", { name: "users" }, echo("users"))
      .route("GET", "/users/{user_id}", { name: "user" }, echo("user"))
      .route("GET", "/Help/Index", { name: "help" }, echo("help"))
      .route("GET", "/repos/{base}...{head}", { name: "compare" }, echo("compare"))
      .route("GET", "/reports/{name}.json", { name: "report" }, echo("report"))
      .route("GET", "/static/{path*}", { name: "static" }, echo("static"))
      .route("GET", "/files/*", { name: "files" }, echo("files"))
      .resource("/docs/{doc_id}", (docs) => {
        // No body schemas: PUT still reads JSON, PATCH still takes a merge patch.
        docs.replace({}, ({ body }) => {
          replaced.push(body);
          return json(200, { body });
        });
        docs.update({}, ({ patch, merge }) => json(200, { patch, merged: merge({ a: 1, b: { c: 2 } }) }));
      });
  }

  beforeAll(async () => {
    const policies: Record<string, RouterOptions> = {
      strict: { maxParamLength: 10 },
      ignore: { trailingSlash: "ignore", duplicateSlashes: "ignore", caseSensitive: false },
      redirect: { trailingSlash: "redirect", duplicateSlashes: "redirect" },
    };
    for (const [name, options] of Object.entries(policies)) {
      const s = createServer(edgeRouter(options).handler(), { onError: (error) => errors.push(error) });
      servers.push(s);
      bases.set(name, await listen(s));
    }
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  /** Sends `path` exactly as written (no URL parsing on the way). */
  function raw(policy: string, method: string, path: string, body?: string, type?: string) {
    const { port } = new URL(bases.get(policy) as string);
    return new Promise<{ status: number; headers: IncomingHttpHeaders; json: Record<string, unknown> }>(
      (resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            method,
            path,
            headers: type === undefined ? {} : { "content-type": type },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : {} });
            });
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      },
    );
  }

  describe("duplicate slashes", () => {
    it("strict (default): an empty segment matches no parameter → 404", async () => {
      expect((await raw("strict", "GET", "/users//u1")).status).toBe(404);
      expect((await raw("strict", "GET", "//users")).status).toBe(404);
    });

    it("ignore: matched as if the slashes were one", async () => {
      const r = await raw("ignore", "GET", "//users//u1");
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ route: "user", params: { user_id: "u1" } });
    });

    it("redirect: 308 to the merged path, query kept", async () => {
      const r = await raw("redirect", "GET", "/users//u1?x=1");
      expect(r.status).toBe(308);
      expect(r.headers.location).toBe("/users/u1?x=1");
    });
  });

  describe("case", () => {
    it("caseSensitive (default): literals compare as sent (RFC 3986 §6.2.2.1)", async () => {
      expect((await raw("strict", "GET", "/Help/Index")).status).toBe(200);
      expect((await raw("strict", "GET", "/help/index")).status).toBe(404);
      expect((await raw("strict", "GET", "/USERS")).status).toBe(404);
    });

    it("caseSensitive: false folds literals, never parameter values", async () => {
      expect((await raw("ignore", "GET", "/help/INDEX")).json).toMatchObject({ route: "help" });
      expect((await raw("ignore", "GET", "/USERS/AbC")).json).toEqual({ route: "user", params: { user_id: "AbC" } });
    });
  });

  describe("trailing slash", () => {
    it("strict (default): /users/ is not /users, but a wildcard takes an empty rest", async () => {
      expect((await raw("strict", "GET", "/users/")).status).toBe(404);
      expect((await raw("strict", "GET", "/users/u1/")).status).toBe(404);
      expect((await raw("strict", "GET", "/static/")).json).toEqual({ route: "static", params: { path: "" } });
    });

    it("ignore: matched without the slash", async () => {
      expect((await raw("ignore", "GET", "/users/")).json).toMatchObject({ route: "users" });
      expect((await raw("ignore", "GET", "/users/u1/")).json).toEqual({ route: "user", params: { user_id: "u1" } });
    });

    it("redirect: 308 to the path without it, query kept; the root is never redirected", async () => {
      const r = await raw("redirect", "GET", "/users/u1/?tab=orders");
      expect(r.status).toBe(308);
      expect(r.headers.location).toBe("/users/u1?tab=orders");
      expect((await raw("redirect", "GET", "/")).status).toBe(404);
      // A path that matches as sent is not redirected (the wildcard sees its slash).
      expect((await raw("redirect", "GET", "/static/css/")).json).toEqual({
        route: "static",
        params: { path: "css/" },
      });
    });
  });

  describe("composite segments", () => {
    it("splits a segment at its literals; a final literal is the suffix", async () => {
      expect((await raw("strict", "GET", "/repos/main...topic")).json).toEqual({
        route: "compare",
        params: { base: "main", head: "topic" },
      });
      expect((await raw("strict", "GET", "/repos/a%20b...c")).json).toMatchObject({
        params: { base: "a b", head: "c" },
      });
      expect((await raw("strict", "GET", "/reports/q1.2024.json")).json).toEqual({
        route: "report",
        params: { name: "q1.2024" },
      });
    });

    it("answers 404 when a literal is missing or a value would be empty", async () => {
      for (const path of ["/repos/main", "/repos/...topic", "/repos/main...", "/reports/.json", "/reports/x.xml"]) {
        expect((await raw("strict", "GET", path)).status).toBe(404);
      }
    });
  });

  describe("trailing wildcard", () => {
    it("takes the rest of the path, slashes included, decoded", async () => {
      expect((await raw("strict", "GET", "/static/css/site%20x.css")).json).toEqual({
        route: "static",
        params: { path: "css/site x.css" },
      });
      expect((await raw("strict", "GET", "/files/a/b/c")).json).toEqual({ route: "files", params: { "*": "a/b/c" } });
    });

    it("needs its segment", async () => {
      expect((await raw("strict", "GET", "/static")).status).toBe(404);
      expect((await raw("strict", "GET", "/files")).status).toBe(404);
    });
  });

  describe("max parameter length", () => {
    it("counts the decoded value; one more is a 400 param_too_long naming the parameter", async () => {
      expect((await raw("strict", "GET", `/users/${"x".repeat(10)}`)).status).toBe(200);
      expect((await raw("strict", "GET", `/users/${"%41".repeat(10)}`)).json).toMatchObject({
        params: { user_id: "A".repeat(10) },
      });
      const long = await raw("strict", "GET", `/users/${"x".repeat(11)}`);
      expect(long.status).toBe(400);
      expect(long.headers["content-type"]).toBe("application/problem+json");
      expect(long.json).toMatchObject({ code: "param_too_long", param: "user_id" });
      const composite = await raw("strict", "GET", `/repos/${"b".repeat(11)}...h`);
      expect(composite.json).toMatchObject({ code: "param_too_long", param: "base" });
    });

    it("does not limit a wildcard", async () => {
      expect((await raw("strict", "GET", `/static/${"x".repeat(500)}`)).status).toBe(200);
    });
  });

  describe("malformed percent-encoding (RFC 3986 §2.1)", () => {
    it.each([
      ["/users/%", "user_id"],
      ["/users/%zz", "user_id"],
      ["/users/%C0%80", "user_id"],
      ["/users/%E2%9C", "user_id"],
      ["/repos/%E0...b", "base"],
      ["/reports/%.json", "name"],
      ["/static/ok/%ff", "path"],
      // Issue 16: a NUL decodes fine but no store keeps it, and an encoded surrogate is not UTF-8.
      ["/users/%00", "user_id"],
      ["/users/u1%00", "user_id"],
      ["/repos/a%00...b", "base"],
      ["/static/ok/%00", "path"],
      ["/users/%ED%A0%80", "user_id"],
    ])("%s → 400 malformed_path (%s), never a 500", async (path, param) => {
      const before = errors.length;
      const r = await raw("strict", "GET", path);
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ status: 400, code: "malformed_path", param });
      expect(errors.length).toBe(before);
      expect((await raw("strict", "GET", "/users/u1")).status).toBe(200);
    });
  });

  describe("PUT and PATCH without a body schema still read their bodies", () => {
    it("PUT hands any JSON value to the handler as unknown", async () => {
      for (const value of [{ title: "t", tags: ["a"] }, [1, 2], "text", null]) {
        const r = await raw("strict", "PUT", "/docs/d1", JSON.stringify(value), "application/json");
        expect(r.status).toBe(200);
        expect(r.json).toEqual({ body: value });
      }
    });

    it("PUT refuses what is not JSON before the handler runs: 415, 400 malformed, 400 empty", async () => {
      const calls = replaced.length;
      const plain = await raw("strict", "PUT", "/docs/d1", "{oops", "text/plain");
      expect(plain.status).toBe(415);
      expect(plain.json).toMatchObject({ code: "unsupported_media_type" });
      const malformed = await raw("strict", "PUT", "/docs/d1", "{oops", "application/json");
      expect(malformed.status).toBe(400);
      expect(malformed.json).toMatchObject({ code: "malformed_json" });
      const none = await raw("strict", "PUT", "/docs/d1");
      expect(none.status).toBe(400);
      expect(none.json).toMatchObject({ code: "body_required" });
      expect(replaced.length).toBe(calls);
    });

    it("PATCH takes only a merge patch and merges it", async () => {
      const r = await raw("strict", "PATCH", "/docs/d1", '{"b":{"c":null,"d":3}}', "application/merge-patch+json");
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ patch: { b: { c: null, d: 3 } }, merged: { a: 1, b: { d: 3 } } });
      const plain = await raw("strict", "PATCH", "/docs/d1", '{"b":1}', "application/json");
      expect(plain.status).toBe(415);
      expect(plain.headers["accept-patch"]).toBe("application/merge-patch+json");
      const malformed = await raw("strict", "PATCH", "/docs/d1", "{oops", "application/merge-patch+json");
      expect(malformed.json).toMatchObject({ code: "malformed_json" });
    });
  });
});
