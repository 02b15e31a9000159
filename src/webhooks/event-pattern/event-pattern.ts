/**
 * The one event-pattern grammar of the webhook modules, for endpoint subscriptions (provider side) and event
 * handlers (consumer side):
 *   pattern = "*" / type / type ".*"
 *   type    = segment *( "." segment )
 *   segment = 1*( any character but "." "*" and white space )
 * `*` matches every type; `order.*` every type under `order.` (`order.shipped`, `order.line.added`, not `order`);
 * any other pattern the one type it names.
 */

const SEGMENT = /^[^.*\s]+$/;

/** Whether `pattern` is a pattern of the grammar above. */
export function isEventPattern(pattern: unknown): pattern is string {
  if (typeof pattern !== "string") return false;
  if (pattern === "*") return true;
  const segments = pattern.split(".");
  const last = segments.length - 1;
  return segments.every((segment, i) => SEGMENT.test(segment) || (i === last && i > 0 && segment === "*"));
}

/**
 * Whether a pattern matches an event type.
 * @example matchesEventPattern("order.*", "order.created") // true
 */
export function matchesEventPattern(pattern: string, type: string): boolean {
  if (pattern === "*") return true;
  // "order.*" keeps its dot: it matches "order.x", not "orders.x" or "order".
  if (pattern.endsWith(".*")) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

/**
 * Every pattern that matches `type`, most specific first: what a store looks up to find the subscribers. One pattern
 * per dot, each as long as its prefix: meant for event types as `createEvent` checks them (128 characters at most),
 * never for a type as received (`EventRouter.match` does not build them).
 */
export function patternsMatching(type: string): string[] {
  const out = [type];
  for (let dot = type.lastIndexOf("."); dot > 0; dot = type.lastIndexOf(".", dot - 1)) {
    out.push(`${type.slice(0, dot)}.*`);
  }
  out.push("*");
  return out;
}
