/**
 * The shop's `/openapi.json` tells the truth: every status a route answered during the suite is declared for that
 * route, the seven events are under `webhooks`, and the security schemes are declared and applied.
 */
import { expect, it } from "vitest";
import type { RunningShop } from "../shop-harness";

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
  security?: Record<string, string[]>[];
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
  components: { securitySchemes: Record<string, unknown> };
}

export function documentCases(shop: () => RunningShop): void {
  const document = async () => (await shop().api("GET", "/openapi.json", { token: undefined })).json<Document>();

  it("declares, for every route, every status the suite received from it", async () => {
    const doc = await document();
    const declared = new Map<string, Set<string>>();
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item)) {
        declared.set(operation.operationId, new Set(Object.keys(operation.responses)));
      }
    }
    const undeclared: string[] = [];
    let seen = 0;
    for (const [name, statuses] of shop().statuses) {
      // HEAD is answered from GET's operation (RFC 9110 §9.3.2) and has no entry of its own.
      const responses = declared.get(name);
      if (responses === undefined) {
        undeclared.push(`${name}: not in the document`);
        continue;
      }
      for (const status of statuses) {
        seen++;
        if (!responses.has(String(status)) && !responses.has(`${String(status)[0]}XX`) && !responses.has("default")) {
          undeclared.push(`${name} ${status}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(40); // the suite did reach the routes
    expect(undeclared).toEqual([]);
  });

  it("declares, for every route and status, the header fields the shop sent with it (regression: ETag of a write)", async () => {
    const doc = await document();
    const operations = new Map<string, Operation>();
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item)) operations.set(operation.operationId, operation);
    }
    // The fields the shop's handlers and middleware set; the router's own (Content-Location of a 201, Accept-* of a
    // 415) are its tests' business.
    const owned = ["etag", "last-modified", "cache-control", "vary", "link", "location", "idempotent-replayed"];
    const undeclared: string[] = [];
    let seen = 0;
    for (const [key, fields] of shop().headersSent) {
      const [name, status] = key.split(" ") as [string, string];
      const response = operations.get(name)?.responses[status];
      if (response === undefined) continue; // an undeclared status: the case above reports it
      const declared = new Set(Object.keys(response.headers ?? {}).map((field) => field.toLowerCase()));
      for (const field of fields) {
        if (!owned.includes(field)) continue;
        seen++;
        if (!declared.has(field)) undeclared.push(`${key}: ${field}`);
      }
    }
    expect(seen).toBeGreaterThan(40);
    expect(undeclared).toEqual([]);
  });

  it("declares Idempotent-Replayed on every refusal a POST replays (regression: a replayed 4xx sent an undeclared field)", async () => {
    const api = shop().api;
    const user = (await api("POST", "/users", { body: { name: "Replayed", tier: "basic" } })).json<{ id: string }>();
    const text = { "content-type": "text/plain" };
    // Each refusal is stored under its key and answered again, byte for byte, with Idempotent-Replayed: true.
    const refusals: [string, string, unknown, Record<string, string>, number][] = [
      ["users.create", "/users", "{", {}, 400],
      ["users.create", "/users", "name=Ada", text, 415],
      ["users.create", "/users", { name: "" }, {}, 422],
      ["users.orders.create", `/users/${user.id}/orders`, "{", {}, 400],
      [
        "users.orders.create",
        "/users/usr_missing/orders",
        { items: [{ sku: "A", quantity: 1, unit_price: 1 }] },
        {},
        404,
      ],
      ["users.orders.create", `/users/${user.id}/orders`, "items", text, 415],
      ["users.orders.create", `/users/${user.id}/orders`, { items: [] }, {}, 422],
    ];
    const doc = await document();
    const operations = new Map<string, Operation>();
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item)) operations.set(operation.operationId, operation);
    }
    const undeclared: string[] = [];
    for (const [name, path, body, headers, status] of refusals) {
      const send = { body, headers: { ...headers, "idempotency-key": `"refused-${name}-${status}"` } };
      expect((await api("POST", path, send)).status, `${name} ${status}`).toBe(status);
      const again = await api("POST", path, send);
      expect(again.status, `${name} ${status}`).toBe(status);
      expect(again.headers.get("idempotent-replayed"), `${name} ${status}`).toBe("true");
      const declared = Object.keys(operations.get(name)?.responses[String(status)]?.headers ?? {});
      if (!declared.includes("Idempotent-Replayed")) undeclared.push(`${name} ${status}`);
    }
    expect(undeclared).toEqual([]);
  });

  it("declares If-None-Match on every write it refuses with 412 for it (regression: only If-Match was declared)", async () => {
    const api = shop().api;
    const user = (await api("POST", "/users", { body: { name: "Guarded", tier: "basic" } })).json<{ id: string }>();
    const placed = await api("POST", `/users/${user.id}/orders`, {
      body: { items: [{ sku: "G", quantity: 1, unit_price: 1 }] },
    });
    const order = placed.headers.get("location") as string;
    const writes: [string, string, string, Record<string, unknown>, Record<string, string>][] = [
      ["users.replace", "PUT", `/users/${user.id}`, { name: "Changed", tier: "basic" }, {}],
      ["users.orders.replace", "PUT", order, { status: "paid", items: [{ sku: "G", quantity: 1, unit_price: 1 }] }, {}],
      ["users.orders.update", "PATCH", order, { status: "paid" }, { "content-type": "application/merge-patch+json" }],
      ["users.orders.remove", "DELETE", order, {}, {}],
    ];
    const doc = await document();
    const operations = new Map<string, Operation>();
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item)) operations.set(operation.operationId, operation);
    }
    const undeclared: string[] = [];
    for (const [name, method, path, body, headers] of writes) {
      // RFC 9110 §13.1.2: "*" matches any current representation, so the write is refused and nothing changes.
      const send = { ...(method === "DELETE" ? {} : { body }), headers: { ...headers, "if-none-match": "*" } };
      const refused = await api(method, path, send);
      expect(refused.status, name).toBe(412);
      expect(refused.json().failed, name).toBe("if-none-match");
      const header = operations.get(name)?.parameters?.find((p) => p.in === "header" && p.name === "If-None-Match");
      if (header === undefined) undeclared.push(name);
    }
    expect((await api("GET", `/users/${user.id}`)).json().name).toBe("Guarded");
    expect((await api("GET", order)).json().status).toBe("pending");
    expect(undeclared).toEqual([]);
  });

  it("lists the seven events under webhooks, each with its data schema", async () => {
    const doc = await document();
    expect(Object.keys(doc.webhooks).sort()).toEqual([
      "order.cancelled",
      "order.created",
      "order.deleted",
      "order.shipped",
      "order.updated",
      "user.created",
      "user.updated",
    ]);
    const body = doc.webhooks["order.shipped"]?.post.requestBody.content["application/json"]?.schema as {
      properties: { type: unknown; data: unknown };
    };
    expect(body.properties.type).toEqual({ type: "string", const: "order.shipped" });
    expect(body.properties.data).toEqual({ $ref: "#/components/schemas/Order" }); // the same Order as the API
  });

  it("declares the bearer JWT and the API key, and applies each where it is enforced", async () => {
    const doc = await document();
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["bearerAuth", "webhookApiKey"]);
    expect(doc.paths["/users/{user_id}/orders/{order_id}"]?.get?.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths["/v1/webhook_endpoints"]?.post?.security).toEqual([{ webhookApiKey: [] }]);
    expect(doc.paths["/v1/event_types"]?.get?.security).toEqual([{ webhookApiKey: [] }]);
    const put = doc.paths["/users/{user_id}/orders/{order_id}"]?.put?.responses ?? {};
    expect(Object.keys(put)).toEqual(expect.arrayContaining(["200", "401", "403", "409", "412", "413", "415", "422"]));
  });

  it("declares the preconditions a create evaluates against its collection, and their 412", async () => {
    const doc = await document();
    for (const path of ["/users", "/users/{user_id}/orders"]) {
      const post = doc.paths[path]?.post;
      expect(Object.keys(post?.responses ?? {}), path).toEqual(expect.arrayContaining(["201", "412"]));
      const headers = (post?.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name);
      expect(headers, path).toEqual(expect.arrayContaining(["If-Match", "If-None-Match", "If-Unmodified-Since"]));
    }
  });
}
