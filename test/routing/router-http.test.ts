import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "../../src/node/index";
import { app, newStore } from "./app";

// Every edge case through a real node:http server on 127.0.0.1.
let server: Server;
let strictServer: Server;
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
  strictServer = createServer(app(newStore(), { validateResponses: true }).handler(), {
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
  });

  describe("405 and 404", () => {
    it("answers 405 with Allow when the path exists but the method is not declared", async () => {
      const r = await call("PUT", "/users");
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
      expect(r.json.code).toBe("method_not_allowed");
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
      const before = errors.length;
      // The list's response schema wants full users; the store holds one with a bad email.
      const ok = await call("POST", "/users", alice, undefined, strictBase);
      expect(ok.status).toBe(201);
      expect(errors.length).toBe(before);
    });
  });
});
