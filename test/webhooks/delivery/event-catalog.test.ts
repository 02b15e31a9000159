/**
 * The event catalog: events built type-checked and validated, subscriptions only to types it has, typed and validated
 * consumer handlers, and the OpenAPI `webhooks` object.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRouter } from "../../../src/routing/index";
import { createWebhookProcessor } from "../../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../../src/webhooks/consumer/memory/index";
import { createEndpointAdmin, defineEvents, WebhookDeliveryError } from "../../../src/webhooks/delivery/index";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";

const Order = z.object({ id: z.string(), total: z.int().nonnegative() }).meta({ id: "CatalogOrder" });
const events = defineEvents({ "order.created": Order, "order.shipped": Order });

describe("defineEvents", () => {
  it("builds a validated event of a catalog type", () => {
    const event = events.create("order.created", { id: "ord_1", total: 450 }, { id: "evt_1", now: 0 });
    expect(event).toEqual({
      id: "evt_1",
      type: "order.created",
      timestamp: "1970-01-01T00:00:00.000Z",
      data: { id: "ord_1", total: 450 },
    });
    expect(events.types).toEqual(["order.created", "order.shipped"]);
    expect(events.has("order.created")).toBe(true);
    expect(events.has("order.deleted")).toBe(false);
  });

  it("refuses data that does not match the type's schema, naming the field, and a type it does not have", () => {
    let thrown: unknown;
    try {
      events.create("order.created", { id: "ord_1", total: -1 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WebhookDeliveryError);
    expect((thrown as WebhookDeliveryError).code).toBe("invalid_event");
    expect(String(thrown)).toMatch(/data\.total/);
    const untyped = events.create as (type: string, data: unknown) => unknown; // plain JavaScript
    expect(() => untyped("order.deleted", { id: "x", total: 1 })).toThrow(/not in the event catalog/);
  });

  it.each(["constructor", "toString", "__proto__", "hasOwnProperty", "order.deleted"])(
    "a type outside the catalog (%s) is invalid_event, never a property every object inherits (regression: a bare TypeError)",
    (type) => {
      const untyped = events as unknown as {
        create(type: string, data: unknown): unknown;
        envelope(type: string): unknown;
        webhook(type: string): unknown;
        data(type: string): unknown;
      };
      let thrown: unknown;
      try {
        untyped.create(type, {});
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(WebhookDeliveryError);
      expect((thrown as WebhookDeliveryError).code).toBe("invalid_event");
      expect(() => untyped.envelope(type)).toThrow(/not in the event catalog/);
      expect(() => untyped.webhook(type)).toThrow(/not in the event catalog/);
      expect(untyped.data(type)).toBeUndefined();
    },
  );

  it("refuses a catalog that is not one", () => {
    expect(() => defineEvents({})).toThrow(TypeError);
    expect(() => defineEvents({ Order: Order })).toThrow(/not an event type/);
    expect(() => defineEvents({ "order.created": {} as never })).toThrow(/zod schema/);
  });

  it("gives consumers typed, validated handlers: a mismatch is dead-lettered, an unknown type is left to `unhandled`", async () => {
    const inbox = createMemoryInbox();
    const seen: number[] = [];
    const processor = createWebhookProcessor({ inbox, unhandled: "dead", now: () => 0 }).on(
      "order.shipped",
      events.envelope("order.shipped"),
      ({ event }) => void seen.push(event.payload.data.total),
    );
    const base = { scheme: "standard-webhooks", timestamp: 0, receivedAt: 0 };
    await inbox.add({
      ...base,
      id: "a",
      type: "order.shipped",
      payload: events.create("order.shipped", { id: "o", total: 7 }),
    });
    await inbox.add({
      ...base,
      id: "b",
      type: "order.shipped",
      payload: { id: "b", type: "order.shipped", timestamp: "1970-01-01T00:00:00Z", data: { id: "o" } },
    });
    await inbox.add({ ...base, id: "c", type: "refund.created", payload: { data: {} } });
    expect(await processor.processDue()).toMatchObject({ claimed: 3, done: 1, dead: 2 });
    expect(seen).toEqual([7]);
    const letters = await inbox.deadLetters();
    expect(Object.fromEntries(letters.map((l) => [l.id, l.lastError?.code]))).toEqual({
      b: "payload_invalid",
      c: "no_handler",
    });
  });

  it("lets an endpoint subscribe only to catalog types (or patterns)", async () => {
    const endpoints = createMemoryEndpointStore();
    const admin = createEndpointAdmin({
      endpoints,
      queue: createMemoryDeliveryQueue({ endpoints }),
      urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
      resolve: false,
      events,
    });
    const url = "http://127.0.0.1:4000/hooks";
    expect((await admin.create({ url, enabled_events: ["order.created", "order.*", "*"] })).ok).toBe(true);
    const refused = await admin.create({ url, enabled_events: ["order.created", "order.refunded"] });
    expect(refused).toMatchObject({ ok: false, code: "unknown_event_type", index: 1 });
    expect(refused.ok === false && "detail" in refused ? refused.detail : "").toMatch(/order\.created, order\.shipped/);
  });

  it("describes each type under the OpenAPI document's webhooks, with its envelope and signature headers", () => {
    const doc = createRouter().openapi({ title: "t", version: "1" }, { webhooks: events });
    const post = doc.webhooks?.["order.shipped"]?.["post"] as {
      parameters: { name: string }[];
      requestBody: { content: { "application/json": { schema: { properties: Record<string, unknown> } } } };
    };
    expect(post.parameters.map((p) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    const envelope = post.requestBody.content["application/json"].schema;
    expect(envelope.properties["type"]).toEqual({ type: "string", const: "order.shipped" });
    expect(envelope.properties["data"]).toEqual({ $ref: "#/components/schemas/CatalogOrder" });
    expect(doc.components.schemas["CatalogOrder"]).toBeDefined();
  });
});
