/** Stable codes of {@link WebhookDeliveryError}. */
export type WebhookDeliveryErrorCode =
  | "invalid_option"
  | "invalid_event"
  /** An event larger than the queue's `maxPayloadBytes`. */
  | "payload_too_large"
  | "invalid_endpoint"
  | "endpoint_not_found"
  | "delivery_not_found"
  /** A stored row cannot be decoded (written by an incompatible version, or by hand). */
  | "row_invalid"
  /**
   * The worker refused a delivery whose endpoint does not receive its events (its id reused after a delete): a
   * tenant's under another tenant's endpoint or the operator's without `allTenants`, or the operator's event under a
   * tenant's endpoint. Parked before anything was sent. Reported as an `error` event, never thrown.
   */
  | "tenant_mismatch"
  /**
   * The endpoint store the worker watches stopped hearing other processes' endpoint writes for a while (the
   * PostgreSQL store's listening connection was lost; it connects again on its own): until it does, an endpoint
   * changed elsewhere is seen within `endpointCacheMs`. Reported as an `error` event, never thrown; `cause` is the
   * connection's error.
   */
  | "endpoint_watch_lost"
  /**
   * The worker's `stop()` gave up waiting for the queue, 1 s past the grace period: what it had not handed back is
   * left to its lease. Reported as an `error` event, never thrown.
   */
  | "stop_timed_out";

/** The one error class of the delivery module; only misuse throws it, outcomes are values. */
export class WebhookDeliveryError extends Error {
  readonly code: WebhookDeliveryErrorCode;

  constructor(code: WebhookDeliveryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "WebhookDeliveryError";
    this.code = code;
  }
}
