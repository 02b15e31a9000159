import { type AttemptRecord, DELIVERY_ERROR_KINDS, type DeliveryErrorKind } from "./attempt";

/**
 * The text the endpoint API shows for an attempt that failed before connecting, for want of a usable address: the
 * words of registration's `unresolvable_host` (endpoint-admin.ts), naming neither the reason nor the address.
 */
export const UNRESOLVED_ATTEMPT_TEXT = "The host does not resolve to a public address that may receive webhooks.";

/**
 * The error kind the endpoint API shows for `kind`: `ssrf_blocked` reads as `dns`. Told apart, a name with no
 * address and one resolving to a forbidden address would say which names exist in the provider's own DNS (split
 * horizon: `db.internal` resolves only inside), what registration keeps from the registrant (`unresolvable_host`
 * for both). The provider's queue, and the worker's events, keep the precise kind.
 */
export function shownErrorKind(kind: DeliveryErrorKind | null): ShownErrorKind | null {
  return kind === "ssrf_blocked" ? "dns" : kind;
}

/** A {@link DeliveryErrorKind} the endpoint API shows: any but `ssrf_blocked`. */
export type ShownErrorKind = Exclude<DeliveryErrorKind, "ssrf_blocked">;

/** Every {@link ShownErrorKind}, for the API's schemas. */
export const SHOWN_ERROR_KINDS = DELIVERY_ERROR_KINDS.filter(
  (kind): kind is ShownErrorKind => kind !== "ssrf_blocked",
) as [ShownErrorKind, ...ShownErrorKind[]];

/**
 * A line of the delivery log as the endpoint API shows it. One that failed on the name (`dns`, `ssrf_blocked`) has the
 * same kind, text and a duration of 0 (nothing was sent): the message would name the cause, and the look-up's time
 * tells an answer from the provider's resolver's cache from an NXDOMAIN fetched outside.
 */
export function shownAttempt(attempt: AttemptRecord): AttemptRecord & { errorKind: ShownErrorKind | null } {
  const errorKind = shownErrorKind(attempt.errorKind);
  if (errorKind !== "dns") return { ...attempt, errorKind };
  return { ...attempt, errorKind, durationMs: 0, response: UNRESOLVED_ATTEMPT_TEXT };
}
