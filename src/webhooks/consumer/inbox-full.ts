import { isErrorOf } from "../same-error";

/**
 * Thrown by {@link Inbox.add} when the inbox cannot take an event now without dropping one it acknowledged: the
 * consumer answers `503` (problem `inbox_full`, `Retry-After`), so the provider delivers it again later, once the
 * processor has made room. Nothing is stored; an inbox of your own may throw it too.
 * @example if (error instanceof InboxFullError) metrics.increment("webhooks.inbox_full");
 */
export class InboxFullError extends Error {
  readonly code = "inbox_full";
  /** The inbox's bound, in the unit it counts (the memory inbox: bytes of event bodies). */
  readonly limit: number;

  constructor(message: string, limit: number) {
    super(message);
    this.name = "InboxFullError";
    this.limit = limit;
  }
}

/**
 * Whether `value` is an {@link InboxFullError}, also one made by another copy of this package (its CommonJS build
 * beside the ES module one, or two installed versions), which `instanceof` does not recognise.
 */
export function isInboxFullError(value: unknown): value is InboxFullError {
  return isErrorOf(value, InboxFullError, "InboxFullError", (error) => error.code === "inbox_full");
}
