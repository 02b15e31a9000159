import { isErrorOf } from "../same-error";

/**
 * Thrown by {@link Inbox.add} when one event is larger than the inbox can ever hold (the memory inbox's `maxBytes`),
 * however much room the processor makes: the consumer answers `413` (problem `body_too_large`, with the bound as
 * `limit` and no `Retry-After`), a permanent answer, since a `503` would ask for redeliveries that can never be stored.
 * Only an inbox bound below the consumer's body limit lets such an event through; nothing is stored. An inbox of your
 * own may throw it too.
 * @example if (error instanceof InboxEventTooLargeError) console.warn(`raise maxBytes above ${error.size}`);
 */
export class InboxEventTooLargeError extends Error {
  readonly code = "event_too_large";
  /** The inbox's bound, in the unit it counts (the memory inbox: bytes of body, id and type). */
  readonly limit: number;
  /** What the refused event counts toward that bound. */
  readonly size: number;

  constructor(message: string, limit: number, size: number) {
    super(message);
    this.name = "InboxEventTooLargeError";
    this.limit = limit;
    this.size = size;
  }
}

/**
 * Whether `value` is an {@link InboxEventTooLargeError}, also one made by another copy of this package (its CommonJS
 * build beside the ES module one), which `instanceof` does not recognise: such an event would otherwise get a 503 that
 * asks for redeliveries it can never store.
 */
export function isInboxEventTooLargeError(value: unknown): value is InboxEventTooLargeError {
  return isErrorOf(
    value,
    InboxEventTooLargeError,
    "InboxEventTooLargeError",
    (error) => error.code === "event_too_large" && typeof error.limit === "number",
  );
}
