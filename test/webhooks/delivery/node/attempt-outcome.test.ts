import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../../src/webhooks/delivery/attempt";
import { type CircuitState, closedCircuit } from "../../../../src/webhooks/delivery/circuit-breaker";
import { createEndpointAdmin } from "../../../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { decideOutcome, storeOutcome } from "../../../../src/webhooks/delivery/node/attempt-outcome";
import { EndpointLines } from "../../../../src/webhooks/delivery/node/endpoint-lines";
import { type DeliveryWorkerEvent, workerSettings } from "../../../../src/webhooks/delivery/node/worker-options";
import { fakeDispatcher } from "./fake-dispatcher";

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// One failure opens the circuit: any outcome the breaker counts shows at once.
const circuit = { window: 1, minimumAttempts: 1, failureRatio: 1, coolDownMs: 60_000 };

/**
 * A fresh endpoint with `count` deliveries published and claimed, the worker's settings over them (its events kept),
 * and the endpoint's line: what decideOutcome and storeOutcome take.
 */
async function claimedFor(count: number, disableAfterMs: number, failingSince?: number) {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints, now: () => T0 });
  const admin = createEndpointAdmin({ endpoints, queue, resolve: false, now: () => T0 });
  const created = await admin.create({ url: "https://hooks.example.com/in", enabled_events: ["*"] });
  if (!created.ok) throw new Error(created.code);
  const id = created.value.id;
  if (failingSince !== undefined) await endpoints.recordOutcome(id, false, failingSince);
  for (let i = 0; i < count; i++) await queue.publish(createEvent({ type: "order.created", data: { i } }), { now: T0 });
  const claims = await queue.claim({ limit: count, perEndpoint: count, now: T0, leaseMs: 60_000 });
  if (claims.length !== count) throw new Error(`claimed ${claims.length} of ${count}`);
  const events: DeliveryWorkerEvent[] = [];
  const settings = workerSettings({
    queue,
    endpoints,
    dispatcher: fakeDispatcher().dispatcher,
    circuit,
    disableAfterMs,
    onEvent: (event) => events.push(event),
  });
  const lines = new EndpointLines(endpoints, 0);
  const done = async () => ({
    events,
    stored: await endpoints.get(id),
    openUntil: await queue.sharedCircuits?.().openUntil(id),
  });
  return { claims, settings, lines, line: lines.lineOf(id), done };
}

/** One claimed delivery of a fresh endpoint, and what the worker would decide and store for its attempt's result. */
async function attemptOnce(
  result: AttemptResult,
  before: { failingSince?: number; circuit?: CircuitState } = {},
  disableAfterMs = 5 * DAY,
) {
  const { claims, settings, lines, line, done } = await claimedFor(1, disableAfterMs, before.failingSince);
  const endpoint = await lines.load(line, T0);
  if (endpoint === undefined) throw new Error("no endpoint");
  if (before.circuit !== undefined) line.circuit = before.circuit;
  const claim = claims[0] as (typeof claims)[number];
  const outcome = decideOutcome(settings, { claim, line, endpoint, sentAt: T0 }, result, T0 + 10);
  const circuitAfterDecision = line.circuit;
  await storeOutcome(settings, lines, outcome);
  return { outcome, circuit: circuitAfterDecision, ...(await done()) };
}

/**
 * `count` claimed deliveries of one fresh endpoint, each attempt ending with `result`, one every `stepMs` from T0 (so
 * the run spans `(count - 1) * stepMs`): what the worker decided and stored over the whole run.
 */
async function attemptRun(result: AttemptResult, count: number, stepMs: number, disableAfterMs = 5 * DAY) {
  const { claims, settings, lines, line, done } = await claimedFor(count, disableAfterMs);
  const circuits: CircuitState["status"][] = [];
  for (const [i, claim] of claims.entries()) {
    const at = T0 + i * stepMs;
    const endpoint = await lines.load(line, at);
    if (endpoint === undefined) throw new Error("no endpoint");
    const outcome = decideOutcome(settings, { claim, line, endpoint, sentAt: at }, result, at + 10);
    circuits.push(line.circuit.status);
    await storeOutcome(settings, lines, outcome);
  }
  return { circuits, ...(await done()) };
}

const refused: AttemptResult = {
  kind: "error",
  errorKind: "url_refused",
  message: "Webhooks are not sent to port 8443; the URL's port must be one of 443.",
  durationMs: 0,
};

describe("an attempt's outcome, for the circuit breaker and the endpoint's health", () => {
  // Regression: a url_refused attempt (our own decision about the URL, before any network work) opened the circuit,
  // shared it with every worker, and started (or kept) the endpoint's failing clock: re-enabled after the fix, the
  // endpoint waited out a cool-down it had never earned, and counted days toward a `failing` disable it never failed.
  describe("url_refused is no answer of the endpoint: counted neither as a failure nor as a success", () => {
    it("leaves a closed circuit as it was and opens nothing shared", async () => {
      const { outcome, circuit: after, events, openUntil } = await attemptOnce(refused);
      expect(outcome.answered).toBe(false);
      expect(after).toEqual(closedCircuit);
      expect(outcome.shared).toBeUndefined();
      expect(openUntil).toBeUndefined();
      expect(events.filter((event) => event.type === "circuit")).toEqual([]);
    });

    it("starts no failing clock", async () => {
      const { stored } = await attemptOnce(refused);
      expect(stored).toMatchObject({ status: "disabled", disabledReason: "url_refused", failingSince: null });
    });

    it("keeps the failing clock of an endpoint that was failing (neither reset nor moved)", async () => {
      const since = T0 - HOUR;
      const { stored } = await attemptOnce(refused, { failingSince: since });
      expect(stored).toMatchObject({ disabledReason: "url_refused", failingSince: since });
    });

    it("leaves a half-open circuit waiting for a probe the endpoint answers", async () => {
      const probing: CircuitState = { status: "half_open", failures: 1, count: 1, openedAt: T0 - 1 };
      const { circuit: after, events } = await attemptOnce(refused, { circuit: probing });
      expect(after).toEqual(probing);
      expect(events.filter((event) => event.type === "circuit")).toEqual([]);
    });

    it("an endpoint failing past disableAfterMs is disabled url_refused, never announced failing", async () => {
      const { events, stored } = await attemptOnce(refused, { failingSince: T0 - 6 * DAY });
      expect(stored).toMatchObject({ status: "disabled", disabledReason: "url_refused" });
      expect(events.filter((event) => event.type === "endpoint.disabled")).toEqual([
        { type: "endpoint.disabled", endpointId: stored?.id, reason: "url_refused" },
      ]);
    });
  });

  // The endpoint's answers (and what its name resolves to, which may change) still count: 410 Gone included, though
  // it disables the endpoint.
  describe.each<[string, AttemptResult]>([
    ["a 500", { kind: "response", status: 500, durationMs: 3 }],
    ["a 410 Gone", { kind: "response", status: 410, durationMs: 3 }],
    ["a connection refused", { kind: "error", errorKind: "connection_refused", durationMs: 3 }],
    ["an ssrf_blocked (a resolved address)", { kind: "error", errorKind: "ssrf_blocked", durationMs: 0 }],
  ])("%s is the endpoint's failure", (_name, result) => {
    it("opens the circuit for every worker and starts the failing clock", async () => {
      const { outcome, circuit: after, events, stored, openUntil } = await attemptOnce(result);
      expect(outcome.answered).toBe(true);
      expect(after.status).toBe("open");
      expect(outcome.shared).toBe(T0 + 10 + circuit.coolDownMs);
      expect(openUntil).toBe(T0 + 10 + circuit.coolDownMs);
      expect(events).toContainEqual({ type: "circuit", endpointId: stored?.id, status: "open" });
      expect(stored?.failingSince).toBe(T0 + 10);
    });
  });

  // Regression: a run of `proxy` failures (our egress proxy down, or refusing the tunnel) or `request_invalid` ones
  // (the request could not be built or signed: nothing was sent) opened every endpoint's circuit and, kept up past
  // disableAfterMs, disabled healthy endpoints as `failing`. Neither is the endpoint's answer.
  describe.each<[string, AttemptResult]>([
    ["proxy", { kind: "error", errorKind: "proxy", message: "proxy refused the tunnel (407)", durationMs: 2 }],
    ["request_invalid", { kind: "error", errorKind: "request_invalid", message: "no signing keys", durationMs: 0 }],
  ])("%s is no answer of the endpoint, however many in a row", (_name, result) => {
    it("opens no circuit, starts no failing clock, disables nothing; each is retried", async () => {
      const { circuits, events, stored, openUntil } = await attemptRun(result, 8, DAY);
      expect(circuits).toEqual(Array(8).fill("closed"));
      expect(openUntil).toBeUndefined();
      expect(events.filter((event) => event.type === "circuit" || event.type === "endpoint.disabled")).toEqual([]);
      expect(stored).toMatchObject({ status: "enabled", failingSince: null });
      // The retry decision is unchanged: each delivery is scheduled again, none parked.
      const retried = events.filter((event) => event.type === "attempt").map((event) => event.delivery.state.status);
      expect(retried).toEqual(Array(8).fill("failed"));
    });

    it("keeps the failing clock of an endpoint that was failing (neither reset nor moved)", async () => {
      const since = T0 - HOUR;
      const { stored } = await attemptOnce(result, { failingSince: since });
      expect(stored).toMatchObject({ status: "enabled", failingSince: since });
    });
  });

  it("the control: a run of connection_refused opens the circuit and disables the endpoint failing", async () => {
    const result: AttemptResult = { kind: "error", errorKind: "connection_refused", durationMs: 2 };
    const { circuits, events, stored } = await attemptRun(result, 8, DAY);
    expect(circuits[0]).toBe("open");
    expect(stored).toMatchObject({ status: "disabled", disabledReason: "failing", failingSince: T0 + 10 });
    expect(events).toContainEqual({ type: "endpoint.disabled", endpointId: stored?.id, reason: "failing" });
  });

  it("a 2xx closes a half-open circuit and ends the failing clock", async () => {
    const probing: CircuitState = { status: "half_open", failures: 1, count: 1, openedAt: T0 - 1 };
    const ok: AttemptResult = { kind: "response", status: 204, durationMs: 3 };
    const { circuit: after, stored } = await attemptOnce(ok, { circuit: probing, failingSince: T0 - HOUR });
    expect(after).toEqual(closedCircuit);
    expect(stored).toMatchObject({ status: "enabled", failingSince: null });
  });
});
