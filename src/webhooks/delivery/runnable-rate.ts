import { MAX_RATE_LIMIT, MIN_RATE_LIMIT } from "./endpoint-schema";

/**
 * The rate the worker paces an endpoint at, from the `rateLimit` it has stored. The endpoint API and
 * `createEndpointAdmin` only store rates from {@link MIN_RATE_LIMIT} to {@link MAX_RATE_LIMIT}, but a row written
 * by hand, by another tool or by an earlier version may hold any number, and the pacer refuses a rate it cannot run
 * on every admission, which held the endpoint's deliveries for good. Such a rate is read as the nearest one the API
 * accepts: a limit that cannot be read (0, negative, NaN) as the slowest, so that an endpoint whose owner asked for a
 * limit is never flooded, and one above the range (Infinity too) as the fastest.
 */
export function runnableRate(perSecond: number): number {
  if (perSecond >= MIN_RATE_LIMIT && perSecond <= MAX_RATE_LIMIT) return perSecond;
  return perSecond > MAX_RATE_LIMIT ? MAX_RATE_LIMIT : MIN_RATE_LIMIT;
}
