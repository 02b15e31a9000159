import { attemptSeq } from "./attempt-id";
import type { AttemptsQuery } from "./delivery-queue";

/** The stable code of an {@link AttemptCursorError}. */
export type AttemptCursorErrorCode = "invalid_cursor";

/**
 * A `startingAfter` that `DeliveryQueue.attempts` cannot place: no id the queue could have given a line of its log
 * (malformed), as opposed to the id of a line since trimmed or purged, which still places a page. The endpoint API
 * answers it, and it alone, with `400 invalid_cursor`; a queue of your own throws it for the same case. A `TypeError`,
 * since a program that passes such a value misuses the queue.
 * @param startingAfter the value refused, kept as `startingAfter`
 * @example
 * try {
 *   await queue.attempts({ endpointId, startingAfter });
 * } catch (error) {
 *   if (error instanceof AttemptCursorError) … // read from the start again
 * }
 */
export class AttemptCursorError extends TypeError {
  readonly code: AttemptCursorErrorCode;
  /** The `startingAfter` refused. */
  readonly startingAfter: unknown;

  constructor(
    startingAfter: unknown,
    message = `DeliveryQueue.attempts: startingAfter is no attempt id of this queue, got ${String(startingAfter)}.`,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "AttemptCursorError";
    this.code = "invalid_cursor";
    this.startingAfter = startingAfter;
  }
}

/**
 * `DeliveryQueue.attempts`'s `startingAfter`, when given: the sequence number (decimal) of the line it names. Refused
 * alike by both built-in queues when no line of theirs could have it, rather than read as "from the start" (a page
 * again).
 */
export function attemptCursor(query: AttemptsQuery): string | undefined {
  const after: unknown = query.startingAfter;
  if (after === undefined) return undefined;
  const seq = typeof after === "string" ? attemptSeq(after) : undefined;
  if (seq === undefined) {
    throw new AttemptCursorError(
      after,
      `DeliveryQueue.attempts: startingAfter must be an attempt id (att_…), got ${String(after)}.`,
    );
  }
  return seq;
}
