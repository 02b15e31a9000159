/**
 * createEvent builds the envelope without a full schema parse in the common case: these tests prove the result
 * (or the refusal) is exactly what parsing the envelope with webhookEventSchema gives, for any input.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WebhookDeliveryError } from "../../../src/webhooks/delivery/errors";
import { type CreateEventInput, createEvent, webhookEventSchema } from "../../../src/webhooks/delivery/event";
import { eventTypeSchema, isEventType } from "../../../src/webhooks/delivery/event-type";

/** createEvent as it was first written: build the candidate, then parse it whole. */
function reference(input: CreateEventInput & { id: string }) {
  const candidate = {
    id: input.id,
    type: input.type,
    timestamp: new Date(input.now ?? Date.now()).toISOString(),
    data: input.data,
  };
  const parsed = webhookEventSchema.safeParse(candidate);
  if (!parsed.success)
    throw new WebhookDeliveryError("invalid_event", "Invalid webhook event", { cause: parsed.error });
  return parsed.data;
}

type Outcome = { ok: true; value: unknown; proto: unknown } | { ok: false; error: string };

function outcome(run: () => { data: unknown }): Outcome {
  try {
    const value = run();
    return { ok: true, value, proto: Object.getPrototypeOf(value.data) };
  } catch (error) {
    return { ok: false, error: error instanceof WebhookDeliveryError ? error.code : (error as Error).name };
  }
}

class Custom {
  a = 1;
}
function withProtoKey(): Record<string, unknown> {
  const data: Record<string, unknown> = { a: 1 };
  Object.defineProperty(data, "__proto__", { value: { polluted: true }, enumerable: true, writable: true });
  return data;
}
function nullPrototype(): Record<string, unknown> {
  const data = Object.create(null) as Record<string, unknown>;
  data.b = 2;
  return data;
}
function withSymbol(enumerable: boolean): Record<string, unknown> {
  const data: Record<string, unknown> = { c: 3 };
  Object.defineProperty(data, Symbol("s"), { value: 1, enumerable });
  return data;
}
function withHidden(): Record<string, unknown> {
  const data: Record<string, unknown> = { d: 4 };
  Object.defineProperty(data, "hidden", { value: 5, enumerable: false });
  return data;
}

const unusualData = [
  () => withProtoKey(),
  () => nullPrototype(),
  () => withSymbol(true),
  () => withSymbol(false),
  () => withHidden(),
  () => new Custom(),
  () => ({ constructor: () => undefined }),
  () => ({ constructor: "not a function", e: 1 }),
  () => Object.create({ inherited: 1 }),
  () => [1, 2],
  () => new Map([["a", 1]]),
  () => new Date(0),
  () => null,
  () => "text",
  () => ({ undefinedValue: undefined, 10: "integer keys first", z: 1 }),
];

const typeArb = fc.oneof(
  fc.constantFrom("order.created", "invoice.payment.failed", "a.b", "Order.created", "order", "order.", ".a", "a..b"),
  fc.stringMatching(/^[a-z0-9_.]{0,140}$/),
  fc.string({ maxLength: 20 }),
  fc.constant(42 as unknown as string),
);
const idArb = fc.oneof(fc.string({ maxLength: 140 }), fc.constant(7 as unknown as string));
const dataArb = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 6 }),
  fc.anything({ maxDepth: 2 }),
  fc.constantFrom(...unusualData).map((make) => make()),
);
const nowArb = fc.oneof(
  fc.integer({ min: -62_167_219_200_000 - 10_000, max: 253_402_300_799_999 + 10_000 }),
  // The edges of the four-digit years toISOString writes plainly, and what lies just past them.
  fc.constantFrom(-62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000),
  fc.constantFrom(0, Number.NaN, Number.POSITIVE_INFINITY, 1.5),
);

describe("createEvent agrees with parsing the envelope", () => {
  it("for any id, type, data and time: the same event, or the same refusal", () => {
    fc.assert(
      fc.property(idArb, typeArb, dataArb, nowArb, (id, type, data, now) => {
        const input = { id, type, data: data as Record<string, unknown>, now };
        expect(outcome(() => createEvent(input))).toEqual(outcome(() => reference(input)));
      }),
      { numRuns: 2_000 },
    );
  });

  it.each(unusualData.map((make, i) => [i, make] as const))("for unusual data #%i", (_i, make) => {
    const input = { id: "evt_1", type: "order.created", data: make() as Record<string, unknown>, now: 0 };
    expect(outcome(() => createEvent(input))).toEqual(outcome(() => reference(input)));
  });

  it("copies the data: changing the caller's object later does not change the event", () => {
    const data = { id: "ord_1", status: "pending" };
    const event = createEvent({ type: "order.created", data, now: 0 });
    data.status = "paid";
    expect(event.data).toEqual({ id: "ord_1", status: "pending" });
    expect(webhookEventSchema.parse(event)).toEqual(event);
  });

  it("throws invalid_event for a bad type, id or data", () => {
    const code = (input: CreateEventInput) => outcome(() => createEvent(input));
    expect(code({ type: "Order.Created", data: {} })).toEqual({ ok: false, error: "invalid_event" });
    expect(code({ type: "order.created", data: {}, id: "" })).toEqual({ ok: false, error: "invalid_event" });
    expect(code({ type: "order.created", data: [] as unknown as Record<string, unknown> })).toEqual({
      ok: false,
      error: "invalid_event",
    });
  });

  it("defaults the id to evt_ and a v4 UUID without dashes, and the time to now", () => {
    const before = Date.now();
    const event = createEvent({ type: "order.created", data: {} });
    expect(event.id).toMatch(/^evt_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(Date.parse(event.timestamp)).toBeGreaterThanOrEqual(before);
    expect(createEvent({ type: "order.created", data: {} }).id).not.toBe(event.id);
  });

  it("keeps default ids distinct v4 UUIDs across refills of its random pool (256 ids a refill)", () => {
    const ids = Array.from({ length: 1_000 }, () => createEvent({ type: "order.created", data: {} }).id);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("isEventType", () => {
  it("accepts exactly what eventTypeSchema accepts", () => {
    fc.assert(
      fc.property(fc.oneof(typeArb, fc.anything({ maxDepth: 0 })), (value) => {
        expect(isEventType(value)).toBe(eventTypeSchema.safeParse(value).success);
      }),
      { numRuns: 2_000 },
    );
  });
});
