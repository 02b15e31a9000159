import { SignJWT } from "jose";
import { expect, it } from "vitest";
import type { RunningShop } from "../shop-harness";

function secretKey(shop: RunningShop): Uint8Array {
  return new TextEncoder().encode(shop.config.jwtSecret);
}

/** 401 with WWW-Authenticate for missing and bad tokens; 403 past one's own user; admin reaches all. */
export function authCases(shop: () => RunningShop): void {
  async function newUser(): Promise<string> {
    const created = await shop().api("POST", "/users", { body: { name: "Auth", tier: "basic" } });
    expect(created.status).toBe(201);
    return created.json<{ id: string }>().id;
  }

  it("answers 401 with a Bearer challenge when the token is missing", async () => {
    const userId = await newUser();
    const reply = await shop().api("GET", `/users/${userId}`, { token: undefined });
    expect(reply.status).toBe(401);
    expect(reply.headers.get("www-authenticate")).toBe('Bearer realm="shop"');
    expect(reply.headers.get("content-type")).toBe("application/problem+json");
    expect(reply.json().code).toBe("unauthorized");
  });

  const badTokens: [string, (shop: RunningShop) => Promise<string>][] = [
    ["is not a JWT", async () => "not-a-jwt"],
    [
      "is signed with another secret",
      () => new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("admin").sign(new Uint8Array(32).fill(7)),
    ],
    [
      "has no expiry (regression: a token without exp never expired)",
      (s) =>
        new SignJWT({ scope: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject("admin").sign(secretKey(s)),
    ],
    [
      "has expired",
      (s) =>
        new SignJWT({ scope: "admin" })
          .setProtectedHeader({ alg: "HS256" })
          .setSubject("admin")
          .setExpirationTime(Math.floor(Date.now() / 1000) - 600)
          .sign(secretKey(s)),
    ],
    [
      "uses HS384 instead of HS256",
      (s) =>
        new SignJWT({ scope: "admin" }).setProtectedHeader({ alg: "HS384" }).setSubject("admin").sign(secretKey(s)),
    ],
    [
      "has no sub claim",
      (s) => new SignJWT({ scope: "admin" }).setProtectedHeader({ alg: "HS256" }).sign(secretKey(s)),
    ],
    [
      "has a scope that is not a string",
      (s) =>
        new SignJWT({ scope: ["admin"] }).setProtectedHeader({ alg: "HS256" }).setSubject("admin").sign(secretKey(s)),
    ],
  ];
  for (const [why, make] of badTokens) {
    it(`answers 401 invalid_token when the token ${why}`, async () => {
      const reply = await shop().api("GET", "/users/usr_any", { token: await make(shop()) });
      expect(reply.status).toBe(401);
      expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer realm="shop", error="invalid_token"/);
      expect(reply.json().code).toBe("invalid_token");
    });
  }

  it("answers 401 invalid_token for a sub no user id can be (regression: a NUL in sub was a 500 on PostgreSQL)", async () => {
    for (const sub of ["usr_\u0000", "usr_\ud800", "\udc00usr"]) {
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(sub)
        .setExpirationTime("1h")
        .sign(secretKey(shop()));
      for (const path of ["/orders", `/users/${encodeURIComponent("usr_\ufffd")}`]) {
        const reply = await shop().api("GET", path, { token });
        expect(reply.status, `${JSON.stringify(sub)} ${path}`).toBe(401);
        expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer realm="shop", error="invalid_token"/);
        expect(reply.json().code).toBe("invalid_token");
      }
    }
  });

  it("answers 401 for another authentication scheme", async () => {
    const reply = await shop().api("GET", "/users/usr_any", { headers: { authorization: "Basic YWRtaW46YWRtaW4=" } });
    expect(reply.status).toBe(401);
    expect(reply.headers.get("www-authenticate")).toContain("invalid_token");
  });

  it("lets a user reach its own user and orders, and nobody else's (403)", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const aliceToken = await shop().tokenFor(alice);
    const order = await shop().api("POST", `/users/${bob}/orders`, {
      body: { items: [{ sku: "B", quantity: 1, unit_price: 5 }] },
    });
    const bobOrder = order.headers.get("location") as string;
    expect((await shop().api("GET", `/users/${alice}`, { token: aliceToken })).status).toBe(200);
    expect((await shop().api("GET", `/users/${alice}/orders`, { token: aliceToken })).status).toBe(200);
    for (const [method, path, body] of [
      ["GET", `/users/${bob}`, undefined],
      ["PUT", `/users/${bob}`, { name: "Mallory", tier: "gold" }],
      ["GET", `/users/${bob}/orders`, undefined],
      ["POST", `/users/${bob}/orders`, { items: [{ sku: "X", quantity: 1, unit_price: 1 }] }],
      ["GET", bobOrder, undefined],
      ["DELETE", bobOrder, undefined],
      // Not even existence leaks: an order that does not exist is 403 too.
      ["GET", `/users/${bob}/orders/ord_missing`, undefined],
    ] as const) {
      const reply = await shop().api(method, path, { token: aliceToken, body });
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.json().code).toBe("forbidden");
    }
    expect((await shop().api("GET", bobOrder)).status).toBe(200);
  });

  it("lets a customer rename itself but not change its tier (403 forbidden), and repeat its current values", async () => {
    const alice = await newUser();
    const token = await shop().tokenFor(alice);
    const renamed = await shop().api("PUT", `/users/${alice}`, { token, body: { name: "Alice", tier: "basic" } });
    expect(renamed.status).toBe(200);
    const etag = renamed.headers.get("etag");
    const promoted = await shop().api("PUT", `/users/${alice}`, { token, body: { name: "Alice", tier: "gold" } });
    expect(promoted.status).toBe(403);
    expect(promoted.headers.get("content-type")).toBe("application/problem+json");
    expect(promoted.json().code).toBe("forbidden");
    // PUT twice equals PUT once: the current tier (with its spelling trimmed) is no change.
    const again = await shop().api("PUT", `/users/${alice}`, { token, body: { name: "Alice", tier: " basic " } });
    expect(again.status).toBe(200);
    expect(again.headers.get("etag")).toBe(etag);
    expect((await shop().api("GET", `/users/${alice}`)).json()).toMatchObject({ name: "Alice", tier: "basic" });
    expect((await shop().api("PUT", `/users/${alice}`, { body: { name: "Alice", tier: "gold" } })).status).toBe(200);
  });

  it("lets a customer cancel its own pending order, and keep a status, but not pay, ship or deliver it (403)", async () => {
    const alice = await newUser();
    const token = await shop().tokenFor(alice);
    const items = [{ sku: "A", quantity: 1, unit_price: 5 }];
    const place = async () =>
      (await shop().api("POST", `/users/${alice}/orders`, { token, body: { items } })).headers.get(
        "location",
      ) as string;
    const merge = { "content-type": "application/merge-patch+json" };
    const pending = await place();
    // Keeping the status (a repeated PUT, new items while pending) is the customer's.
    const kept = await shop().api("PUT", pending, { token, body: { status: "pending", items: [...items, ...items] } });
    expect(kept.status).toBe(200);
    for (const [method, status] of [
      ["PATCH", "paid"],
      ["PUT", "paid"],
    ] as const) {
      const body = method === "PUT" ? { status, items } : { status };
      const reply = await shop().api(method, pending, { token, body, headers: method === "PATCH" ? merge : {} });
      expect(reply.status, `${method} ${status}`).toBe(403);
      expect(reply.json().code).toBe("forbidden");
    }
    expect((await shop().api("GET", pending, { token })).json()).toMatchObject({ status: "pending" });
    // The admin moves it on; the customer may not follow it further, nor cancel a paid order.
    expect((await shop().api("PATCH", pending, { body: { status: "paid" }, headers: merge })).status).toBe(200);
    for (const status of ["shipped", "cancelled"]) {
      const reply = await shop().api("PATCH", pending, { token, body: { status }, headers: merge });
      expect(reply.status, status).toBe(403);
    }
    expect((await shop().api("PATCH", pending, { body: { status: "shipped" }, headers: merge })).status).toBe(200);
    expect((await shop().api("PATCH", pending, { token, body: { status: "delivered" }, headers: merge })).status).toBe(
      403,
    );
    expect((await shop().api("PATCH", pending, { token, body: { status: "shipped" }, headers: merge })).status).toBe(
      200,
    );
    const cancelled = await shop().api("PATCH", await place(), {
      token,
      body: { status: "cancelled" },
      headers: merge,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: "cancelled" });
  });

  // Regression: a customer's token deleted its own order in any status, a shipped or delivered one too.
  it("lets a customer delete its own pending order only; any other status takes the admin scope (403)", async () => {
    const alice = await newUser();
    const token = await shop().tokenFor(alice);
    const items = [{ sku: "D", quantity: 1, unit_price: 5 }];
    const merge = { "content-type": "application/merge-patch+json" };
    const place = async () =>
      (await shop().api("POST", `/users/${alice}/orders`, { token, body: { items } })).headers.get(
        "location",
      ) as string;
    // A new order the admin moves along `path`.
    const orderIn = async (path: readonly string[]) => {
      const order = await place();
      for (const status of path) {
        const moved = await shop().api("PATCH", order, { body: { status }, headers: merge });
        expect(moved.status, `admin → ${status}`).toBe(200);
      }
      return order;
    };
    const pending = await place();
    const removed = await shop().api("DELETE", pending, { token });
    expect(removed.status).toBe(204);
    expect((await shop().api("GET", pending, { token })).status).toBe(404);
    for (const [status, path] of [
      ["paid", ["paid"]],
      ["shipped", ["paid", "shipped"]],
      ["delivered", ["paid", "shipped", "delivered"]],
      ["cancelled", ["cancelled"]],
    ] as const) {
      const order = await orderIn(path);
      const etag = (await shop().api("GET", order, { token })).headers.get("etag") as string;
      // After the 412, as for a status change: a stale If-Match is refused as stale, whoever asks.
      const stale = await shop().api("DELETE", order, { token, headers: { "if-match": '"stale"' } });
      expect(stale.status, `${status}, stale`).toBe(412);
      const refused = await shop().api("DELETE", order, { token, headers: { "if-match": etag } });
      expect(refused.status, status).toBe(403);
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
      expect(refused.json().code, status).toBe("forbidden");
      const kept = await shop().api("GET", order, { token });
      expect(kept.status, status).toBe(200);
      expect(kept.headers.get("etag"), status).toBe(etag);
      // The admin scope deletes it.
      expect((await shop().api("DELETE", order)).status, `admin deletes ${status}`).toBe(204);
    }
    // A missing order of its own is still the GET's 404, before any scope question.
    const gone = await shop().api("DELETE", pending, { token });
    expect(gone.status).toBe(404);
    expect(gone.json().code).toBe("order_not_found");
  });

  it("lets only an admin create users", async () => {
    const alice = await newUser();
    const reply = await shop().api("POST", "/users", {
      token: await shop().tokenFor(alice),
      body: { name: "Eve", tier: "basic" },
    });
    expect(reply.status).toBe(403);
  });
}
