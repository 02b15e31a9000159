/** The outcome of {@link endpointHealthAfter}. */
export interface EndpointHealthDecision {
  /** Epoch ms of the first failure since the last success; `null` after a success. */
  failingSince: number | null;
  /** Whether the endpoint has failed long enough to be disabled. */
  disable: boolean;
}

/**
 * Tracks how long an endpoint has failed without a single success; past `disableAfterMs` it is to be disabled
 * (Svix: 5 days), and the owner told.
 */
export function endpointHealthAfter(
  failingSince: number | null,
  success: boolean,
  now: number,
  disableAfterMs: number,
): EndpointHealthDecision {
  if (success) return { failingSince: null, disable: false };
  const since = failingSince ?? now;
  return { failingSince: since, disable: now - since >= disableAfterMs };
}
