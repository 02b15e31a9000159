/**
 * The one wording of a refused option, for every check where an option is taken (a constructor, a factory): who
 * takes it, the option, what it must be and the value it got. "createMemoryInbox: maxDone must be a positive integer,
 * got 0."
 */
export function refuseOption(owner: string, name: string, value: unknown, wanted: string): never {
  throw new TypeError(`${owner}: ${name} must be ${wanted}, got ${describeOption(value)}.`);
}

/**
 * A value as a refusal names it: a string quoted ("got \"5\"" says why 5 was refused) and cut at 40 characters, an
 * object by its tag (String() of one without a prototype would throw), a function as such, anything else as written.
 */
export function describeOption(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "function") return "a function";
  if (typeof value === "object" && value !== null) return Object.prototype.toString.call(value);
  return String(value);
}
