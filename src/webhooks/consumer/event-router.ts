/**
 * Event-type patterns: an exact type (`order.shipped`), a prefix ending in `.*` (`order.*`, which
 * matches `order.shipped` and `order.line.added` but not `order` itself), or `*` for any type.
 * One event runs one handler — the most specific match — so a retry never re-runs a sibling that
 * already succeeded: exact beats prefix, a longer prefix beats a shorter one, `*` comes last.
 */

const SEGMENT = /^[^.*\s]+$/;

/** Whether `pattern` is a valid event-type pattern. */
export function isEventPattern(pattern: string): boolean {
  if (pattern === "*") return true;
  const segments = pattern.split(".");
  const last = segments.length - 1;
  return segments.every((segment, i) => SEGMENT.test(segment) || (i === last && i > 0 && segment === "*"));
}

/** Routes event types to values registered under patterns. */
export class EventRouter<T> {
  readonly #exact = new Map<string, T>();
  readonly #prefixes = new Map<string, T>();
  #any: T | undefined;

  /** Registers `value` under `pattern`; a malformed or repeated pattern is a TypeError. */
  add(pattern: string, value: T): void {
    if (typeof pattern !== "string" || !isEventPattern(pattern)) {
      throw new TypeError(`Invalid event type pattern ${JSON.stringify(pattern)}: use "a.b", "a.*" or "*".`);
    }
    if (pattern === "*") {
      if (this.#any !== undefined) throw new TypeError('A handler for "*" is already registered.');
      this.#any = value;
      return;
    }
    const [map, key] = pattern.endsWith(".*")
      ? [this.#prefixes, pattern.slice(0, -1)] // keep the dot: "order." matches "order.x", not "orders.x"
      : [this.#exact, pattern];
    if (map.has(key)) throw new TypeError(`A handler for ${JSON.stringify(pattern)} is already registered.`);
    map.set(key, value);
  }

  /** The value of the most specific pattern matching `type`. */
  match(type: string): T | undefined {
    const exact = this.#exact.get(type);
    if (exact !== undefined) return exact;
    for (let dot = type.lastIndexOf("."); dot > 0; dot = type.lastIndexOf(".", dot - 1)) {
      const found = this.#prefixes.get(type.slice(0, dot + 1));
      if (found !== undefined) return found;
    }
    return this.#any;
  }
}
