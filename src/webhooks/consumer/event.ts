import type { ConsumerErrorRecord } from "./errors";

/** A verified webhook event as the inbox stores it and handlers receive it. */
export interface InboxEvent<T = unknown> {
  /**
   * The de-duplication key: the provider's delivery/event id (see the dedup policy in
   * docs/webhooks-consumers.md, "De-duplication"). Key your side effects by it.
   */
  readonly id: string;
  /** The event type used for routing, e.g. `order.shipped`; empty when none could be found. */
  readonly type: string;
  /**
   * The verified payload: parsed JSON, form fields for form-encoded schemes, or the raw body as a `Uint8Array` with
   * the consumer's `parse: "none"` (every inbox gives those bytes back as they came).
   */
  readonly payload: T;
  /** The name of the signing scheme that verified it: `standard-webhooks`, `stripe`, `github`, `shopify`, `slack`, … */
  readonly scheme: string;
  /** The provider's signature timestamp, Unix seconds, when the scheme has one. */
  readonly timestamp: number | undefined;
  /**
   * When the delivery arrived, Unix ms, on the consumer's clock (its `now` option) — read just after
   * verification, before the inbox stores it. Not the provider's timestamp: see {@link timestamp}.
   */
  readonly receivedAt: number;
}

/** The life cycle of an inbox event: `pending → processing(lease) → done | failed(retry at) → dead`. */
export type InboxState = "pending" | "processing" | "done" | "failed" | "dead";

/** An inbox event with its processing state, as listed for inspection and dead letters. */
export interface InboxRecord extends InboxEvent {
  readonly state: InboxState;
  /** Processing attempts started so far (claims). */
  readonly attempts: number;
  /**
   * When the event is next due, Unix ms: the receive time while pending, the retry time when
   * failed, the lease expiry while processing; `undefined` when done or dead.
   */
  readonly availableAt: number | undefined;
  /** Why the last attempt failed, when one did. */
  readonly lastError: ConsumerErrorRecord | undefined;
  /** When processing succeeded, Unix ms. */
  readonly doneAt: number | undefined;
}
