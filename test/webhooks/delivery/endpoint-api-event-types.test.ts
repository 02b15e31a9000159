import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { HttpRequest, HttpResponse } from "../../../src/http/message";
import { HttpProblem } from "../../../src/http/problem";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi, type EndpointApiOptions } from "../../../src/webhooks/delivery/endpoint-api";
import { defineEvents } from "../../../src/webhooks/delivery/event-catalog";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { answered } from "./delivery-stores";

const KEY = "sk_test_event_types";
const Order = z
  .object({ id: z.string(), total: z.number().int() })
  .meta({ description: "An order as the API shows it." });
const events = defineEvents({
  "order.created": Order,
  "order.shipped": Order.extend({ carrier: z.enum(["ups", "dhl"]) }),
});

function api(options: Partial<EndpointApiOptions> = {}) {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const router = declareEndpointApi(createRouter(), {
    endpoints,
    queue,
    apiKeys: [KEY],
    resolve: false,
    events,
    ...options,
  });
  return { router, handler: answered(router.handler()) };
}

const get = (path: string, headers: Record<string, string> = {}): HttpRequest => ({
  method: "GET",
  path,
  search: "",
  query: {},
  headers: { authorization: `Bearer ${KEY}`, ...headers },
  body: new Uint8Array(0),
});
// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON documents.
const parse = (response: HttpResponse) => JSON.parse(String(response.body)) as Record<string, any>;

describe("the endpoint API's event types", () => {
  it("lists every type of the catalog, in its order, with the JSON Schema of its data", async () => {
    const { handler } = api();
    const response = await handler(get("/v1/event_types"));
    expect(response.status).toBe(200);
    const body = parse(response);
    expect(body).toMatchObject({ object: "list", has_more: false });
    expect(body.data.map((type: { type: string }) => type.type)).toEqual(["order.created", "order.shipped"]);
    expect(body.data[0]).toEqual({
      object: "event_type",
      type: "order.created",
      description: "An order as the API shows it.",
      schema: {
        type: "object",
        description: "An order as the API shows it.",
        properties: {
          id: { type: "string" },
          total: { type: "integer", minimum: expect.any(Number), maximum: expect.any(Number) },
        },
        required: ["id", "total"],
        additionalProperties: false,
      },
    });
    expect(body.data[1].schema.properties.carrier).toEqual({ type: "string", enum: ["ups", "dhl"] });
    expect(body.data[1].description).toBeNull();
  });

  it("answers one type by name, and 404 event_type_not_found for a name the catalog does not have", async () => {
    const { handler } = api();
    const one = await handler(get("/v1/event_types/order.shipped"));
    expect(one.status).toBe(200);
    expect(parse(one)).toMatchObject({ object: "event_type", type: "order.shipped" });
    for (const name of ["order.refunded", "__proto__", "constructor", "order.*"]) {
      const missing = await handler(get(`/v1/event_types/${encodeURIComponent(name)}`));
      expect(missing.status).toBe(404);
      expect(parse(missing)).toMatchObject({ code: "event_type_not_found" });
    }
  });

  it("tags both answers with a strong ETag and answers a matching If-None-Match with 304 (RFC 9110 §13.1.2)", async () => {
    const { handler } = api();
    for (const path of ["/v1/event_types", "/v1/event_types/order.created"]) {
      const first = await handler(get(path));
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[^"]+"$/);
      expect((await handler(get(path, { "if-none-match": etag }))).status).toBe(304);
      expect((await handler(get(path, { "if-none-match": '"other"' }))).status).toBe(200);
    }
  });

  it("needs the API key, and runs the tenant check, as every route of the API", async () => {
    const { handler } = api({
      tenant: () => {
        throw new HttpProblem({ status: 403, code: "no_tenant", detail: "Not yours." });
      },
    });
    expect((await handler(get("/v1/event_types", { authorization: "Bearer sk_wrong" }))).status).toBe(401);
    expect((await handler(get("/v1/event_types"))).status).toBe(403);
  });

  it("lives beside basePath by default, or at eventTypesPath; false, or a catalog without schemas, declares none", async () => {
    expect((await api({ basePath: "/hooks/endpoints" }).handler(get("/hooks/event_types"))).status).toBe(200);
    expect((await api({ basePath: "/endpoints/" }).handler(get("/event_types"))).status).toBe(200);
    const custom = api({ eventTypesPath: "/v2/webhook_event_types/" }).handler;
    expect((await custom(get("/v2/webhook_event_types/order.created"))).status).toBe(200);
    expect((await custom(get("/v1/event_types"))).status).toBe(404);
    expect((await api({ eventTypesPath: false }).handler(get("/v1/event_types"))).status).toBe(404);
    const plain = { has: (type: string) => type === "order.created", types: ["order.created"] };
    expect((await api({ events: plain }).handler(get("/v1/event_types"))).status).toBe(404);
    expect((await api({ events: undefined }).handler(get("/v1/event_types"))).status).toBe(404);
    expect(() => api({ events: plain, eventTypesPath: "/v1/event_types" })).toThrow(/defineEvents/);
  });

  it("is in the OpenAPI document, its answers described by the WebhookEventType schema", () => {
    const doc = api().router.openapi({ title: "t", version: "1" }) as ReturnType<typeof parse>;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/event_types", "/v1/event_types/{event_type}"]));
    expect(doc.paths["/v1/event_types/{event_type}"].get.responses["404"]).toBeDefined();
    expect(doc.components.schemas.WebhookEventType.required).toEqual(["object", "type", "description", "schema"]);
  });
});
