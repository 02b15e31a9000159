import { z } from "zod";

/** The longest event type or pattern accepted. */
const MAX_TYPE_LENGTH = 128;

// `<resource>.<action>`: lower-case words joined by dots, at least two of them. No class contains ".", so the
// match is linear.
const EVENT_TYPE = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;

/** `<resource>.<action>`, e.g. `order.created` or `invoice.payment.failed`: lower-case words joined by dots. */
export const eventTypeSchema = z
  .string()
  .max(MAX_TYPE_LENGTH)
  .regex(EVENT_TYPE, "Expected <resource>.<action>, e.g. order.created.");

/** Whether `value` is a string {@link eventTypeSchema} accepts, without building a parse result. */
export function isEventType(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_TYPE_LENGTH && EVENT_TYPE.test(value);
}

/** A subscription pattern: an event type, `*` (every type), or `<resource>.*` (every action of a resource). */
export const eventPatternSchema = z.union([
  z.literal("*"),
  eventTypeSchema,
  z
    .string()
    .max(MAX_TYPE_LENGTH)
    .regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*\.\*$/, "Expected an event type, * or <resource>.*."),
]);

/**
 * Whether one subscription pattern matches an event type.
 * @example matchesEventPattern("order.*", "order.created") // true
 */
export function matchesEventPattern(pattern: string, type: string): boolean {
  if (pattern === "*") return true;
  if (pattern.endsWith(".*")) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

/** Whether any of an endpoint's `enabled_events` matches an event type. */
export function matchesEventType(patterns: readonly string[], type: string): boolean {
  for (const pattern of patterns) if (matchesEventPattern(pattern, type)) return true;
  return false;
}

/** Every pattern that matches `type` — what a store looks up to find the subscribed endpoints. */
export function patternsMatching(type: string): string[] {
  const out = ["*", type];
  const parts = type.split(".");
  for (let i = 1; i < parts.length; i++) out.push(`${parts.slice(0, i).join(".")}.*`);
  return out;
}
