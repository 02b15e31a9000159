// String.prototype.isWellFormed and toWellFormed are ES2024 (Node 20 has both); the project's lib stops at ES2023.
type WellFormedString = { isWellFormed(): boolean; toWellFormed(): string };

/**
 * Whether `text` is well-formed UTF-16: no lone surrogate, which UTF-8 cannot encode (RFC 3629 §3) and I-JSON refuses
 * (RFC 7493 §2.1), so PostgreSQL, Redis and JSON peers would read it as U+FFFD or refuse it.
 */
export function isWellFormed(text: string): boolean {
  return (text as unknown as WellFormedString).isWellFormed();
}

/** `text` with each lone surrogate replaced by U+FFFD; `text` itself when it is already well-formed. */
export function toWellFormed(text: string): string {
  return isWellFormed(text) ? text : (text as unknown as WellFormedString).toWellFormed();
}
