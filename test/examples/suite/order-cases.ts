import { Validator } from "@seriousme/openapi-schema-validator";
import { expect, it } from "vitest";
import type { RunningShop } from "../shop-harness";

interface OrderJson {
  id: string;
  user_id: string;
  status: string;
  items: { sku: string; quantity: number; unit_price: number }[];
  total: number;
  created_at: string;
  updated_at: string;
}

const ITEMS = [
  { sku: "TEA-1", quantity: 2, unit_price: 450 },
  { sku: "CUP-9", quantity: 1, unit_price: 1299 },
];
const MERGE = { "content-type": "application/merge-patch+json" };

/** The orders of a user: every route, status and header of the issue, and the bad input around them. */
export function orderCases(shop: () => RunningShop): void {
  async function newUser(): Promise<string> {
    const created = await shop().api("POST", "/users", { body: { name: "Buyer", tier: "basic" } });
    return created.json<{ id: string }>().id;
  }
  async function newOrder(userId: string, items = ITEMS): Promise<{ path: string; order: OrderJson; etag: string }> {
    const reply = await shop().api("POST", `/users/${userId}/orders`, { body: { items } });
    expect(reply.status).toBe(201);
    return {
      path: reply.headers.get("location") as string,
      order: reply.json<OrderJson>(),
      etag: reply.headers.get("etag") as string,
    };
  }
  const patch = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    shop().api("PATCH", path, { body, headers: { ...MERGE, ...headers } });

  it("places an order: 201, Location, pending, the total computed by the server", async () => {
    const userId = await newUser();
    const { path, order } = await newOrder(userId);
    expect(path).toBe(`/users/${userId}/orders/${order.id}`);
    expect(order).toMatchObject({ user_id: userId, status: "pending", items: ITEMS, total: 2 * 450 + 1299 });
    expect(Date.parse(order.created_at)).not.toBeNaN();
    expect((await shop().api("GET", path)).json()).toEqual(order);
  });

  it("places one order for two POSTs with one Idempotency-Key, and refuses the key for another body", async () => {
    const userId = await newUser();
    const headers = { "idempotency-key": '"order-attempt-1"' };
    const first = await shop().api("POST", `/users/${userId}/orders`, { body: { items: ITEMS }, headers });
    const again = await shop().api("POST", `/users/${userId}/orders`, { body: { items: ITEMS }, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    for (const name of ["content-type", "etag", "last-modified", "cache-control", "location"]) {
      expect(again.headers.get(name), name).toBe(first.headers.get(name));
    }
    const list = await shop().api("GET", `/users/${userId}/orders`);
    expect(list.json<OrderJson[]>()).toHaveLength(1);
    const reused = await shop().api("POST", `/users/${userId}/orders`, { body: { items: [ITEMS[0]] }, headers });
    expect(reused.status).toBe(422);
    expect(reused.headers.get("content-type")).toBe("application/problem+json");
  });

  const invalidItems: [string, unknown, string][] = [
    ["no items", { items: [] }, "/items"],
    ["a zero quantity", { items: [{ sku: "A", quantity: 0, unit_price: 1 }] }, "/items/0/quantity"],
    ["a fractional price", { items: [{ sku: "A", quantity: 1, unit_price: 1.5 }] }, "/items/0/unit_price"],
    ["a negative price", { items: [{ sku: "A", quantity: 1, unit_price: -1 }] }, "/items/0/unit_price"],
    ["a string quantity", { items: [{ sku: "A", quantity: "2", unit_price: 1 }] }, "/items/0/quantity"],
    ["a client-sent total", { items: ITEMS, total: 1 }, ""],
    ["an unknown item field", { items: [{ sku: "A", quantity: 1, unit_price: 1, discount: 5 }] }, "/items/0"],
    ["items that are not a list", { items: "TEA-1" }, "/items"],
  ];
  for (const [what, body, pointer] of invalidItems) {
    it(`answers 422 for ${what}`, async () => {
      const userId = await newUser();
      const reply = await shop().api("POST", `/users/${userId}/orders`, { body });
      expect(reply.status).toBe(422);
      expect(reply.json<{ errors: { pointer: string }[] }>().errors.map((e) => e.pointer)).toContain(pointer);
    });
  }

  it("answers 400 for malformed JSON and 404 for a user that does not exist", async () => {
    const userId = await newUser();
    const malformed = await shop().api("POST", `/users/${userId}/orders`, { body: "{items:" });
    expect(malformed.status).toBe(400);
    const missing = await shop().api("POST", "/users/usr_missing/orders", { body: { items: ITEMS } });
    expect(missing.status).toBe(404);
    expect((await shop().api("GET", "/users/usr_missing/orders")).status).toBe(404);
  });

  it("lists a user's orders as a JSON array, filtered by status", async () => {
    const userId = await newUser();
    const placed: OrderJson[] = [];
    for (let i = 0; i < 3; i++)
      placed.push((await newOrder(userId, [{ sku: `S${i}`, quantity: 1, unit_price: i }])).order);
    expect((await patch(`/users/${userId}/orders/${placed[1]?.id}`, { status: "paid" })).status).toBe(200);
    const all = await shop().api("GET", `/users/${userId}/orders`);
    expect(all.json<OrderJson[]>().map((o) => o.id)).toEqual(placed.map((o) => o.id));
    const filtered = await shop().api("GET", `/users/${userId}/orders?status=paid`);
    expect(filtered.json<OrderJson[]>()).toEqual([{ ...placed[1], status: "paid", updated_at: expect.any(String) }]);
  });

  it("answers 400 for a bad limit, status, cursor or an unknown query parameter", async () => {
    const userId = await newUser();
    for (const query of ["limit=0", "limit=101", "limit=ten", "status=lost", "cursor=zzzz", "sort=asc"]) {
      const reply = await shop().api("GET", `/users/${userId}/orders?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.headers.get("content-type")).toBe("application/problem+json");
    }
  });

  it("serves the list and the item with validators and answers 304 (If-None-Match, If-Modified-Since)", async () => {
    const userId = await newUser();
    const { path } = await newOrder(userId);
    // Last-Modified goes out once the second of the change is over (settledLastModified).
    shop().advanceClock(1_000);
    for (const target of [path, `/users/${userId}/orders`]) {
      const read = await shop().api("GET", target);
      expect(read.headers.get("cache-control")).toBe("private, no-cache");
      const etag = read.headers.get("etag") as string;
      const lastModified = read.headers.get("last-modified") as string;
      expect(etag).toMatch(/^"/);
      expect(Date.parse(lastModified)).not.toBeNaN();
      expect((await shop().api("GET", target, { headers: { "if-none-match": etag } })).status).toBe(304);
      expect((await shop().api("GET", target, { headers: { "if-modified-since": lastModified } })).status).toBe(304);
      const head = await shop().api("HEAD", target);
      expect(head.status).toBe(200);
      expect(head.headers.get("etag")).toBe(etag);
    }
    // A change makes the list's validators stale.
    const list = await shop().api("GET", `/users/${userId}/orders`);
    await newOrder(userId);
    const after = await shop().api("GET", `/users/${userId}/orders`, {
      headers: { "if-none-match": list.headers.get("etag") as string },
    });
    expect(after.status).toBe(200);
  });

  it("answers a conditional GET of an order: 304 without body fields, 412 for a failing If-Match", async () => {
    const userId = await newUser();
    const { path, etag } = await newOrder(userId);
    const notModified = await shop().api("GET", path, { headers: { "if-none-match": `"other", ${etag}` } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toBe(etag);
    expect(notModified.headers.get("cache-control")).toBe("private, no-cache");
    expect(notModified.headers.get("content-type")).toBeNull();
    // RFC 9110 §13.2.2: a failing If-Match is a 412 on GET too, and beats a matching If-None-Match.
    const stale = await shop().api("GET", path, { headers: { "if-match": '"0"', "if-none-match": etag } });
    expect(stale.status).toBe(412);
    expect(stale.json()).toMatchObject({ code: "precondition_failed", failed: "if-match" });
    const missing = await shop().api("GET", `/users/${userId}/orders/ord_missing`, {
      headers: { "if-none-match": "*" },
    });
    expect(missing.status).toBe(404);
  });

  it("replaces an order with PUT (exact state, total recomputed) and refuses a stale If-Match with 412", async () => {
    const userId = await newUser();
    const { path, etag } = await newOrder(userId);
    const items = [{ sku: "NEW", quantity: 3, unit_price: 100 }];
    const put = await shop().api("PUT", path, { body: { status: "pending", items }, headers: { "if-match": etag } });
    expect(put.status).toBe(200);
    expect(put.json()).toMatchObject({ status: "pending", items, total: 300 });
    const stale = await shop().api("PUT", path, { body: { status: "paid", items }, headers: { "if-match": etag } });
    expect(stale.status).toBe(412);
    expect((await shop().api("GET", path)).json().status).toBe("pending");
    const partial = await shop().api("PUT", path, { body: { items } });
    expect(partial.status).toBe(422);
    const extra = await shop().api("PUT", path, { body: { status: "pending", items, total: 1 } });
    expect(extra.status).toBe(422);
  });

  it("updates with a JSON Merge Patch: 415 for plain JSON, 422 when the result is invalid, 412 when stale", async () => {
    const userId = await newUser();
    const { path, etag } = await newOrder(userId);
    const items = [{ sku: "ONE", quantity: 1, unit_price: 999 }];
    const changed = await patch(path, { items });
    expect(changed.status).toBe(200);
    expect(changed.json()).toMatchObject({ status: "pending", items, total: 999 });
    const plain = await shop().api("PATCH", path, { body: { status: "paid" } });
    expect(plain.status).toBe(415);
    expect(plain.headers.get("accept-patch")).toBe("application/merge-patch+json");
    expect((await patch(path, { items: null })).status).toBe(422);
    expect((await patch(path, { status: "lost" })).status).toBe(422);
    expect((await patch(path, { id: "ord_other" })).status).toBe(422);
    expect((await patch(path, { status: "paid" }, { "if-match": etag })).status).toBe(412);
  });

  it("enforces the status transitions with 409 problems", async () => {
    const userId = await newUser();
    const { path } = await newOrder(userId);
    const illegal = await patch(path, { status: "shipped" });
    expect(illegal.status).toBe(409);
    expect(illegal.json()).toMatchObject({ code: "invalid_transition", from: "pending", to: "shipped" });
    expect((await patch(path, { status: "paid" })).status).toBe(200);
    // Staying put is allowed: a repeated request succeeds like the first.
    expect((await patch(path, { status: "paid" })).status).toBe(200);
    const frozen = await patch(path, { items: [{ sku: "LATE", quantity: 1, unit_price: 1 }] });
    expect(frozen.status).toBe(409);
    expect(frozen.json().code).toBe("order_not_editable");
    expect((await patch(path, { status: "shipped" })).status).toBe(200);
    expect((await patch(path, { status: "cancelled" })).status).toBe(409);
    expect((await patch(path, { status: "delivered" })).status).toBe(200);
    for (const status of ["pending", "paid", "shipped", "cancelled"]) {
      expect((await patch(path, { status })).status, `delivered → ${status}`).toBe(409);
    }
    const other = await newOrder(userId);
    expect((await patch(other.path, { status: "cancelled" })).status).toBe(200);
    expect((await patch(other.path, { status: "paid" })).status).toBe(409);
  });

  it("deletes with 204, then 404; a stale If-Match is refused with 412", async () => {
    const userId = await newUser();
    const { path, etag } = await newOrder(userId);
    await patch(path, { status: "paid" });
    const stale = await shop().api("DELETE", path, { headers: { "if-match": etag } });
    expect(stale.status).toBe(412);
    const current = (await shop().api("GET", path)).headers.get("etag") as string;
    const removed = await shop().api("DELETE", path, { headers: { "if-match": current } });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe("");
    // Regression: a repeated DELETE answered the router's generic not_found, the GET order_not_found.
    for (const method of ["DELETE", "GET", "PUT"]) {
      const gone = await shop().api(method, path, method === "PUT" ? { body: { status: "paid", items: ITEMS } } : {});
      expect(gone.status, method).toBe(404);
      expect(gone.json().code, method).toBe("order_not_found");
    }
  });

  it("answers 404 for an id longer than any id the shop issues, on every method (regression: 422)", async () => {
    const userId = await newUser();
    const { path } = await newOrder(userId);
    const long = "x".repeat(65);
    const user = { name: "N", tier: "basic" };
    const state = { status: "paid", items: ITEMS };
    const cases: [string, string, unknown, string][] = [
      ["GET", `/users/${long}`, undefined, "user_not_found"],
      ["PUT", `/users/${long}`, user, "user_not_found"],
      ["GET", `/users/${long}/orders`, undefined, "user_not_found"],
      ["POST", `/users/${long}/orders`, { items: ITEMS }, "user_not_found"],
      ["GET", `${path}${long}`, undefined, "order_not_found"],
      ["PUT", `${path}${long}`, state, "order_not_found"],
      ["PATCH", `${path}${long}`, { status: "paid" }, "order_not_found"],
      ["DELETE", `${path}${long}`, undefined, "order_not_found"],
      ["GET", `/users/${long}/orders/${long}`, undefined, "order_not_found"],
    ];
    for (const [method, target, body, code] of cases) {
      const reply = await shop().api(method, target, { body, headers: method === "PATCH" ? MERGE : {} });
      expect(reply.status, `${method} ${target}`).toBe(404);
      expect(reply.json().code, `${method} ${target}`).toBe(code);
    }
  });

  it("answers the router's 400 param_too_long problem for an id over 100 characters, 404 up to 100", async () => {
    const userId = await newUser();
    const { path } = await newOrder(userId);
    const state = { status: "paid", items: ITEMS };
    const cases: [string, (id: string) => string, unknown, string, string][] = [
      ["GET", (id) => `/users/${id}`, undefined, "user_id", "user_not_found"],
      ["POST", (id) => `/users/${id}/orders`, { items: ITEMS }, "user_id", "user_not_found"],
      ["GET", (id) => `${path.slice(0, path.lastIndexOf("/"))}/${id}`, undefined, "order_id", "order_not_found"],
      ["PUT", (id) => `${path.slice(0, path.lastIndexOf("/"))}/${id}`, state, "order_id", "order_not_found"],
      [
        "PATCH",
        (id) => `${path.slice(0, path.lastIndexOf("/"))}/${id}`,
        { status: "paid" },
        "order_id",
        "order_not_found",
      ],
      ["DELETE", (id) => `${path.slice(0, path.lastIndexOf("/"))}/${id}`, undefined, "order_id", "order_not_found"],
    ];
    for (const [method, target, body, param, missing] of cases) {
      const headers = method === "PATCH" ? MERGE : {};
      // The OpenAPI document's maxLength: within it an id the shop never issued names nothing (404).
      const within = await shop().api(method, target("x".repeat(100)), { body, headers });
      expect(within.status, `${method} ${param} of 100`).toBe(404);
      expect(within.json().code).toBe(missing);
      // Past it the router refuses the request before any handler runs: an RFC 9457 problem naming the parameter.
      const over = await shop().api(method, target("x".repeat(101)), { body, headers });
      expect(over.status, `${method} ${param} of 101`).toBe(400);
      expect(over.headers.get("content-type")).toBe("application/problem+json");
      expect(over.json()).toMatchObject({ status: 400, code: "param_too_long", param });
    }
  });

  it("evaluates If-Match, If-Unmodified-Since and If-None-Match of a POST against the collection (RFC 9110 §13.1)", async () => {
    const userId = await newUser();
    await newOrder(userId);
    const list = await shop().api("GET", `/users/${userId}/orders`);
    const etag = list.headers.get("etag") as string;
    const post = (headers: Record<string, string>) =>
      shop().api("POST", `/users/${userId}/orders`, { body: { items: ITEMS }, headers });
    const stale: Record<string, string>[] = [
      { "if-match": '"xyz"' },
      { "if-none-match": "*" },
      { "if-none-match": etag },
      { "if-unmodified-since": "Sat, 01 Jan 2000 00:00:00 GMT" },
    ];
    for (const headers of stale) {
      const refused = await post(headers);
      expect(refused.status, JSON.stringify(headers)).toBe(412);
      expect(refused.json().code).toBe("precondition_failed");
    }
    // Nothing was placed: the list is as it was.
    expect((await shop().api("GET", `/users/${userId}/orders`)).headers.get("etag")).toBe(etag);
    const matched = await post({ "if-match": etag });
    expect(matched.status).toBe(201);
    // The collection changed: the tag the client holds is stale now.
    expect((await post({ "if-match": etag })).status).toBe(412);
    expect((await post({ "if-match": "*" })).status).toBe(201);
    // /users has no representation to match (no GET): If-Match fails, If-None-Match: * holds.
    const users = await shop().api("POST", "/users", {
      body: { name: "N", tier: "basic" },
      headers: { "if-match": "*" },
    });
    expect(users.status).toBe(412);
    const fresh = await shop().api("POST", "/users", {
      body: { name: "N", tier: "basic" },
      headers: { "if-none-match": "*" },
    });
    expect(fresh.status).toBe(201);
  });

  it("answers 405 with Allow, 404 for unknown paths, 400 for a malformed path, all as problems", async () => {
    const userId = await newUser();
    const { path } = await newOrder(userId);
    const post = await shop().api("POST", path, { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toContain("PATCH");
    const unknown = await shop().api("GET", "/nothing/here");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/problem+json");
    const malformed = await shop().api("GET", `/users/${userId}/orders/%E0%A4%A`);
    expect(malformed.status).toBe(400);
  });

  it("serves the generated OpenAPI description", async () => {
    const reply = await shop().api("GET", "/openapi.json", { token: undefined });
    expect(reply.status).toBe(200);
    const doc = reply.json<{
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    }>();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths["/users/{user_id}/orders/{order_id}"] ?? {})).toEqual(
      expect.arrayContaining(["get", "put", "patch", "delete"]),
    );
    expect(Object.keys(doc.paths["/users/{user_id}/orders"] ?? {})).toEqual(expect.arrayContaining(["get", "post"]));
    expect(doc.paths["/v1/webhook_endpoints"]).toBeDefined();
    // Both lists: a JSON array of orders, the next page in a Link header, the same query.
    for (const path of ["/users/{user_id}/orders", "/orders"]) {
      const list = doc.paths[path]?.get as {
        parameters: { name: string; in: string; schema: unknown }[];
        responses: Record<string, { content: unknown; headers?: Record<string, unknown> }>;
      };
      expect(list.responses["200"]?.content, path).toEqual({
        "application/json": { schema: { $ref: "#/components/schemas/OrderList" } },
      });
      // Link and Cache-Control from the page, the validators from conditional() (which sends them); /orders varies.
      const headers = ["Link", "Cache-Control", ...(path === "/orders" ? ["Vary"] : []), "ETag", "Last-Modified"];
      expect(Object.keys(list.responses["200"]?.headers ?? {}), path).toEqual(headers);
      const query = list.parameters.filter((p) => p.in === "query").map((p) => p.name);
      expect(query, path).toEqual(["status", "limit", "cursor"]);
      // The limit as clients send it: an integer (in decimal digits, the only form the shop takes), bounded.
      expect(list.parameters.find((p) => p.name === "limit")?.schema, path).toEqual({
        default: 20,
        type: "integer",
        minimum: 1,
        maximum: 100,
      });
    }
    expect(doc.components.schemas.OrderList).toEqual({ type: "array", items: { $ref: "#/components/schemas/Order" } });
    const validator = new Validator();
    expect(await validator.validate(JSON.parse(reply.text))).toMatchObject({ valid: true });
  });

  it("serves /openapi.json with ETag, Last-Modified, Cache-Control and 304 for matching validators", async () => {
    const read = await shop().api("GET", "/openapi.json", { token: undefined });
    const etag = read.headers.get("etag") as string;
    const lastModified = read.headers.get("last-modified") as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(Date.parse(lastModified)).not.toBeNaN();
    expect(read.headers.get("cache-control")).toBe("public, max-age=300");
    const byTag = await shop().api("GET", "/openapi.json", { token: undefined, headers: { "if-none-match": etag } });
    expect(byTag.status).toBe(304);
    expect(byTag.text).toBe("");
    expect(byTag.headers.get("etag")).toBe(etag);
    expect(byTag.headers.get("cache-control")).toBe("public, max-age=300");
    const byDate = await shop().api("GET", "/openapi.json", {
      token: undefined,
      headers: { "if-modified-since": lastModified },
    });
    expect(byDate.status).toBe(304);
    const other = await shop().api("GET", "/openapi.json", { token: undefined, headers: { "if-none-match": '"x"' } });
    expect(other.status).toBe(200);
    expect(other.headers.get("etag")).toBe(etag);
    const head = await shop().api("HEAD", "/openapi.json", { token: undefined });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
  });
}
