import { finiteNumber, nonNegativeInteger, nonNegativeNumber } from "../../options/number-option";
import type { ClaimOptions, DeliveryListOptions, PublishOptions } from "./delivery-queue";
import { checkTraceparent } from "./trace-context";

/*
 * The checks every DeliveryQueue makes of its arguments before it reads or writes, so that the memory and PostgreSQL
 * queues refuse the same values with the same TypeError. NaN compares false with everything: a NaN due time or lease
 * end would sit in the memory queue's heap where no claim ever finds it (a delivery lost), where PostgreSQL refuses it
 * with an error of its own.
 */

/** `DeliveryQueue.publish`'s options: an instant, a delay of 0 or more, a W3C traceparent. */
export function checkPublishOptions(options: PublishOptions): void {
  if (options.now !== undefined) finiteNumber("DeliveryQueue.publish", "now", options.now, "epoch milliseconds");
  if (options.delayMs !== undefined) {
    nonNegativeNumber("DeliveryQueue.publish", "delayMs", options.delayMs, "milliseconds");
  }
  checkTraceparent(options.traceparent, "publish");
}

/** `DeliveryQueue.claim`'s options: counts are integers of 0 or more, the lease a duration of 0 or more. */
export function checkClaimOptions(options: ClaimOptions): void {
  const owner = "DeliveryQueue.claim";
  nonNegativeInteger(owner, "limit", options.limit);
  checkLease(owner, options.now, options.leaseMs);
  if (options.perEndpoint !== undefined) nonNegativeInteger(owner, "perEndpoint", options.perEndpoint);
  // Every claim walks the map (one entry per endpoint the worker knows): the name is only spelled out for a refusal.
  for (const [endpointId, room] of options.endpointLimits ?? []) {
    if (!Number.isSafeInteger(room) || room < 0) nonNegativeInteger(owner, `endpointLimits of ${endpointId}`, room);
  }
}

/** A claim's or a renewal's clock reading and lease length. */
export function checkLease(owner: string, now: number, leaseMs: number): void {
  finiteNumber(owner, "now", now, "epoch milliseconds");
  nonNegativeNumber(owner, "leaseMs", leaseMs, "milliseconds");
}

/** `DeliveryQueue.list`'s `since`, when given: an instant. */
export function listSince(options: DeliveryListOptions): number | undefined {
  return options.since === undefined
    ? undefined
    : finiteNumber("DeliveryQueue.list", "since", options.since, "epoch milliseconds");
}
