import { z } from "zod";
import { isEventPattern, matchesEventPattern } from "../event-pattern/event-pattern";

/** The longest event type or pattern accepted. */
const MAX_TYPE_LENGTH = 128;

// `<resource>.<action>`: lower-case words joined by dots, at least two of them. No class contains ".", so the
// match is linear.
const EVENT_TYPE = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;
// The same words as a prefix pattern (`order.*`, `invoice.payment.*`).
const TYPE_PREFIX = /^[a-z0-9_]+(\.[a-z0-9_]+)*\.\*$/;

// An expression's source without its ^ and $, to join it with others.
const unanchored = (expression: RegExp) => expression.source.slice(1, -1);

/** `<resource>.<action>`, e.g. `order.created` or `invoice.payment.failed`: lower-case words joined by dots. */
export const eventTypeSchema = z
  .string()
  .max(MAX_TYPE_LENGTH)
  .regex(EVENT_TYPE, "Expected <resource>.<action>, e.g. order.created.");

/** Whether `value` is what {@link eventTypeSchema} accepts, without a parse. */
export function isEventType(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_TYPE_LENGTH && EVENT_TYPE.test(value);
}

/**
 * A subscription pattern an endpoint may register (the event-pattern grammar, with the words of our event types):
 * an event type, `*` (every type), or `<resource>.*` (every action of a resource).
 */
export const eventPatternSchema = z
  .string()
  .max(MAX_TYPE_LENGTH)
  .refine(
    (value) => isEventPattern(value) && (value === "*" || EVENT_TYPE.test(value) || TYPE_PREFIX.test(value)),
    "Expected an event type (order.created), * or <resource>.* (order.*).",
  )
  // For OpenAPI: the same three forms as one pattern, built from the expressions above.
  .meta({ pattern: `^(?:\\*|${unanchored(EVENT_TYPE)}|${unanchored(TYPE_PREFIX)})$` });

/** Whether any of an endpoint's `enabled_events` matches an event type. */
export function subscribesTo(patterns: readonly string[], type: string): boolean {
  for (const pattern of patterns) if (matchesEventPattern(pattern, type)) return true;
  return false;
}
