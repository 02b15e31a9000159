/**
 * The shop's `/openapi.json` tells the truth: every status a route answered during the suite is declared for that
 * route, the seven events are under `webhooks`, and the security schemes are declared and applied.
 */
import { expect, it } from "vitest";
import type { RunningShop } from "../shop-harness";

interface Operation {
  operationId: string;
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
}
