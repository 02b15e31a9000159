import { setMaxListeners } from "node:events";
import { timerDelay } from "../../../options/timer-delay";
import type { AttemptResult } from "../attempt";
import type { CircuitState } from "../circuit-breaker";
import type { ClaimedDelivery } from "../delivery-queue";
import { buildDeliveryRequest, type DeliveryRequest, signedAsOf } from "../delivery-request";
import { DeliveryScheduler, verdictOf } from "../delivery-scheduler";
import type { WebhookEndpoint } from "../endpoint";
import { WebhookDeliveryError } from "../errors";
import { transition } from "../state-machine";
import { decideOutcome, type Outgoing, requestInvalid, storeOutcome } from "./attempt-outcome";
import { ClaimPump } from "./claim-pump";
import { admit, holdBack, probeHeldBack, ratePermit, receivesClaim } from "./delivery-admission";
import { type EndpointLine, EndpointLines, fresh } from "./endpoint-lines";
import { LeaseHeartbeat } from "./lease-heartbeat";
import { type DeliveryWorker, type DeliveryWorkerOptions, emit, workerSettings } from "./worker-options";

// How long stop() waits, past the grace period, for the queue to take back what was in flight (issue 15: "stop()
// resolves within the grace period plus 1 s").
const STOP_SETTLE_MS = 1_000;

/** The shared circuit's probe a delivery won at admission: its hold's end on the board, and its circuit as won. */
interface HeldProbe {
  readonly until: number;
  readonly as: CircuitState;
}

// One signal for every attempt in flight (each request listens to it): no listener limit, no leak warning.
function stopSignal(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/**
 * Creates the delivery worker. Each claimed delivery runs one pipeline: claim → admit (endpoint, circuit) → a slot
 * (signed while it waits for one, when the signature would be the same at the send) → last look (circuit, rate
 * limit) → send → decide → store. The scheduling policy (slots, per-endpoint caps with AIMD, fair claims) is
 * `DeliveryScheduler`; leases are renewed while attempts run; one timer serves every scheduled retry.
 * Several workers (and processes) may share one PostgreSQL queue.
 * @example
 * const worker = createDeliveryWorker({ queue, endpoints });
 * worker.start();
 * process.on("SIGTERM", () => worker.stop());
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const settings = workerSettings(options);
  const { queue, now, config } = settings;
  // The worker's own dispatcher is closed by stop() and made anew by the next start(); one passed in is the caller's,
  // never closed.
  let dispatcher = settings.dispatcher;
  let dispatcherClosed = false;
  const scheduler = new DeliveryScheduler(settings);
  const lines = new EndpointLines(settings.endpoints, settings.cacheMs);
  // Claims held, each with the end of its lease as last known (claimed or renewed; -Infinity: found lost).
  const held = new Map<ClaimedDelivery, number>();
  // Attempts in flight, each ended early (as aborted) when stop()'s grace period ends; the signal tells the dispatcher.
  const attempts = new Set<() => void>();
  let abort = stopSignal();
  // Deliveries admitted and waiting for an attempt slot, first come first served; and for their endpoint's turn.
  const waiting: ((granted: boolean) => void)[] = [];
  const endpointWaiting = new Map<string, ((granted: boolean) => void)[]>();
  const idle: (() => void)[] = [];
  let returning = 0; // claims refused by the scheduler, on their way back to the queue
  let running = false;
  let unsubscribe: (() => void) | undefined;
  let unwatch: (() => void) | undefined;
  // A stop() under way, and whether start() was asked for meanwhile (it starts once the stop is over).
  let stopping: Promise<void> | undefined;
  let restart = false;

  const report = (error: unknown) => emit(settings, { type: "error", error });
  // The endpoint store stopped hearing other processes' writes for a while: what they change meanwhile is seen
  // within endpointCacheMs, as without a watch, until the store hears again (it reconnects on its own).
  const watchLost = (cause: Error) =>
    report(
      new WebhookDeliveryError(
        "endpoint_watch_lost",
        `The endpoint store stopped hearing other processes' endpoint writes (${cause.message}); it reconnects on its ` +
          "own, and endpoints changed meanwhile are read again within endpointCacheMs.",
        { cause },
      ),
    );
  const pause = () => 20 + Math.floor(settings.random() * 30);
  const heartbeat = new LeaseHeartbeat({
    queue,
    now,
    leaseMs: settings.leaseMs,
    claims: () => [...held.keys()],
    renewed(claims, ids, until) {
      const kept = new Set(ids);
      for (const claim of claims) {
        if (held.has(claim)) held.set(claim, kept.has(claim.id) ? until : Number.NEGATIVE_INFINITY);
      }
    },
    onError: report,
  });
  const pump = new ClaimPump({
    queue,
    now,
    leaseMs: settings.leaseMs,
    pollMs: settings.pollMs,
    running: () => running,
    held: () => scheduler.held,
    wants: (news) => scheduler.wantsClaim(news),
    request: () => scheduler.claimRequest(),
    claimed: () => scheduler.claimed(),
    admit: (claim) => void deliver(claim),
    onError: report,
  });

  // Back to the queue, due at `until`, without using an attempt. Async: a queue of one's own that throws rather than
  // rejects must still reach the caller's catch (else an unhandled rejection, and stop() waiting for ever).
  async function handBack(claim: ClaimedDelivery, until: number): Promise<unknown> {
    return queue.complete(claim, transition(claim.state, { type: "defer", until }, now(), config).state);
  }

  // Back to the queue as handBack does, and the shared circuit's probe the delivery won (`probe`) released: a probe
  // that goes back unsent or unanswered (stopped, lease lost) is over for all, so another worker's may go now, not
  // after the probe hold, a whole lease (CircuitBoard.releaseProbe).
  async function giveBack(
    claim: ClaimedDelivery,
    line: EndpointLine,
    probe: HeldProbe | undefined,
    until: number,
  ): Promise<unknown> {
    if (probe !== undefined) await probeHeldBack(settings, line, probe.until, probe.as, now()).catch(report);
    return handBack(claim, until);
  }

  // One claimed delivery, start to end.
  async function deliver(claim: ClaimedDelivery): Promise<void> {
    if (!scheduler.hold(claim.endpointId)) {
      // Its endpoint has no room here (the claim raced a cap cut): back at once for a worker that has.
      returning++;
      await handBack(claim, now()).catch(report);
      returning--;
      settle();
      return;
    }
    held.set(claim, claim.leaseUntil);
    let stored = false; // its outcome is being stored (or was)
    let sending = false; // holding the endpoint's turn and a slot
    try {
      const line = lines.lineOf(claim.endpointId);
      // Hot (bench/delivery, "worker … with a no-op dispatcher"): the usual case — the endpoint cached, no rate limit,
      // a free turn and slot — goes through without a promise; each await costs a microtask and an allocation.
      const at = now();
      // With a shared circuit board, the board is read (at most every endpointCacheMs) on the slow path.
      const board = settings.board;
      const shared =
        board === undefined || (line.sharedOpenUntil === undefined && fresh(line.sharedAt, at, settings.cacheMs));
      const ready = shared ? lines.ready(line, at) : undefined;
      const admission =
        ready !== undefined && receivesClaim(ready, claim)
          ? ({ type: "send", endpoint: ready } as const)
          : await admit(settings, lines, claim, line, at);
      if (admission.type === "parked") return;
      if (admission.type === "later") {
        await handBack(claim, admission.until);
        return;
      }
      // The shared circuit's probe, when admission won it: released if the delivery goes back unsent (giveBack).
      const heldProbe: HeldProbe | undefined =
        admission.probe === undefined ? undefined : { until: admission.probe, as: line.circuit };
      if (!running) {
        await giveBack(claim, line, heldProbe, now());
        return;
      }
      const traceparent = settings.propagateTraceContext ? claim.traceparent : undefined;
      const tracestate = traceparent === undefined ? undefined : claim.tracestate;
      // A delivery that must wait for its turn is signed while it waits, and sent with that signature if it is what
      // signing at the send would give (signedAsOf): at one attempt in flight the worker is idle while the request
      // ahead is out, so the signing leaves the path between two attempts (bench/delivery, loop c=1).
      let early: DeliveryRequest | undefined;
      const earlyEndpoint = line.endpoint;
      let earlyAt = 0;
      const endpointTurn = scheduler.takeEndpointSlot(claim.endpointId);
      const turn = endpointTurn && scheduler.takeSlot();
      if (!turn && earlyEndpoint !== undefined) {
        earlyAt = now();
        early = buildEarly(claim, earlyEndpoint, earlyAt, traceparent, tracestate);
      }
      if (!endpointTurn && !(await endpointSlot(claim.endpointId))) {
        await giveBack(claim, line, heldProbe, now()); // stopping: due at once, for another worker
        return;
      }
      // A slot: already tried above when the endpoint's turn came at once.
      if (!turn && (endpointTurn || !scheduler.takeSlot()) && !(await slot())) {
        freeEndpointSlot(claim.endpointId);
        await giveBack(claim, line, heldProbe, now());
        return;
      }
      sending = true;
      // The shared circuit as of the send, not the admission: a delivery that waited for its turn while another
      // worker opened it was sent into the open circuit, however long past endpointCacheMs ("other workers learn of
      // it within endpointCacheMs"). Only ever to learn it opened: this worker's own outcome may have opened it
      // meanwhile, its write to the board still under way.
      if (board !== undefined && line.sharedOpenUntil === undefined && admission.probe === undefined) {
        const readAt = now();
        if (!fresh(line.sharedAt, readAt, settings.cacheMs)) {
          const until = await board.openUntil(line.id);
          if (line.sharedOpenUntil === undefined) {
            line.sharedOpenUntil = until;
            line.sharedAt = readAt;
          }
        }
      }
      // A slot granted just before stop() is taken up in a later microtask: by then nothing new may go out.
      const until = running ? holdBack(settings, line, now(), pause(), admission.probe) : now();
      const endpoint = line.endpoint;
      // Read again while the delivery waited (another endpoint under its id since): admission refuses it next time.
      if (until !== undefined || endpoint === undefined || !receivesClaim(endpoint, claim)) {
        await giveBack(claim, line, heldProbe, until ?? now());
        return;
      }
      // The rate limit last, so a delivery that waited for its turn is paced as of its send (see ratePermit).
      if (endpoint.rateLimit !== null) {
        const passedAs = line.circuit;
        const retryAt = await ratePermit(settings, endpoint.id, endpoint.rateLimit, now());
        if (retryAt !== undefined || !running) {
          if (retryAt !== undefined)
            await probeHeldBack(settings, line, admission.probe, passedAs, retryAt).catch(report);
          await (retryAt === undefined ? giveBack(claim, line, heldProbe, now()) : handBack(claim, retryAt));
          return;
        }
      }
      const sentAt = now();
      // A lease that ran out while the delivery waited (or that the heartbeat found lost) may be another worker's claim
      // now, which it may already have sent: back to the queue (a no-op if it is another's), never sent twice. The same
      // for a probe whose hold on the board ran out while it waited: another worker may hold the probe now.
      if (!(sentAt < (held.get(claim) as number)) || (heldProbe !== undefined && !(sentAt < heldProbe.until))) {
        await giveBack(claim, line, heldProbe, sentAt);
        return;
      }
      let request =
        early !== undefined && earlyEndpoint === endpoint && signedAsOf(endpoint, earlyAt, sentAt) ? early : undefined;
      let result: AttemptResult | undefined;
      try {
        request ??= buildDeliveryRequest(claim, endpoint, sentAt, {
          userAgent: settings.userAgent,
          traceparent,
          tracestate,
        });
      } catch (error) {
        result = requestInvalid(error, now() - sentAt);
      }
      const outgoing: Outgoing = { claim, line, endpoint, sentAt };
      if (request !== undefined) result = await attempt(request, sentAt);
      if (result === undefined) {
        // Aborted by stop(): not an attempt that failed, so it goes back as it was, due at once.
        await giveBack(claim, line, heldProbe, now());
        return;
      }
      const outcome = decideOutcome(settings, outgoing, result, now());
      // Before storing: the next attempt goes out while this outcome is written, and the next claims are not held back
      // by it.
      sending = false;
      release(claim.endpointId);
      scheduler.storing(claim.endpointId, verdictOf(result));
      stored = true;
      await afterSends();
      await storeOutcome(settings, lines, outcome);
    } catch (error) {
      // Reported; the lease brings the delivery back.
      report(error);
    } finally {
      if (sending) release(claim.endpointId);
      held.delete(claim);
      scheduler.finish(claim.endpointId, stored);
      settle();
    }
  }

  // Hot (bench/delivery, loop c=1): outcomes are stored after this turn's requests are written. undici writes a
  // request on a reused keep-alive connection from a setImmediate (it first reads what the idle socket may hold,
  // GHSA-35p6-xmwp-9g52), so storing an outcome in the microtasks before would delay the next request by the
  // store's work: at one attempt in flight, 5–8 % of the deliveries per second. The microtask lets the next attempt
  // dispatch (and undici queue its write) first; the outcomes of one turn share one immediate.
  let sends: Promise<void> | undefined;
  function afterSends(): Promise<void> {
    sends ??= new Promise((resolve) =>
      queueMicrotask(() =>
        setImmediate(() => {
          sends = undefined;
          resolve();
        }),
      ),
    );
    return sends;
  }

  function settle(): void {
    if (held.size + returning === 0) for (const resolve of idle.splice(0)) resolve();
    pump.kick();
  }

  // An attempt's slot and its endpoint's turn pass on.
  function release(endpointId: string): void {
    freeSlot();
    freeEndpointSlot(endpointId);
  }

  // Signing ahead only saves time: a request that cannot be built here is built again at the send, and counted there.
  function buildEarly(
    claim: ClaimedDelivery,
    endpoint: WebhookEndpoint,
    at: number,
    traceparent: string | undefined,
    tracestate: string | undefined,
  ): DeliveryRequest | undefined {
    try {
      return buildDeliveryRequest(claim, endpoint, at, { userAgent: settings.userAgent, traceparent, tracestate });
    } catch {
      return undefined;
    }
  }

  // Sends; `undefined` when the attempt was aborted (the dispatcher's late answer, if any, is ignored). A dispatch that
  // throws or rejects (Dispatcher: a request it cannot frame) is an attempt that failed, as a request that cannot be
  // built is: left to the lease, it was claimed and sent again every leaseMs for ever, no attempt ever counted.
  function attempt(request: DeliveryRequest, sentAt: number): Promise<AttemptResult | undefined> {
    const signal = abort.signal;
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const aborted = () => resolve(undefined);
      attempts.add(aborted);
      let sent: Promise<AttemptResult>;
      try {
        sent = dispatcher.dispatch(request, { signal });
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent.then(
        (result) => {
          attempts.delete(aborted);
          resolve(signal.aborted ? undefined : result);
        },
        (error: unknown) => {
          attempts.delete(aborted);
          resolve(signal.aborted ? undefined : requestInvalid(error, now() - sentAt));
        },
      );
    });
  }

  // One of the endpoint's sending places, in turn (the caller tried to take one at once); `false` when stopped. Asked
  // for after stop() released the waiters (a turn granted just before it): `false` at once, not a wait for a slot.
  function endpointSlot(endpointId: string): Promise<boolean> {
    if (!running) return Promise.resolve(false);
    return new Promise((resolve) => {
      let line = endpointWaiting.get(endpointId);
      if (line === undefined) {
        line = [];
        endpointWaiting.set(endpointId, line);
      }
      line.push(resolve);
    });
  }

  // A freed place passes straight to the endpoint's first waiter, if its cap (which may have been cut) allows.
  function freeEndpointSlot(endpointId: string): void {
    scheduler.freeEndpointSlot(endpointId);
    const line = endpointWaiting.get(endpointId);
    if (line === undefined) return;
    while (line.length > 0 && scheduler.takeEndpointSlot(endpointId)) (line.shift() as (ok: boolean) => void)(true);
    if (line.length === 0) endpointWaiting.delete(endpointId);
  }

  // A slot for an attempt, in turn (the caller tried to take one at once); `false` when the worker stopped meanwhile,
  // or had already: waiting after stop() released the waiters held the claim, and stop(), until an attempt ended.
  function slot(): Promise<boolean> {
    if (!running) return Promise.resolve(false);
    return new Promise((resolve) => waiting.push(resolve));
  }

  // A freed slot passes straight to the first waiter.
  function freeSlot(): void {
    const next = waiting.shift();
    if (next !== undefined) next(true);
    else scheduler.freeSlot();
  }

  // Whichever comes first ends the wait and undoes the other: no timer outlives the wait, and a long wait on a busy
  // worker (drained() while deliveries keep coming) does not pile up a waiter every 5 ms.
  function settledOrSoon(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        const at = idle.indexOf(done);
        if (at !== -1) idle.splice(at, 1);
        resolve();
      };
      const timer = setTimeout(done, 5);
      if (held.size + returning > 0) idle.push(done);
    });
  }

  function begin(): void {
    running = true;
    if (abort.signal.aborted) abort = stopSignal();
    if (dispatcherClosed) {
      dispatcher = settings.newDispatcher();
      dispatcherClosed = false;
    }
    unsubscribe = queue.subscribe?.(() => pump.kick(true));
    unwatch = lines.follow(watchLost);
    heartbeat.start();
    pump.kick(true);
  }

  async function halt(): Promise<void> {
    running = false;
    pump.stop();
    unsubscribe?.();
    unsubscribe = undefined;
    unwatch?.();
    unwatch = undefined;
    // Nothing new goes out: deliveries waiting for a slot go back to the queue.
    for (const resolve of waiting.splice(0)) resolve(false);
    for (const line of endpointWaiting.values()) for (const resolve of line.splice(0)) resolve(false);
    endpointWaiting.clear();
    // Attempts in flight get the grace period, then are aborted and handed back. A grace past a timer's reach (over
    // 24.8 days, with as long a time-out) aborted them at once; it is cut to that reach.
    const grace = setTimeout(() => {
      abort.abort();
      for (const aborted of attempts) aborted();
      attempts.clear();
    }, timerDelay(settings.stopGraceMs));
    // Issue 15: stop() resolves within the grace period plus STOP_SETTLE_MS. A queue that never answers (a database
    // hanging, not down) held it for ever: past that, what is still being handed back or stored is left to its lease,
    // which the stopped heartbeat no longer renews, so another worker gets it within one lease.
    let givenUp = false;
    const deadline = setTimeout(
      () => {
        givenUp = true;
      },
      timerDelay(settings.stopGraceMs + STOP_SETTLE_MS),
    );
    try {
      while ((held.size + returning > 0 || pump.pumping) && !givenUp) await settledOrSoon();
      const left = held.size + returning;
      if (left > 0 || pump.pumping) {
        report(
          new WebhookDeliveryError(
            "stop_timed_out",
            `stop(): the queue did not answer within ${STOP_SETTLE_MS} ms of the grace period; ${left} ${left === 1 ? "delivery" : "deliveries"} left to their leases${pump.pumping ? ", and a claim under way" : ""}.`,
          ),
        );
      }
    } finally {
      clearTimeout(grace);
      clearTimeout(deadline);
      heartbeat.stop();
      if (settings.ownDispatcher && !dispatcherClosed) {
        dispatcher.close();
        dispatcherClosed = true;
      }
    }
  }

  return {
    start() {
      if (running) return;
      // Started again before the stop is over: once it is (its dispatcher closed, its deliveries handed back).
      if (stopping !== undefined) restart = true;
      else begin();
    },
    stop() {
      restart = false;
      stopping ??= halt().finally(() => {
        stopping = undefined;
        if (restart) {
          restart = false;
          begin();
        }
      });
      return stopping;
    },
    wake: () => pump.kick(true),
    async drained() {
      for (;;) {
        if (held.size + returning === 0 && !pump.pumping && (await queue.nextDueAt()) === undefined) return;
        await settledOrSoon();
      }
    },
    get inFlight() {
      return held.size;
    },
  };
}
