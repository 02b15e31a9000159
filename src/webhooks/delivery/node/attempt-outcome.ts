import { type AttemptInput, type AttemptResult, isEndpointAnswer, isSuccessStatus } from "../attempt";
import { circuitRecord } from "../circuit-breaker";
import type { ClaimedDelivery } from "../delivery-queue";
import { type RequestTarget, requestTarget } from "../delivery-request";
import type { WebhookEndpoint } from "../endpoint";
import { endpointHealthAfter } from "../endpoint-health";
import { type Transition, transition } from "../state-machine";
import type { EndpointLine, EndpointLines } from "./endpoint-lines";
import { emit, type WorkerSettings } from "./worker-options";

/** A claimed delivery on its way out, with the endpoint its request was built for. Internal. */
export interface Outgoing {
  readonly claim: ClaimedDelivery;
  readonly line: EndpointLine;
  /** The endpoint the request was signed for. */
  endpoint: WebhookEndpoint;
  /** Epoch ms when the request went out. */
  sentAt: number;
}

/**
 * The result of an attempt whose request could not be built or signed (an endpoint row written by hand whose secrets
 * are all expired or no signing keys, say): a failed attempt like any other, logged with the error's message and
 * retried on the schedule (the row may be fixed meanwhile), never a throw that leaves the delivery to its lease, to
 * be claimed again for ever without an attempt counted.
 */
export function requestInvalid(error: unknown, durationMs: number): AttemptResult {
  const message = error instanceof Error ? error.message : String(error);
  return { kind: "error", errorKind: "request_invalid", message, durationMs };
}

/** An attempt whose outcome is decided but not yet stored. Internal. */
export interface Outcome {
  readonly outgoing: Outgoing;
  readonly result: AttemptResult;
  readonly next: Transition;
  readonly finishedAt: number;
  /**
   * Whether the result is the endpoint's answer ({@link isEndpointAnswer}), decided once: only then do the circuit and
   * the endpoint's health count it.
   */
  readonly answered: boolean;
  /** Whether this outcome stops the endpoint's line until it is stored (see {@link decideOutcome}). */
  readonly stops: boolean;
  /** The shared circuit's change to store: open until then, `null` closed, `undefined` none. */
  readonly shared: number | null | undefined;
}

/**
 * Decides an attempt's outcome and updates what this worker knows at once (synchronously), so the next delivery to
 * the same endpoint can go out before the outcome is stored: the circuit records it, and an endpoint about to be
 * disabled (410 Gone, or failing for too long) sends nothing more.
 */
export function decideOutcome(
  settings: WorkerSettings,
  outgoing: Outgoing,
  result: AttemptResult,
  finishedAt: number,
): Outcome {
  const next = transition(outgoing.claim.state, { type: "attempt", result }, finishedAt, settings.config);
  const line = outgoing.line;
  const success = next.state.status === "delivered";
  // No answer of the endpoint (url_refused, request_invalid, proxy): the circuit and its health do not count it.
  const answered = isEndpointAnswer(result);
  let shared: Outcome["shared"];
  if (settings.circuit !== undefined && answered) {
    const before = line.circuit.status;
    line.circuit = circuitRecord(line.circuit, success, finishedAt, settings.circuit);
    if (line.circuit.status !== before) {
      emit(settings, { type: "circuit", endpointId: line.id, status: line.circuit.status });
      // What the other workers must learn (stored with the outcome); this worker knows it at once.
      if (settings.board !== undefined && line.circuit.status !== "half_open") {
        shared = line.circuit.status === "open" ? finishedAt + settings.circuit.coolDownMs : null;
        line.sharedOpenUntil = shared ?? undefined;
        line.sharedAt = finishedAt;
      }
    }
  }
  const stops =
    !success &&
    (next.effects.some((effect) => effect.type === "disable_endpoint") ||
      (answered &&
        endpointHealthAfter(line.endpoint?.failingSince ?? null, false, finishedAt, settings.disableAfterMs).disable));
  if (stops) line.disabling++;
  return { outgoing, result, next, finishedAt, answered, stops, shared };
}

// Parsed once per endpoint as loaded (the worker reuses it while cached), not per attempt: bench/delivery/otel.ts.
const targets = new WeakMap<WebhookEndpoint, Readonly<RequestTarget> | undefined>();

/** Where requests signed for `endpoint` go (the request's URL is the endpoint's), for the `attempt` event. */
function targetOf(endpoint: WebhookEndpoint): Readonly<RequestTarget> | undefined {
  if (targets.has(endpoint)) return targets.get(endpoint);
  const parsed = requestTarget(endpoint.url);
  // Shared by every event of the endpoint: no listener may change what the next one sees.
  const target = parsed === undefined ? undefined : Object.freeze(parsed);
  targets.set(endpoint, target);
  return target;
}

// The endpoint's health after one of its answers: disabled after failing for `disableAfterMs` without a success.
async function recordHealth(
  settings: WorkerSettings,
  lines: EndpointLines,
  line: EndpointLine,
  success: boolean,
  at: number,
): Promise<void> {
  const known = lines.knownHealth(line, success);
  const failingSince = known !== undefined ? known : await lines.recordHealth(line, success, at);
  if (endpointHealthAfter(failingSince, success, at, settings.disableAfterMs).disable) {
    if (await lines.disable(line, "failing", at)) {
      emit(settings, { type: "endpoint.disabled", endpointId: line.id, reason: "failing" });
    }
  }
}

/**
 * Stores a decided outcome: the delivery's new state and its log line, then the state machine's effects (disable the
 * endpoint, notify) and, for an endpoint's answer ({@link Outcome.answered}), its health (disabled after failing for
 * `disableAfterMs` without a success).
 */
export async function storeOutcome(settings: WorkerSettings, lines: EndpointLines, outcome: Outcome): Promise<void> {
  const { outgoing, result, next, finishedAt } = outcome;
  const { claim, line } = outgoing;
  const attempt: AttemptInput = {
    deliveryId: claim.id,
    endpointId: claim.endpointId,
    eventId: claim.eventId,
    attempt: next.state.attempts,
    startedAt: outgoing.sentAt,
    durationMs: result.durationMs,
    status: result.status ?? null,
    // The attempt's own kind: a `url_refused` delivery is parked as `endpoint_disabled`, its line says why.
    errorKind: result.kind === "error" ? result.errorKind : isSuccessStatus(result.status) ? null : "http_status",
    response: result.body ?? (result.kind === "error" ? (result.message ?? null) : null),
  };
  try {
    // `false`: the lease was lost and the delivery is another worker's claim now; the attempt was made all the same.
    const stored = await settings.queue.complete(claim, next.state, attempt);
    const board = settings.board;
    if (board !== undefined && outcome.shared !== undefined) {
      if (outcome.shared === null) await board.close(line.id);
      else await board.open(line.id, outcome.shared);
    }
    // Built once for the attempt event and the notification, and only when someone listens.
    const delivery = settings.listener === undefined ? undefined : { ...claim, state: next.state };
    if (delivery !== undefined) {
      emit(settings, { type: "attempt", delivery, attempt, target: targetOf(outgoing.endpoint) });
    }
    for (const effect of next.effects) {
      if (effect.type === "disable_endpoint") {
        if (await lines.disable(line, effect.reason, finishedAt)) {
          emit(settings, { type: "endpoint.disabled", endpointId: line.id, reason: effect.reason });
        }
      } else if (effect.type === "notify" && delivery !== undefined && stored) {
        // A state the queue did not store is not the delivery's: announcing it would contradict the other worker's.
        emit(settings, { type: effect.event, delivery, attempt });
      }
    }
    // Not the endpoint's answer (url_refused, request_invalid, proxy): its failing clock neither starts nor ends.
    if (outcome.answered) {
      await recordHealth(settings, lines, line, next.state.status === "delivered", finishedAt);
    }
  } finally {
    // Stored (or failed to be): the endpoint as loaded says from now on whether it is disabled.
    if (outcome.stops) line.disabling--;
  }
}
