import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultEventId, defaultEventType, type EventIdentityInput } from "../../../src/webhooks/consumer/index";

const body = new TextEncoder().encode('{"type":"invoice.paid"}');

/** A verified delivery of each scheme, as verify reports it, without any header a provider does not sign. */
const deliveries: Record<string, EventIdentityInput> = {
  "standard-webhooks": {
    scheme: "standard-webhooks",
    id: "msg_1",
    payload: { type: "invoice.paid", id: "evt_1" },
    headers: { "webhook-id": "msg_1" },
    body,
  },
  stripe: { scheme: "stripe", id: "evt_1", payload: { id: "evt_1", type: "invoice.paid" }, headers: {}, body },
  slack: {
    scheme: "slack",
    id: "Ev1",
    payload: { type: "event_callback", event_id: "Ev1", event: { type: "app_mention" } },
    headers: {},
    body,
  },
  github: {
    scheme: "github",
    id: "d-1",
    payload: { action: "opened" },
    headers: { "x-github-delivery": "d-1", "x-github-event": "issues" },
    body,
  },
  shopify: {
    scheme: "shopify",
    id: "wh-1",
    payload: { id: 42 },
    headers: { "x-shopify-webhook-id": "wh-1", "x-shopify-topic": "orders/create", "x-shopify-event-id": "ev-1" },
    body,
  },
};

const expected: Record<string, { id: string; type: string }> = {
  "standard-webhooks": { id: "msg_1", type: "invoice.paid" },
  stripe: { id: "evt_1", type: "invoice.paid" },
  slack: { id: "Ev1", type: "app_mention" },
  github: { id: "d-1", type: "issues.opened" },
  shopify: { id: "ev-1", type: "orders.create" },
};

/** The unsigned identity headers of the other providers, which a replay of a captured delivery could add. */
const FOREIGN: Record<string, readonly string[]> = {
  "standard-webhooks": ["x-shopify-event-id", "x-shopify-topic", "x-github-event"],
  stripe: ["x-shopify-event-id", "x-shopify-topic", "x-github-event"],
  slack: ["x-shopify-event-id", "x-shopify-topic", "x-github-event"],
  github: ["x-shopify-event-id", "x-shopify-topic"],
  shopify: ["x-github-event"],
};

describe("defaultEventId and defaultEventType", () => {
  for (const [scheme, input] of Object.entries(deliveries)) {
    it(`${scheme}: reads the provider's own id and type`, () => {
      expect({ id: defaultEventId(input), type: defaultEventType(input) }).toEqual(expected[scheme]);
    });

    // Regression: a captured Standard Webhooks or Stripe delivery replayed within the tolerance with an unsigned
    // X-Shopify-Event-Id / X-GitHub-Event was stored again as a new event, of a type the sender chose.
    it(`${scheme}: another provider's identity headers change neither the id nor the type (property)`, () => {
      const names = FOREIGN[scheme] as readonly string[];
      fc.assert(
        fc.property(fc.subarray([...names], { minLength: 1 }), fc.string({ minLength: 1 }), (picked, value) => {
          const headers = { ...input.headers, ...Object.fromEntries(picked.map((name) => [name, value])) };
          const replayed = { ...input, headers };
          expect({ id: defaultEventId(replayed), type: defaultEventType(replayed) }).toEqual(expected[scheme]);
        }),
      );
    });
  }

  it("falls back to X-Shopify-Webhook-Id on a Shopify delivery without X-Shopify-Event-Id", () => {
    const input = deliveries.shopify as EventIdentityInput;
    const { "x-shopify-event-id": _, ...headers } = input.headers;
    expect(defaultEventId({ ...input, headers })).toBe("wh-1");
  });
});
