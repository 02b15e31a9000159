import type { AttemptResult } from "../attempt";
import { circuitAllows } from "../circuit-breaker";
import type { ClaimedDelivery } from "../delivery-queue";
import { buildDeliveryRequest } from "../delivery-request";
import type { WebhookEndpoint } from "../endpoint";
import { transition } from "../state-machine";
import { decideOutcome, type Outcome, type Outgoing, storeOutcome } from "./attempt-outcome";
import { ClaimPump } from "./claim-pump";
import { prepareSlowly } from "./delivery-admission";
import { type EndpointLine, EndpointLines } from "./endpoint-lines";
import { type DeliveryWorker, type DeliveryWorkerOptions, emit, workerSettings } from "./worker-options";

const IN_LINE = -1;

/**
 * Creates the delivery worker: claims due deliveries, signs each attempt afresh, sends it, and runs the state
 * machine's effects. One timer serves every scheduled retry: it sleeps until the queue's earliest due time.
 * Several workers (and processes) may share one PostgreSQL queue.
 * @example
 * const worker = createDeliveryWorker({ queue, endpoints });
 * worker.start();
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const settings = workerSettings(options);
  const { queue, dispatcher, now, concurrency, endpointConcurrency, lookahead, batch, circuit, config } = settings;
  const lines = new EndpointLines<Outgoing>(settings.endpoints, settings.cacheMs);
  // Pipelining: up to `lookahead` deliveries wait claimed and signed, so when an attempt ends the next one goes out at
  // once, and storing the outcome, claiming and signing happen while that request is in flight.
  const ready: Outgoing[] = [];
  const toStore: Outcome[] = [];
  let held = 0; // claims taken and not finished
  let active = 0; // claims holding one of the `concurrency` slots (in an HTTP exchange or in an endpoint's line)
  let unsent = 0; // claims being prepared or ready, without a slot yet
  let running = false;
  let unsubscribe: (() => void) | undefined;
  const idle: (() => void)[] = [];

  const report = (error: unknown) => emit(settings, { type: "error", error });
  const pause = () => 20 + Math.floor(settings.random() * 30);
  const pump = new ClaimPump({
    queue,
    now,
    leaseMs: settings.leaseMs,
    pollMs: settings.pollMs,
    running: () => running,
    held: () => held,
    wanted,
    admit,
    onError: report,
  });

  // Slots and ready places to fill; records in progress are capped too. With work in flight, claims wait for a batch.
  function wanted(): number {
    const free = Math.min(concurrency + lookahead - active - unsent, 2 * concurrency + lookahead - held);
    return free >= (active + unsent === 0 ? 1 : batch) ? free : 0;
  }

  function finish(): void {
    held--;
    if (held === 0) for (const resolve of idle.splice(0)) resolve();
    pump.kick();
  }

  function failed(error: unknown): void {
    report(error);
    finish();
  }

  // Hands a claim back to the queue, due at `until`, without using an attempt (circuit open, rate limit, busy).
  function handBack(claim: ClaimedDelivery, until: number, at: number): void {
    const state = transition(claim.state, { type: "defer", until }, at, config).state;
    queue.complete(claim, state).then(finish, failed);
  }

  function signed(claim: ClaimedDelivery, line: EndpointLine<Outgoing>, endpoint: WebhookEndpoint): Outgoing {
    const at = now();
    const request = buildDeliveryRequest(claim, endpoint, at, settings.userAgent);
    return { claim, line, endpoint, request, signedSecond: Math.floor(at / 1000), sentAt: at };
  }

  function admit(claim: ClaimedDelivery): void {
    held++;
    unsent++;
    const line = lines.lineOf(claim.endpointId);
    const at = now();
    const endpoint = lines.ready(line, at);
    if (endpoint === undefined) {
      prepareSlowly(settings, lines, claim, line, at, signed).then(
        (outgoing) => (outgoing === undefined ? dropUnsent() : enqueue(outgoing)),
        (error: unknown) => {
          unsent--;
          failed(error);
        },
      );
      return;
    }
    // An open circuit sends nothing: back to the queue at once (looked at without taking the half-open probe).
    const allowed = circuit === undefined ? undefined : circuitAllows(line.circuit, at, circuit);
    if (allowed !== undefined && !allowed.allowed) {
      unsent--;
      handBack(claim, allowed.retryAt, at);
      return;
    }
    let outgoing: Outgoing;
    try {
      outgoing = signed(claim, line, endpoint);
    } catch (error) {
      unsent--;
      failed(error);
      return;
    }
    enqueue(outgoing);
  }

  function dropUnsent(): void {
    unsent--;
    finish();
  }

  function enqueue(outgoing: Outgoing): void {
    if (!running) {
      // Stopping: what has not gone out goes back to the queue, due at once.
      unsent--;
      const at = now();
      handBack(outgoing.claim, at, at);
    } else if (active < concurrency && ready.length === 0) take(outgoing);
    else ready.push(outgoing);
  }

  function take(outgoing: Outgoing): void {
    unsent--;
    active++;
    go(outgoing, now());
  }

  // With a worker slot held: send now, or wait in the endpoint's line, or go back to the queue for now.
  function go(outgoing: Outgoing, at: number): void {
    const until = holdUntil(outgoing, at);
    if (until === undefined) send(outgoing, at);
    else if (until !== IN_LINE) {
      active--;
      handBack(outgoing.claim, until, at);
    }
  }

  // `undefined` to send now, IN_LINE once it waits for one of the endpoint's slots, else when to try again.
  function holdUntil(outgoing: Outgoing, at: number): number | undefined {
    const line = outgoing.line;
    if (line.disabling > 0 || line.endpoint?.status !== "enabled") return at + pause();
    if (line.busy >= endpointConcurrency) {
      // Wait for a slot while the line of waiters is short; beyond that, hand the delivery back for a moment.
      if (line.waiting.length >= endpointConcurrency) return at + pause();
      line.waiting.push(outgoing);
      return IN_LINE;
    }
    if (circuit === undefined) return undefined;
    // The circuit is asked once, right before sending: a half-open circuit lets exactly this one probe through.
    const allowed = circuitAllows(line.circuit, at, circuit);
    line.circuit = allowed.state;
    return allowed.allowed ? undefined : allowed.retryAt;
  }

  function send(outgoing: Outgoing, at: number): void {
    const line = outgoing.line;
    line.busy++;
    outgoing.sentAt = at;
    let sent: Promise<AttemptResult>;
    try {
      // Signed ahead: signed again if its second has passed or the endpoint (secrets, URL) was read anew since.
      const endpoint = line.endpoint as WebhookEndpoint;
      if (Math.floor(at / 1000) !== outgoing.signedSecond || endpoint !== outgoing.endpoint) {
        outgoing.endpoint = endpoint;
        outgoing.request = buildDeliveryRequest(outgoing.claim, endpoint, at, settings.userAgent);
        outgoing.signedSecond = Math.floor(at / 1000);
      }
      sent = dispatcher.dispatch(outgoing.request);
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent.then(
      (result) => {
        let outcome: Outcome;
        try {
          outcome = decideOutcome(settings, outgoing, result, now());
        } catch (error) {
          // A throwing `retry` or `retryable`: reported, and the lease brings the delivery back.
          release(line);
          failed(error);
          return;
        }
        release(line);
        if (toStore.push(outcome) === 1) setImmediate(storeAll);
      },
      (error: unknown) => {
        release(line);
        failed(error);
      },
    );
  }

  // An attempt's slots pass on: to the endpoint's next waiter, then to the ready deliveries.
  function release(line: EndpointLine<Outgoing>): void {
    line.busy--;
    active--;
    const waiter = line.waiting.shift();
    if (waiter !== undefined) go(waiter, now());
    while (active < concurrency && ready.length > 0) take(ready.shift() as Outgoing);
  }

  // After the next requests went out (a macrotask later): store the outcomes, then claim and sign more.
  function storeAll(): void {
    for (const outcome of toStore.splice(0)) storeOutcome(settings, lines, outcome).then(finish, failed);
    pump.kick();
  }

  function settledOrSoon(): Promise<void> {
    return new Promise((resolve) => {
      if (held > 0) idle.push(resolve);
      setTimeout(resolve, 5);
    });
  }

  return {
    start() {
      if (running) return;
      running = true;
      unsubscribe = queue.subscribe?.(() => pump.kick());
      pump.kick();
    },
    async stop() {
      running = false;
      pump.stop();
      unsubscribe?.();
      unsubscribe = undefined;
      const at = now();
      for (const outgoing of ready.splice(0)) {
        unsent--;
        handBack(outgoing.claim, at, at);
      }
      while (held > 0 || pump.pumping) await settledOrSoon();
      if (settings.ownDispatcher) dispatcher.close();
    },
    wake: () => pump.kick(),
    async drained() {
      for (;;) {
        if (held === 0 && !pump.pumping && (await queue.nextDueAt()) === undefined) return;
        await settledOrSoon();
      }
    },
    get inFlight() {
      return held;
    },
  };
}
