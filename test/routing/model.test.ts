import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HttpRequest, HttpResponse } from "../../src/http/message";
import { isHttpProblem } from "../../src/http/problem";
import { app, newStore, type Store } from "./app";

// The method laws (RFC 9110 §9.2) checked on the test app's state, with generated request sequences.
function request(method: string, path: string, body?: unknown, type = "application/json"): HttpRequest {
  const [p = "", search = ""] = path.split("?");
  return {
    method,
    path: p,
    search,
    query: Object.fromEntries(new URLSearchParams(search)),
    headers: body === undefined ? {} : { "content-type": type },
    body: body === undefined ? new Uint8Array(0) : new TextEncoder().encode(JSON.stringify(body)),
  };
}

async function send(store: Store, req: HttpRequest): Promise<HttpResponse> {
  try {
    return await app(store).handler()(req);
  } catch (error) {
    if (isHttpProblem(error)) return error.toResponse();
    throw error;
  }
}

function snapshot(store: Store): string {
  return JSON.stringify({
    users: [...store.users.entries()],
    orders: [...store.orders.entries()].map(([k, v]) => [k, [...v.entries()]]),
    nextId: store.nextId,
  });
}

const user = fc.record({
  name: fc.constantFrom("A", "Bo", "Cy"),
  email: fc.constantFrom("a@example.com", "b@example.com"),
  tags: fc.array(fc.constantFrom("x", "y"), { maxLength: 2 }),
});
const id = fc.constantFrom("u1", "u2", "u3", "u9");
const command = fc.oneof(
  user.map((body) => ["POST", "/users", body] as const),
  fc.tuple(id, user).map(([i, body]) => ["PUT", `/users/${i}`, body] as const),
  fc
    .tuple(id, fc.record({ name: fc.constantFrom("Z", null) }, { requiredKeys: [] }))
    .map(([i, body]) => ["PATCH", `/users/${i}`, body] as const),
  id.map((i) => ["DELETE", `/users/${i}`, undefined] as const),
  fc
    .tuple(id, fc.constantFrom<"pending" | "shipped">("pending", "shipped"))
    .map(([i, status]) => ["POST", `/users/${i}/orders`, { status, total: 3 }] as const),
);
const safe = fc.oneof(
  id.map((i) => ["GET", `/users/${i}`] as const),
  id.map((i) => ["HEAD", `/users/${i}`] as const),
  fc.constantFrom(["GET", "/users"] as const, ["HEAD", "/users?tag=x"] as const, ["GET", "/users/u1/orders"] as const),
  fc.constantFrom(["OPTIONS", "/users/u1"] as const, ["GET", "/users?nope=1"] as const),
);

async function run(store: Store, commands: readonly (readonly [string, string, unknown])[]): Promise<void> {
  for (const [method, path, body] of commands) {
    await send(store, request(method, path, body, method === "PATCH" ? "application/merge-patch+json" : undefined));
  }
}

describe("method laws on the test model", () => {
  it("GET, HEAD and OPTIONS never change state", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { maxLength: 8 }),
        fc.array(safe, { minLength: 1, maxLength: 6 }),
        async (setup, reads) => {
          const store = newStore();
          await run(store, setup);
          const before = snapshot(store);
          for (const [method, path] of reads) await send(store, request(method, path));
          expect(snapshot(store)).toBe(before);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("PUT twice leaves the state of PUT once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 8 }), id, user, async (setup, i, body) => {
        const once = newStore();
        const twice = newStore();
        await run(once, setup);
        await run(twice, setup);
        const first = await send(once, request("PUT", `/users/${i}`, body));
        await send(twice, request("PUT", `/users/${i}`, body));
        const second = await send(twice, request("PUT", `/users/${i}`, body));
        expect(snapshot(twice)).toBe(snapshot(once));
        expect(second.status).toBe(first.status);
      }),
      { numRuns: 60 },
    );
  });

  it("PATCH with a merge patch twice leaves the state of once", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { maxLength: 8 }),
        id,
        fc.record({ name: fc.constantFrom("Q", null) }),
        async (setup, i, patch) => {
          const once = newStore();
          const twice = newStore();
          await run(once, setup);
          await run(twice, setup);
          await run(once, [["PATCH", `/users/${i}`, patch]]);
          await run(twice, [
            ["PATCH", `/users/${i}`, patch],
            ["PATCH", `/users/${i}`, patch],
          ]);
          expect(snapshot(twice)).toBe(snapshot(once));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("POST twice creates two resources", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 8 }), user, async (setup, body) => {
        const store = newStore();
        await run(store, setup);
        const count = store.users.size;
        const a = await send(store, request("POST", "/users", body));
        const b = await send(store, request("POST", "/users", body));
        expect([a.status, b.status]).toEqual([201, 201]);
        expect(a.headers["location"]).not.toBe(b.headers["location"]);
        expect(store.users.size).toBe(count + 2);
      }),
      { numRuns: 60 },
    );
  });

  it("DELETE twice: 204 then 404, and the state of DELETE once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 8 }), id, async (setup, i) => {
        const store = newStore();
        await run(store, setup);
        const existed = store.users.has(i);
        const first = await send(store, request("DELETE", `/users/${i}`));
        const after = snapshot(store);
        const second = await send(store, request("DELETE", `/users/${i}`));
        expect(first.status).toBe(existed ? 204 : 404);
        expect(second.status).toBe(404);
        expect(snapshot(store)).toBe(after);
      }),
      { numRuns: 60 },
    );
  });
});
