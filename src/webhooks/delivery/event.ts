import { randomFillSync } from "node:crypto";
import { z } from "zod";
import { WebhookDeliveryError } from "./errors";
import { eventTypeSchema, isEventType } from "./event-type";

/** The envelope every webhook carries: a unique id, a `<resource>.<action>` type, a timestamp and the data. */
export const webhookEventSchema = z.object({
  id: z.string().min(1).max(128),
  type: eventTypeSchema,
  timestamp: z.iso.datetime({ offset: true }),
  data: z.record(z.string(), z.unknown()),
});

/** A webhook event envelope (the JSON body of every delivery). */
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/** Input of {@link createEvent}. */
export interface CreateEventInput {
  type: string;
  data: Record<string, unknown>;
  /** @default "evt_" + a random UUID without dashes */
  id?: string;
  /** Epoch ms. @default Date.now() */
  now?: number;
}

// Times whose toISOString() is the plain `YYYY-MM-DDTHH:mm:ss.sssZ` form (years 0000-9999).
const MIN_ISO_TIME = -62_167_219_200_000;
const MAX_ISO_TIME = 253_402_300_799_999;

// The last time formatted: events published together share their timestamp, so most calls are a comparison.
let lastTime = Number.NaN;
let lastIso = "";

/** `new Date(ms).toISOString()` for a time in MIN_ISO_TIME..MAX_ISO_TIME. */
function isoTime(ms: number): string {
  if (ms !== lastTime) {
    lastIso = new Date(ms).toISOString();
    lastTime = ms;
  }
  return lastIso;
}

// Random bytes drawn 4 KiB at a time, 16 per id: one randomFillSync per 256 events.
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

/** "evt_" and a random (version 4, RFC 9562 §5.4) UUID in hex without dashes: one string, no slicing. */
function newEventId(): string {
  if (poolOffset + 16 > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += 16;
  // RFC 9562 §5.4: version 4 in the high nibble of byte 6, variant 0b10 in the high bits of byte 8.
  POOL[at + 6] = ((POOL[at + 6] as number) & 0x0f) | 0x40;
  POOL[at + 8] = ((POOL[at + 8] as number) & 0x3f) | 0x80;
  return `evt_${POOL.toString("hex", at, at + 16)}`;
}

/**
 * The data as {@link webhookEventSchema} outputs it (a shallow copy of the own enumerable string keys), or
 * `undefined` when only the schema can tell: not an ordinary object, symbol keys, a custom constructor.
 */
function copyOrdinaryRecord(data: unknown): Record<string, unknown> | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const proto = Object.getPrototypeOf(data);
  const ordinary =
    (proto === Object.prototype && data.constructor === Object) || (proto === null && data.constructor === undefined);
  if (!ordinary || Object.getOwnPropertySymbols(data).length > 0) return undefined;
  const source = data as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    // zod's record drops an own "__proto__" key rather than let it replace the copy's prototype.
    if (key !== "__proto__") copy[key] = source[key];
  }
  return copy;
}

/**
 * Builds and validates an event envelope; throws `invalid_event` on a bad type or data (programmer error).
 * The result is what {@link webhookEventSchema} outputs for the envelope: the data is a shallow copy.
 * @example createEvent({ type: "order.created", data: { id: "ord_1" } })
 */
export function createEvent(input: CreateEventInput): WebhookEvent {
  const id = input.id ?? newEventId();
  const now = input.now ?? Date.now();
  // The envelope is built here from its parts, so only the caller's parts need checking; the common case skips
  // a full schema parse and gets the same result. Anything unusual takes the schema, for its exact verdict.
  if (typeof id === "string" && id.length >= 1 && id.length <= 128 && isEventType(input.type)) {
    if (now >= MIN_ISO_TIME && now <= MAX_ISO_TIME) {
      const data = copyOrdinaryRecord(input.data);
      if (data !== undefined) return { id, type: input.type, timestamp: isoTime(now), data };
    }
  }
  const candidate = { id, type: input.type, timestamp: new Date(now).toISOString(), data: input.data };
  const parsed = webhookEventSchema.safeParse(candidate);
  if (!parsed.success) {
    throw new WebhookDeliveryError("invalid_event", `Invalid webhook event: ${parsed.error.issues[0]?.message}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
