import type { ConsumerErrorRecord } from "./errors";
import type { InboxEvent, InboxRecord } from "./event";

/** The result of {@link Inbox.add}: `duplicate` when an event with this id was already stored. */
export interface InboxAddResult {
  duplicate: boolean;
}

/**
 * What the consumer knows about a new event besides the event itself, passed to {@link Inbox.add}.
 */
export interface InboxAddSource {
  /**
   * The verified body as received, when the event's `payload` is its JSON parse (the consumer's default `parse:
   * "json"`). A store that keeps JSON text may write this text instead of serialising `payload` again: the same
   * value, without a second pass over a large payload.
   */
  readonly json?: Uint8Array;
}

/** Options of {@link Inbox.complete}. */
export interface InboxCompleteOptions {
  /**
   * Aborts when the processor stops waiting for `work` (its `handlerTimeoutMs`). The inbox then answers `failed`
   * with the signal's reason without waiting for `work`, and never marks the event done for it; one that runs `work`
   * in a transaction ends it (the PostgreSQL inbox on a `pg` Pool closes the connection, so a statement still
   * running is stopped and nothing `work` sends afterwards commits). The processor's default deadline is shared by the
   * attempts that start within one window, so take off any listener you add to it once the attempt settles.
   */
  signal?: AbortSignal | undefined;
}

/** What a processor asks for when it claims due events. */
export interface InboxClaimRequest {
  /** The current time, Unix ms. */
  now: number;
  /** How long the claim holds before another processor may take the event over, ms. */
  leaseMs: number;
  /** At most this many events. */
  limit: number;
  /** The claiming processor's id (for inspection). */
  owner: string;
  /**
   * Told about each due event the inbox could not read (a `WebhookConsumerError` `row_invalid`), which it
   * dead-lettered instead of claiming, so the others are claimed. An inbox whose events are always readable ignores it.
   */
  onInvalid?: (error: unknown) => void;
}

/** An event claimed for processing: it belongs to the claimant until the lease expires. */
export interface InboxClaim {
  readonly event: InboxEvent;
  /** Attempts including this one. */
  readonly attempts: number;
  /** Identifies this claim; completing or failing with a stale token does nothing. */
  readonly token: string;
}

/**
 * The outcome of {@link Inbox.complete}: `done` after the work ran and the event was marked done;
 * `lost` when the claim was taken over (lease expired) before the work could start, so it did not run;
 * `failed` when the work threw (nothing is marked; the processor decides retry or dead letter). Under a `signal`
 * already aborted an inbox may answer `failed` (with its reason) for a claim taken over too, without looking at it: the
 * PostgreSQL inbox does, since the transaction that would look never begins, where the memory inbox answers `lost`.
 * Neither runs the work, and the processor's `fail` then finds the claim stale and counts it `lost`.
 */
export type InboxCompleteResult = { outcome: "done" } | { outcome: "lost" } | { outcome: "failed"; error: unknown };

/** How a failed attempt is settled. */
export type InboxFailOutcome =
  | { retryAt: number; error: ConsumerErrorRecord }
  | { dead: true; error: ConsumerErrorRecord };

/**
 * Durable storage for received webhook events, de-duplicated by event id. The consumer handler
 * adds to it before answering 2xx; processors claim, complete and fail events.
 *
 * `Context` is what the inbox hands to event handlers: nothing for the in-memory inbox, the
 * transaction's `client` for PostgreSQL (so the handler's writes commit with the done mark).
 *
 * Every implementation passes the one contract suite in test/webhooks/consumer/inbox-contract.ts.
 */
export interface Inbox<Context extends object = object> {
  /**
   * Stores a verified event unless one with the same id exists. Must be durable when it answers: a store that writes
   * elsewhere returns a promise; one that keeps events in the process (the memory inbox) may answer at once, and the
   * consumer then acknowledges in the same tick.
   * An inbox that cannot take the event now without dropping one it acknowledged throws (or rejects with)
   * `InboxFullError`: the consumer answers `503 inbox_full` and the provider delivers it again later. One that can
   * never hold this event, whatever room is made, throws `InboxEventTooLargeError`: the consumer answers `413`.
   * @param source the verified body, which a store may keep as the payload's text (see {@link InboxAddSource}).
   */
  add(event: InboxEvent, source?: InboxAddSource): InboxAddResult | Promise<InboxAddResult>;
  /**
   * Claims up to `limit` due events — pending, failed with `retryAt <= now`, or processing with
   * an expired lease — oldest due first, skipping events another processor is running right now.
   */
  claim(request: InboxClaimRequest): Promise<InboxClaim[]>;
  /**
   * Runs `work` for a claimed event and marks it done if it succeeds; an inbox that can makes both
   * one transaction, and keeps the event from being claimed again while `work` runs.
   */
  complete(
    claim: InboxClaim,
    work: (context: Context) => Promise<void>,
    now: number,
    options?: InboxCompleteOptions,
  ): Promise<InboxCompleteResult>;
  /** Settles a failed attempt as retry-later or dead; a stale claim is ignored (returns false). */
  fail(claim: InboxClaim, outcome: InboxFailOutcome, now: number): Promise<boolean>;
  /**
   * One event by id, for inspection. An inbox may let a done event's payload go (the memory inbox does: its
   * `payload` is then `undefined`); de-duplication needs the id alone. An event the inbox cannot read back is given
   * all the same, as {@link deadLetters} gives it.
   */
  get(id: string): Promise<InboxRecord | undefined>;
  /**
   * Dead-lettered events, oldest first. One the inbox cannot read back (a row written by hand or by another version)
   * is listed in its place, never thrown: what can be read is given, the rest left out (`undefined`, or `NaN` and
   * `""` where the type needs a number or a text), and its `lastError` is a `row_invalid` record naming the event
   * and what could not be read, so it can be found by id, mended, and put back with {@link retryDeadLetter}.
   */
  deadLetters(options?: { limit?: number }): Promise<InboxRecord[]>;
  /** Puts a dead event back to pending with a fresh attempt budget; false when it is not dead. */
  retryDeadLetter(id: string, now: number): Promise<boolean>;
  /**
   * Deletes done events finished before `before` (Unix ms; `Infinity` deletes them all); their ids no longer
   * de-duplicate. A `before` that is not a number, or NaN, is a TypeError.
   */
  purgeDone(before: number): Promise<number>;
}
