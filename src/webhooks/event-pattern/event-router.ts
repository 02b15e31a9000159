import { isEventPattern } from "./event-pattern";

/**
 * Routes event types to values registered under patterns (see `event-pattern.ts` for the grammar). One event runs
 * one handler, the most specific match, so a retry never re-runs a sibling that already succeeded: exact beats
 * prefix, a longer prefix beats a shorter one, `*` comes last.
 */
export class EventRouter<T> {
  readonly #exact = new Map<string, T>();
  readonly #prefixes = new Map<string, T>();
  #any: T | undefined;

  /** Registers `value` under `pattern`; a malformed or repeated pattern is a TypeError. */
  add(pattern: string, value: T): void {
    if (!isEventPattern(pattern)) {
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

  /**
   * The value of the most specific pattern matching `type`. The work is bounded by the patterns registered, never by
   * the type: a type comes from the delivery (an unsigned X-GitHub-Event header, say), and building a pattern per dot
   * of it (`patternsMatching`) would cost its length squared.
   */
  match(type: string): T | undefined {
    const exact = this.#exact.get(type);
    if (exact !== undefined) return exact;
    // The longest registered prefix ("order.line." before "order.") that the type starts with.
    let longest = "";
    let found: T | undefined;
    for (const [prefix, value] of this.#prefixes) {
      if (value !== undefined && prefix.length > longest.length && type.startsWith(prefix)) {
        longest = prefix;
        found = value;
      }
    }
    return found ?? this.#any;
  }
}
