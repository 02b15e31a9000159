import { circuitAllows } from "../circuit-breaker";
import type { ClaimedDelivery } from "../delivery-queue";
import type { WebhookEndpoint } from "../endpoint";
import { transition } from "../state-machine";
import type { EndpointLine, EndpointLines } from "./endpoint-lines";
import { emit, type WorkerSettings } from "./worker-options";

/** What becomes of a claimed delivery before it may take a slot. Internal. */
export type Admission =
  /** It may go out, to this endpoint as read. */
  | { readonly type: "send"; readonly endpoint: WebhookEndpoint }
  /** Back to the queue until then, without using an attempt (open circuit, rate limit). */
  | { readonly type: "later"; readonly until: number }
  /** Its endpoint is disabled or gone: the delivery was parked (exhausted) in the queue. */
  | { readonly type: "parked" };

/**
 * The one gate a claimed delivery passes: its endpoint (cached, else read from the store), parked when that endpoint
 * is disabled or gone; then the endpoint's circuit (a half-open circuit lets exactly this one probe through) and its
 * rate limit, either of which sends it back to the queue for later.
 */
export async function admit(
  settings: WorkerSettings,
  lines: EndpointLines,
  claim: ClaimedDelivery,
  line: EndpointLine,
  at: number,
): Promise<Admission> {
  let endpoint = lines.ready(line, at) ?? (await lines.load(line, at));
  // A cached "disabled" may be stale (re-enabled since): look again before parking the delivery.
  if (endpoint?.status === "disabled" && line.loadedAt !== at) {
    line.loadedAt = Number.NEGATIVE_INFINITY;
    endpoint = await lines.load(line, at);
  }
  if (endpoint === undefined || endpoint.status === "disabled") {
    const next = transition(claim.state, { type: "endpoint_disabled" }, at, settings.config);
    await settings.queue.complete(claim, next.state);
    emit(settings, { type: "delivery.exhausted", delivery: { ...claim, state: next.state } });
    return { type: "parked" };
  }
  if (settings.circuit !== undefined) {
    const allowed = circuitAllows(line.circuit, at, settings.circuit);
    line.circuit = allowed.state;
    if (!allowed.allowed) return { type: "later", until: allowed.retryAt };
  }
  if (endpoint.rateLimit !== null) {
    const permit = await settings.rateLimiter().acquire(endpoint.id, endpoint.rateLimit, at);
    if (!permit.allowed) return { type: "later", until: permit.retryAtMs };
  }
  return { type: "send", endpoint };
}
