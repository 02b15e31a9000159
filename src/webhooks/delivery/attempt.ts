/** Why an attempt failed, as written in the delivery log. */
export type DeliveryErrorKind =
  | "timeout"
  | "connection_refused"
  | "connection_reset"
  | "dns"
  /** A resolved address the URL policy refuses, or a resolver answer of the wrong shape: retried on the schedule. */
  | "ssrf_blocked"
  /**
   * The URL itself is refused by the URL policy (scheme, port, denied name, `localhost`, a forbidden IP literal),
   * before any network work: the policy changed since registration. It cannot succeed until the policy or the URL
   * changes, so the endpoint is disabled (`url_refused`) and the delivery parked, never retried on the schedule.
   */
  | "url_refused"
  | "http_status"
  | "tls"
  /**
   * The egress proxy (the dispatcher's `proxy`) could not be reached, or refused the tunnel: retried on the schedule.
   * Our proxy's failure says nothing of the endpoint, so it is no answer of the endpoint ({@link isEndpointAnswer}).
   */
  | "proxy"
  /**
   * The response took more bytes than the dispatcher reads before its status line arrived (an endless run of 1xx
   * responses). Once a status line arrived, the status decides, whatever the size.
   */
  | "response_too_large"
  | "network"
  | "endpoint_disabled"
  /**
   * The request could not be built or signed (an endpoint row written by hand whose secrets are all expired or no
   * signing keys, say): nothing was sent. Retried on the schedule like any failure, the row may be fixed meanwhile.
   * Nothing reached the endpoint, so it is no answer of the endpoint ({@link isEndpointAnswer}).
   */
  | "request_invalid";

/** Every {@link DeliveryErrorKind}, for schemas and tests. */
export const DELIVERY_ERROR_KINDS: readonly DeliveryErrorKind[] = [
  "timeout",
  "connection_refused",
  "connection_reset",
  "dns",
  "ssrf_blocked",
  "url_refused",
  "http_status",
  "tls",
  "proxy",
  "response_too_large",
  "network",
  "endpoint_disabled",
  "request_invalid",
];

/**
 * What one HTTP attempt produced: a response (any status) or a transport error. Once a status line arrived the
 * attempt is a `response`, even if its body was then cut short (byte cap, time-out, reset): the status decides.
 */
export type AttemptResult =
  | {
      kind: "response";
      status: number;
      /** Delay asked for by `Retry-After`, in ms (already parsed). */
      retryAfterMs?: number | undefined;
      /** The first bytes of the response body, decoded as UTF-8. */
      body?: string | undefined;
      durationMs: number;
    }
  | {
      kind: "error";
      errorKind: DeliveryErrorKind;
      /** Status line, when a custom dispatcher reports a failure after one arrived. */
      status?: number | undefined;
      message?: string | undefined;
      body?: string | undefined;
      durationMs: number;
    };

/**
 * One line of an endpoint's delivery log as the worker hands it to `DeliveryQueue.complete`: an
 * {@link AttemptRecord} before the queue has given it its id. The worker's events carry this too (`complete` hands no
 * id back).
 * @see AttemptRecord
 */
export interface AttemptInput {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  /** 1 for the first attempt of the current schedule. */
  attempt: number;
  /** Epoch ms when the request started. */
  startedAt: number;
  durationMs: number;
  /** HTTP status, when a response arrived. */
  status: number | null;
  errorKind: DeliveryErrorKind | null;
  /** The first bytes of the response body, or the error message. */
  response: string | null;
}

/** One line of an endpoint's delivery log, as `DeliveryQueue.attempts` reads it back. */
export interface AttemptRecord extends AttemptInput {
  /**
   * Given by the queue as it stores the line, opaque: the position to page on from (`startingAfter`). A newer line
   * has a greater id in the queue's own order (not necessarily in string order).
   */
  id: string;
}

/** Whether a status is a success: RFC 9110 §15.3 (2xx). Redirects are not followed and count as failures. */
export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}

// Failures of ours, before or instead of any exchange with the endpoint (see isEndpointAnswer).
const NOT_THE_ENDPOINTS: ReadonlySet<DeliveryErrorKind> = new Set(["url_refused", "request_invalid", "proxy"]);

/**
 * Whether an attempt's result is the endpoint's answer, which the circuit breaker, the endpoint's health (its failing
 * clock) and the worker's per-endpoint cap count. Three failures are not, they say nothing of the endpoint:
 * - `url_refused`: the URL policy refused the URL before any network work, a decision of ours (it disables the
 *   endpoint as `url_refused` instead);
 * - `request_invalid`: the request could not be built or signed, nothing was sent;
 * - `proxy`: our egress proxy could not be reached or refused the tunnel.
 * Like an attempt aborted by `stop()`, such an attempt neither opens nor closes the circuit, neither starts nor ends
 * the endpoint's failing clock, and leaves the endpoint's cap as it was. How it is retried does not depend on this.
 * @see DeliveryErrorKind
 */
export function isEndpointAnswer(result: AttemptResult): boolean {
  return result.kind !== "error" || !NOT_THE_ENDPOINTS.has(result.errorKind);
}
