import { type CircuitState, circuitAllows, closedCircuit } from "../circuit-breaker";
import type { ClaimedDelivery } from "../delivery-queue";
import type { WebhookEndpoint } from "../endpoint";
import { WebhookDeliveryError } from "../errors";
import { runnableRate } from "../runnable-rate";
import { transition } from "../state-machine";
import { receivesFor } from "../tenant";
import { type EndpointLine, type EndpointLines, fresh } from "./endpoint-lines";
import { emit, type WorkerSettings } from "./worker-options";

/** What becomes of a claimed delivery before it may take a slot. Internal. */
export type Admission =
  /**
   * It may go out, to this endpoint as read. `probe`: it is the shared circuit's one half-open probe, held on the
   * board until then (the probe's name there: `CircuitBoard.releaseProbe`).
   */
  | { readonly type: "send"; readonly endpoint: WebhookEndpoint; readonly probe?: number }
  /** Back to the queue until then, without using an attempt (open circuit). */
  | { readonly type: "later"; readonly until: number }
  /** Its endpoint is disabled or gone: the delivery was parked (exhausted) in the queue. */
  | { readonly type: "parked" };

/**
 * The gate a claimed delivery passes on arrival: its endpoint (cached, else read from the store), parked when that
 * endpoint is disabled or gone; then the shared circuit, which may send it back to the queue for later. (The rate
 * limit is asked at the send: {@link ratePermit}.)
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
  if (endpoint !== undefined && !receivesClaim(endpoint, claim)) return refuseTenant(settings, claim, endpoint, at);
  if (endpoint === undefined || endpoint.status === "disabled") {
    const next = transition(claim.state, { type: "endpoint_disabled" }, at, settings.config);
    // Announced only when parked: a lost lease leaves the delivery to the worker that holds it now.
    if (await settings.queue.complete(claim, next.state)) {
      emit(settings, { type: "delivery.exhausted", delivery: { ...claim, state: next.state } });
    }
    return { type: "parked" };
  }
  let probe: number | undefined;
  const board = settings.board;
  if (board !== undefined && settings.circuit !== undefined) {
    if (!fresh(line.sharedAt, at, settings.cacheMs)) {
      line.sharedOpenUntil = await board.openUntil(line.id);
      line.sharedAt = at;
      // Closed for everyone (another worker's probe succeeded): this worker's window starts afresh too.
      if (line.sharedOpenUntil === undefined && line.circuit.status !== "closed") line.circuit = closedCircuit;
    }
    const until = line.sharedOpenUntil;
    if (until !== undefined) {
      if (at < until) return { type: "later", until };
      // Past the cool-down: one probe for all the workers, whoever wins it.
      const probeUntil = at + settings.probeHoldMs;
      if (!(await board.takeProbe(line.id, at, probeUntil))) {
        return { type: "later", until: at + Math.min(settings.circuit.coolDownMs, 1_000) };
      }
      probe = probeUntil;
      // Half-open here too, so the probe's outcome closes or re-opens the circuit (attempt-outcome.ts).
      line.circuit = { ...line.circuit, status: "half_open", openedAt: at };
      emit(settings, { type: "circuit", endpointId: line.id, status: "half_open" });
    }
  }
  return { type: "send", endpoint, probe };
}

/**
 * An endpoint's rate limit (deliveries per second), asked right before the send, with the endpoint's turn and a slot
 * in hand: `undefined` to send, else when its next delivery will be admitted. Not at admission: a permit taken there
 * was spent after the wait for the endpoint's turn, so deliveries that waited went out back to back, past the GCRA's
 * bound of `burst + L / T` in any interval of length L (docs/rate-limits.md, "The guarantee"). Only for an endpoint
 * with a rate limit: the caller skips it otherwise, so the usual send takes no promise.
 */
export async function ratePermit(
  settings: WorkerSettings,
  endpointId: string,
  rateLimit: number,
  at: number,
): Promise<number | undefined> {
  const permit = await settings.rateLimiter().acquire(endpointId, runnableRate(rateLimit), at);
  return permit.allowed ? undefined : permit.retryAtMs;
}

/**
 * A half-open probe the rate limit held back never went out: the circuit is open again until the limiter's next
 * opening (`retryAt`), when the next probe may go. The same for a probe that goes back unsent or unanswered (stop(),
 * a lost lease), with `retryAt` now. Left half-open, the probe counted as out: no other for a cool-down
 * (own circuit) or for the probe hold, the lease (the shared board keeps a probe won), however soon the rate allowed
 * one; an endpoint whose rate is slower than the cool-down waited that much longer to close.
 * @param sharedProbe the hold's end of the shared circuit's probe the delivery won at admission, else `undefined`
 * @param passedAs the endpoint's circuit as the delivery passed the last look (half-open: it was the probe)
 */
export async function probeHeldBack(
  settings: WorkerSettings,
  line: EndpointLine,
  sharedProbe: number | undefined,
  passedAs: CircuitState,
  retryAt: number,
): Promise<void> {
  const config = settings.circuit;
  if (config === undefined || passedAs.status !== "half_open") return;
  const board = settings.board;
  if (board !== undefined) {
    if (sharedProbe === undefined) return;
    // The next probe is anyone's from `retryAt`, if this one is still this worker's: held past its hold, another
    // worker may have taken the probe since, and closed the circuit with it. Either way the board is read again.
    const released = await board.releaseProbe(line.id, sharedProbe, retryAt);
    line.sharedOpenUntil = released ? retryAt : undefined;
    line.sharedAt = Number.NEGATIVE_INFINITY;
    // Not this worker's to re-open: the next admission takes the circuit as the board has it (no `circuit` event
    // saying "open" of a circuit that may be closed for everyone).
    if (!released) return;
  }
  // Only if nothing moved the circuit since (an earlier attempt's outcome did, and decided it).
  if (line.circuit !== passedAs) return;
  // Opened as of a cool-down before `retryAt`, so that circuitAllows lets the next probe out at `retryAt`.
  line.circuit = { ...passedAs, status: "open", openedAt: retryAt - config.coolDownMs };
  emit(settings, { type: "circuit", endpointId: line.id, status: "open" });
}

/**
 * Whether `endpoint` receives `claim`'s events by the rule publish fans out by (tenant.ts `receivesFor`): a tenant's
 * delivery goes to that tenant's endpoints and the operator's with `allTenants` only; the operator's
 * (`operatorEvent`) to the operator's endpoints only. A delivery whose queue cannot say whose it is (a PostgreSQL row
 * stored before migration delivery@14, a queue that does not set `operatorEvent`) is not checked, else those rows
 * were stranded. Internal.
 */
export function receivesClaim(endpoint: WebhookEndpoint, claim: ClaimedDelivery): boolean {
  const tenant = publishedFor(claim);
  return tenant === undefined || receivesFor(endpoint, tenant);
}

// The tenant `claim` was published for, `null` the operator's event, `undefined` not known.
function publishedFor(claim: ClaimedDelivery): string | null | undefined {
  if (claim.tenant !== undefined) return claim.tenant;
  return claim.operatorEvent === true ? null : undefined;
}

// Another tenant's delivery, or the operator's under a tenant's endpoint (its id reused after a delete): parked as a
// delivery whose endpoint is gone (it is), never sent, nothing logged under the endpoint, and no delivery.exhausted
// event, which a listener may pass on to the endpoint's owner; the operator hears of it as an error. Re-enabling or a
// replay brings it back here.
async function refuseTenant(
  settings: WorkerSettings,
  claim: ClaimedDelivery,
  endpoint: WebhookEndpoint,
  at: number,
): Promise<Admission> {
  const next = transition(claim.state, { type: "endpoint_disabled" }, at, settings.config);
  if (await settings.queue.complete(claim, next.state)) {
    // Which rule refused it: the operator's event reaches no tenant's endpoint, a tenant's no one else's.
    const refused =
      publishedFor(claim) === null
        ? `is the operator's event (published without a tenant), which its endpoint ${claim.endpointId} ` +
          "(a tenant's) does not receive"
        : `was published for a tenant its endpoint ${claim.endpointId} ` +
          `(${endpoint.tenant === null ? "the operator's, without allTenants" : "another tenant's"}) does not receive`;
    const error = new WebhookDeliveryError("tenant_mismatch", `Delivery ${claim.id} ${refused}: parked, not sent.`);
    emit(settings, { type: "error", error });
  }
  return { type: "parked" };
}

/**
 * The last look, right before sending (a delivery may have waited for its turn since it was admitted): nothing goes
 * to an endpoint being disabled, and the circuit is asked once — a half-open circuit lets exactly this one probe
 * through (with a shared board, the probe won at admission). `undefined` to send, else when to try again (back to
 * the queue without using an attempt).
 */
export function holdBack(
  settings: WorkerSettings,
  line: EndpointLine,
  at: number,
  pause: number,
  probe: number | undefined,
): number | undefined {
  if (line.disabling > 0 || line.endpoint?.status !== "enabled") return at + pause;
  if (settings.circuit === undefined) return undefined;
  // Shared: the board decides (the probe was won at admission; anything else waits while the circuit is open).
  if (settings.board !== undefined) {
    if (probe !== undefined) return undefined;
    const until = line.sharedOpenUntil;
    return until === undefined ? undefined : Math.max(until, at + pause);
  }
  const allowed = circuitAllows(line.circuit, at, settings.circuit);
  if (allowed.state.status !== line.circuit.status && settings.listener !== undefined) {
    emit(settings, { type: "circuit", endpointId: line.id, status: allowed.state.status });
  }
  line.circuit = allowed.state;
  return allowed.allowed ? undefined : allowed.retryAt;
}
