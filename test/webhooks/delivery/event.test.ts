import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WebhookDeliveryError } from "../../../src/webhooks/delivery/errors";
import { createEvent, webhookEventSchema } from "../../../src/webhooks/delivery/event";

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof WebhookDeliveryError ? error.code : (error as Error).name;
  }
}

// Objects the hand-checked path must leave to the schema, or copy exactly as the schema does.
const ODD_OBJECTS: readonly unknown[] = [
  Object.assign(Object.create(null), { a: 1 }),
  { constructor: 5, a: 1 },
  { constructor: () => 1 },
  { [Symbol("s")]: 1, a: 1 },
  Object.defineProperty({ a: 1 }, Symbol("hidden"), { value: 2, enumerable: false }),
  Object.defineProperty({ a: 1 }, "hidden", { value: 2, enumerable: false }),
  JSON.parse('{"__proto__": {"polluted": true}, "b": 2}'),
  { 2: "two", 1: "one", z: 0 },
  new (class Order {
    id = "ord_1";
  })(),
  new Date(0),
  new Map([["a", 1]]),
  [1, 2],
];
const oddObject = fc.constantFrom(...ODD_OBJECTS);

describe("createEvent", () => {
  it("builds the envelope webhookEventSchema accepts: evt_ + a v4 UUID, an RFC 3339 timestamp, a copy of the data", () => {
    const data = { id: "ord_1", total: 5 };
    const event = createEvent({ type: "order.created", data, now: Date.UTC(2026, 10, 24) });
    expect(webhookEventSchema.parse(event)).toEqual(event);
    expect(event.id).toMatch(/^evt_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(event.timestamp).toBe("2026-11-24T00:00:00.000Z");
    expect(event.data).toEqual(data);
    expect(event.data).not.toBe(data);
  });

  it("gives every event its own id", () => {
    const ids = new Set(Array.from({ length: 1_000 }, () => createEvent({ type: "a.b", data: {} }).id));
    expect(ids.size).toBe(1_000);
  });

  it.each([
    ["a type that is not <resource>.<action>", { type: "Order Created", data: {} }],
    ["a one-word type", { type: "order", data: {} }],
    ["data that is not an object", { type: "a.b", data: [] as unknown as Record<string, unknown> }],
    ["an empty id", { type: "a.b", data: {}, id: "" }],
    // Regression: the queues refuse these ids at publish; the event was built and only failed there.
    ["an id with a '.' (the signed content's separator)", { type: "a.b", data: {}, id: "ord_1.v2" }],
    ["an id with CR LF", { type: "a.b", data: {}, id: "evt_1\r\nx-injected: 1" }],
    ["an id with a space around it", { type: "a.b", data: {}, id: " evt_1" }],
    ["an id past Latin-1", { type: "a.b", data: {}, id: "evt_☕" }],
    ["a time out of the Date range", { type: "a.b", data: {}, now: 1e20 }],
    ["a time that is not a number", { type: "a.b", data: {}, now: Number.NaN }],
  ])("refuses %s with invalid_event (programmer error)", (_what, input) => {
    expect(codeOf(() => createEvent(input))).toBe("invalid_event");
  });

  it("keeps an own __proto__ key from replacing the data's prototype", () => {
    const data: Record<string, unknown> = { a: 1 };
    Object.defineProperty(data, "__proto__", { value: { polluted: true }, enumerable: true, writable: true });
    const event = createEvent({ type: "a.b", data });
    expect(Object.getPrototypeOf(event.data)).toBe(Object.prototype);
    expect((event.data as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it.each(ODD_OBJECTS.map((data, i) => [i, data]))("agrees with the schema on odd data #%i", (_i, data) => {
    const now = Date.UTC(2026, 10, 25);
    const expected = webhookEventSchema.safeParse({
      id: "evt_x",
      type: "order.created",
      timestamp: new Date(now).toISOString(),
      data,
    });
    const run = () => createEvent({ id: "evt_x", type: "order.created", data: data as Record<string, unknown>, now });
    if (expected.success) {
      const event = run();
      expect(event).toEqual(expected.data);
      expect(Object.keys(event.data)).toEqual(Object.keys(expected.data.data));
      expect(Object.getPrototypeOf(event.data)).toBe(Object.getPrototypeOf(expected.data.data));
    } else expect(codeOf(run)).toBe("invalid_event");
  });

  it("stamps each event with its own time, in any sequence of times (repeated, changing, out of range, invalid)", () => {
    const time = fc.oneof(
      fc.constantFrom(0, Date.UTC(2026, 10, 25), Date.UTC(2026, 10, 25) + 1, 253402300799999, 1e20, Number.NaN, -0),
      fc.integer({ min: -1e15, max: 1e15 }),
    );
    fc.assert(
      fc.property(fc.array(time, { minLength: 1, maxLength: 20 }), (times) => {
        for (const now of times) {
          const date = new Date(now);
          const year = date.getUTCFullYear();
          if (year >= 0 && year <= 9999) {
            expect(createEvent({ type: "a.b", data: {}, now }).timestamp).toBe(date.toISOString());
          } else expect(codeOf(() => createEvent({ type: "a.b", data: {}, now }))).toBe("invalid_event");
        }
      }),
    );
  });

  it("agrees with the schema for any input: the envelope it parses, or invalid_event where the schema refuses", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom("order.created", "a.b.c", "x"), fc.string({ maxLength: 10 })),
        fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.constant(null), fc.jsonValue(), oddObject),
        fc.integer({ min: -1e15, max: 1e15 }),
        fc.oneof(fc.constant("evt_x"), fc.string({ maxLength: 130 }), fc.constant("x".repeat(129))),
        (type, data, now, id) => {
          const candidate = { id, type, timestamp: new Date(now).toISOString(), data };
          const expected = webhookEventSchema.safeParse(candidate);
          const run = () => createEvent({ id, type, data: data as Record<string, unknown>, now });
          if (expected.success) expect(run()).toEqual(expected.data);
          else expect(codeOf(run)).toBe("invalid_event");
        },
      ),
    );
  });
});
