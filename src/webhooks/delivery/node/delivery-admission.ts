import { circuitAllows } from "../circuit-breaker";
import type { ClaimedDelivery } from "../delivery-queue";
import type { WebhookEndpoint } from "../endpoint";
import { transition } from "../state-machine";
import type { Outgoing } from "./attempt-outcome";
import type { EndpointLine, EndpointLines } from "./endpoint-lines";
import { emit, type WorkerSettings } from "./worker-options";

/**
 * The slow way in for a claimed delivery, when its endpoint is not cached as enabled and unpaced: the endpoint from
 * the store, the delivery parked when the endpoint is disabled or gone, then the circuit and the rate limiter, which
 * may hand it back for later without using an attempt. `undefined` when it was dealt with; else signed by `sign`.
 */
export async function prepareSlowly(
  settings: WorkerSettings,
  lines: EndpointLines<Outgoing>,
  claim: ClaimedDelivery,
  line: EndpointLine<Outgoing>,
  at: number,
  sign: (claim: ClaimedDelivery, line: EndpointLine<Outgoing>, endpoint: WebhookEndpoint) => Outgoing,
): Promise<Outgoing | undefined> {
  const { queue, circuit, config } = settings;
  let endpoint = await lines.load(line, at);
  // A cached "disabled" may be stale (re-enabled since): look again before parking the delivery.
  if (endpoint?.status === "disabled" && line.loadedAt !== at) {
    line.loadedAt = Number.NEGATIVE_INFINITY;
    endpoint = await lines.load(line, at);
  }
  if (endpoint === undefined || endpoint.status === "disabled") {
    const next = transition(claim.state, { type: "endpoint_disabled" }, at, config);
    await queue.complete(claim, next.state);
    emit(settings, { type: "delivery.exhausted", delivery: { ...claim, state: next.state } });
    return undefined;
  }
  let until: number | undefined;
  // Looked at without taking the half-open probe: that is taken right before sending.
  const allowed = circuit === undefined ? undefined : circuitAllows(line.circuit, at, circuit);
  if (allowed !== undefined && !allowed.allowed) until = allowed.retryAt;
  else if (endpoint.rateLimit !== null) {
    const permit = await settings.rateLimiter().acquire(endpoint.id, endpoint.rateLimit, at);
    if (!permit.allowed) until = permit.retryAtMs;
  }
  if (until === undefined) return sign(claim, line, endpoint);
  await queue.complete(claim, transition(claim.state, { type: "defer", until }, at, config).state);
  return undefined;
}
