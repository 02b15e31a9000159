/**
 * A model-based test of the webhook processor (createWebhookProcessor: its startDue and processDue steps, and the
 * runner's stop()): random sequences of adds, steps of two processors sharing one inbox, clock steps, deadlines ended
 * by hand, and claims by a processor that dies holding the lease, each event's handler scripted per attempt (succeeds,
 * throws, or hangs until its deadline). Run on the memory inbox, on PGlite and on the PostgreSQL server; every step is
 * checked against a small reference written here from docs/webhooks-consumers.md ("Processing: once in effect",
 * "Retries and dead letters", "Handler time-outs", retainDoneMs). Times come from a model clock; nothing reads the
 * wall clock. One file past 300 lines, as inbox-model.test.ts: the reference, the harness and the stop() runs share
 * the scripted handler and the hand-ended deadlines.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createWebhookProcessor,
  exponentialBackoff,
  type Inbox,
  type InboxEvent,
  type InboxEventHandler,
  type ProcessorReport,
  type WebhookProcessor,
} from "../../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../../src/webhooks/consumer/memory/index";
import { startWebhookProcessor } from "../../../src/webhooks/consumer/node/index";
import { databases } from "../../support/databases";
import { suiteInbox } from "./support";

const T0 = 1_700_000_000_000;
const IDS = ["e0", "e1", "e2", "e3"] as const;
const LEASE_MS = 2_000;
const GHOST_LEASE_MS = 1_000;
/** Above every claim's due events: a step claims all of them, so the model knows which. */
const LIMIT = 10;

type Behaviour = "ok" | "throw" | "hang";
/** Per id, what its handler does at attempt n (index n - 1); "ok" past the end. */
type Script = readonly (readonly Behaviour[])[];

// ---------------------------------------------------------------------------------------------------------------
// The retry policies under test, and the reference's own reading of them (the documented formula, not the code).

interface Policy {
  /** undefined: the processor's default. */
  option: ReturnType<typeof exponentialBackoff> | undefined;
  baseMs: number;
  capMs: number;
  maxAttempts: number;
}

const POLICIES: readonly Policy[] = [
  // The documented default: exponentialBackoff({ baseMs: 1_000, capMs: 3_600_000, maxAttempts: 8 }), full jitter.
  { option: undefined, baseMs: 1_000, capMs: 3_600_000, maxAttempts: 8 },
  {
    option: exponentialBackoff({ baseMs: 500, capMs: 1_500, maxAttempts: 3 }),
    baseMs: 500,
    capMs: 1_500,
    maxAttempts: 3,
  },
  // One attempt: a processor that died holding the lease used it up (attempts_exhausted at the next claim).
  { option: exponentialBackoff({ maxAttempts: 1 }), baseMs: 1_000, capMs: 3_600_000, maxAttempts: 1 },
];

/** Full jitter: after failure n, floor(random × min(cap, base × 2^(n-1))); none left at maxAttempts. */
function modelDelay(policy: Policy, random: number, attempts: number): number | undefined {
  if (attempts >= policy.maxAttempts) return undefined;
  return Math.floor(random * Math.min(policy.capMs, policy.baseMs * 2 ** (attempts - 1)));
}

// ---------------------------------------------------------------------------------------------------------------
// Operations

type Op =
  | { kind: "add"; id: number }
  | { kind: "tick"; ms: number }
  /**
   * A step: `startDue` (what the runner calls), leaving hung attempts running; or, `whole`, `processDue`, which waits
   * for its batch (each hung attempt ended at its deadline) and reports its purge.
   */
  | { kind: "step"; processor: 0 | 1; whole: boolean }
  | { kind: "expire" }
  | { kind: "ghost" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("add" as const), id: fc.nat(IDS.length - 1) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(0, 1, 500, 1_000, 2_000, 6_000) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      processor: fc.constantFrom(0 as const, 1 as const),
      whole: fc.constantFrom(false, false, true),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "expire" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "ghost" as const }) },
);

const behaviourArb = fc.constantFrom<Behaviour>("ok", "throw", "throw", "hang");
const scriptArb: fc.Arbitrary<Script> = fc.array(fc.array(behaviourArb, { maxLength: 9 }), {
  minLength: IDS.length,
  maxLength: IDS.length,
});

interface Setup {
  policy: number;
  random: number;
  /** undefined: the default (7 days). */
  retainDoneMs: number | false | undefined;
}

const setupArb: fc.Arbitrary<Setup> = fc.record({
  policy: fc.nat(POLICIES.length - 1),
  random: fc.constantFrom(0, 0.5, 0.999),
  retainDoneMs: fc.constantFrom<number | false | undefined>(undefined, false, 2_000, 2_000),
});

// ---------------------------------------------------------------------------------------------------------------
// The reference model

type State = "pending" | "processing" | "failed" | "done" | "dead";

interface Stored {
  state: State;
  attempts: number;
  availableAt: number | undefined;
  lastCode: string | undefined;
  doneAt: number | undefined;
  /** A hung attempt holds it: no claim takes it, even past its lease. */
  running: boolean;
}

interface Totals {
  claimed: number;
  done: number;
  retried: number;
  dead: number;
  lost: number;
  errors: number;
}

const zero = (): Totals => ({ claimed: 0, done: 0, retried: 0, dead: 0, lost: 0, errors: 0 });

class Model {
  readonly events = new Map<string, Stored>();
  /** Successful handler runs per id, over every time the id was stored (a purged id is stored anew). */
  readonly okRuns = new Map<string, number>();
  /** Per processor, when it last purged. */
  readonly purgedAt: (number | undefined)[] = [undefined, undefined];
  readonly totals = zero();

  constructor(
    readonly policy: Policy,
    readonly random: number,
    readonly retainDoneMs: number | undefined,
    readonly script: Script,
  ) {}

  delay(attempts: number): number | undefined {
    return modelDelay(this.policy, this.random, attempts);
  }

  behaviour(id: string, attempt: number): Behaviour {
    return this.script[IDS.indexOf(id as (typeof IDS)[number])]?.[attempt - 1] ?? "ok";
  }

  add(id: string, now: number): void {
    if (this.events.has(id)) return;
    this.events.set(id, {
      state: "pending",
      attempts: 0,
      availableAt: now,
      lastCode: undefined,
      doneAt: undefined,
      running: false,
    });
  }

  isDue(stored: Stored, now: number): boolean {
    return (
      (stored.state === "pending" || stored.state === "failed" || stored.state === "processing") &&
      !stored.running &&
      (stored.availableAt as number) <= now
    );
  }

  /** retainDoneMs: at a processor's first step, then once the retention has passed since its last purge. */
  /** How many done events the purge deleted. */
  purge(processor: number, now: number): number {
    const retain = this.retainDoneMs;
    if (retain === undefined) return 0;
    const last = this.purgedAt[processor];
    if (last !== undefined && now >= last && now - last < Math.min(retain, 3_600_000)) return 0;
    this.purgedAt[processor] = now;
    let purged = 0;
    for (const [id, stored] of this.events) {
      if (stored.state === "done" && (stored.doneAt as number) < now - retain) {
        this.events.delete(id);
        purged++;
      }
    }
    return purged;
  }

  /** A step of startDue: the purge, then every due event claimed and settled as its script says. */
  step(processor: number, now: number): { ran: { id: string; attempt: number }[]; purged: number } {
    const ran: { id: string; attempt: number }[] = [];
    const purged = this.purge(processor, now);
    for (const [id, stored] of this.events) {
      if (!this.isDue(stored, now)) continue;
      stored.attempts++;
      stored.state = "processing";
      stored.availableAt = now + LEASE_MS;
      // Processors that died holding the lease used attempts up too: the policy decides, and nothing runs.
      if (stored.attempts > 1 && this.delay(stored.attempts - 1) === undefined) {
        this.totals.claimed++;
        this.dead(stored, "attempts_exhausted");
        continue;
      }
      const behaviour = this.behaviour(id, stored.attempts);
      ran.push({ id, attempt: stored.attempts });
      // A hung attempt is counted when it settles, as its report comes then.
      if (behaviour !== "hang") this.totals.claimed++;
      if (behaviour === "ok") {
        stored.state = "done";
        stored.availableAt = undefined;
        stored.doneAt = now;
        this.okRuns.set(id, (this.okRuns.get(id) ?? 0) + 1);
        this.totals.done++;
      } else if (behaviour === "throw") this.failed(stored, "handler_failed", now);
      else stored.running = true;
    }
    return { ran, purged };
  }

  /** Every hung attempt's deadline ends: each fails with handler_timeout, retried like a throw. */
  expire(now: number): void {
    for (const stored of this.events.values()) {
      if (!stored.running) continue;
      stored.running = false;
      this.totals.claimed++;
      this.failed(stored, "handler_timeout", now);
    }
  }

  ghost(id: string, now: number): void {
    const stored = this.events.get(id) as Stored;
    stored.attempts++;
    stored.state = "processing";
    stored.availableAt = now + GHOST_LEASE_MS;
  }

  failed(stored: Stored, code: string, now: number): void {
    const delay = this.delay(stored.attempts);
    if (delay === undefined) {
      this.dead(stored, code);
      return;
    }
    stored.state = "failed";
    stored.availableAt = now + delay;
    stored.lastCode = code;
    this.totals.retried++;
  }

  dead(stored: Stored, code: string): void {
    stored.state = "dead";
    stored.availableAt = undefined;
    stored.lastCode = code;
    this.totals.dead++;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The harness: the scripted handler, deadlines ended by hand, an inbox that tells which deadline is whose

interface Subject {
  fresh(): Promise<Inbox>;
  /** Whether an attempt can hang while others run (not on PGlite's one connection, where a hang holds it). */
  concurrent: boolean;
}

interface Harness {
  inbox: Inbox;
  /** Handler runs that hang now, by event id. */
  readonly hung: Map<string, string>;
  /** Handlers running now, by event id: never two for one id. */
  readonly running: Set<string>;
  /** Every handler call: id and attempt. */
  readonly calls: { id: string; attempt: number }[];
  readonly okRuns: Map<string, number>;
  /** Handler calls made while another ran for the same event: none. */
  readonly overlaps: string[];
  /** Ends the deadline of each hung attempt (only theirs: one waiting for PGlite's connection is not late). */
  expireHung(): void;
  make(index: number, setup: Setup, now: () => number): WebhookProcessor;
}

/**
 * Wraps `inbox` so that each attempt's deadline signal (handed to complete) is known by event id, and builds
 * processors whose handler follows `script`.
 */
function harness(inner: Inbox, script: (id: string, attempt: number) => Behaviour): Harness {
  const controllers = new Map<AbortSignal, AbortController>();
  const deadlineOf = new Map<string, AbortSignal>();
  const hung = new Map<string, string>();
  const running = new Set<string>();
  const calls: { id: string; attempt: number }[] = [];
  const okRuns = new Map<string, number>();
  const overlaps: string[] = [];
  const inbox: Inbox = {
    add: (event, source) => inner.add(event, source),
    claim: (request) => inner.claim(request),
    complete: (claim, work, now, options) => {
      if (options?.signal !== undefined) deadlineOf.set(claim.event.id, options.signal);
      return inner.complete(claim, work, now, options);
    },
    fail: (claim, outcome, now) => inner.fail(claim, outcome, now),
    get: (id) => inner.get(id),
    deadLetters: (options) => inner.deadLetters(options),
    retryDeadLetter: (id, now) => inner.retryDeadLetter(id, now),
    purgeDone: (before) => inner.purgeDone(before),
  };
  const handler =
    (name: string): InboxEventHandler<unknown, object> =>
    async ({ event, attempt, signal }) => {
      const { id } = event;
      // Two processors on one inbox: never both running one event. Recorded, not thrown: the processor would take a
      // throw here for the handler's failure.
      if (running.has(id)) overlaps.push(`${id} (${name})`);
      running.add(id);
      calls.push({ id, attempt });
      try {
        const behaviour = script(id, attempt);
        if (behaviour === "throw") throw new Error(`planned failure ${attempt}`);
        if (behaviour === "hang") {
          hung.set(id, name);
          // Hangs until its deadline, then returns as if it had succeeded: too late, it must count for nothing.
          await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
          hung.delete(id);
          return;
        }
        okRuns.set(id, (okRuns.get(id) ?? 0) + 1);
      } finally {
        running.delete(id);
      }
    };
  return {
    inbox,
    hung,
    running,
    calls,
    okRuns,
    overlaps,
    expireHung: () => {
      for (const id of hung.keys()) {
        const signal = deadlineOf.get(id) as AbortSignal;
        controllers.get(signal)?.abort(new DOMException("timed out", "TimeoutError"));
      }
    },
    make: (index, setup, now) => {
      const name = `p${index}`;
      const policy = POLICIES[setup.policy] as Policy;
      return createWebhookProcessor({
        inbox,
        now,
        owner: name,
        leaseMs: LEASE_MS,
        batchSize: LIMIT,
        random: () => setup.random,
        ...(policy.option === undefined ? {} : { retry: policy.option }),
        ...(setup.retainDoneMs === undefined ? {} : { retainDoneMs: setup.retainDoneMs }),
        deadline: () => {
          const controller = new AbortController();
          controllers.set(controller.signal, controller);
          return controller.signal;
        },
      }).on("*", handler(name));
    },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await turn();
}

async function runSequence(subject: Subject, setup: Setup, script: Script, ops: readonly Op[]): Promise<void> {
  const policy = POLICIES[setup.policy] as Policy;
  const retain = setup.retainDoneMs === undefined ? 7 * 24 * 3_600_000 : setup.retainDoneMs || undefined;
  const model = new Model(policy, setup.random, retain, script);
  const h = harness(await subject.fresh(), (id, attempt) => model.behaviour(id, attempt));
  let now = T0;
  const processors = [h.make(0, setup, () => now), h.make(1, setup, () => now)];
  const totals = zero();
  /** Attempts started and not yet settled. */
  const inFlight = new Set<Promise<ProcessorReport>>();

  const track = (attempt: Promise<ProcessorReport>) => {
    inFlight.add(attempt);
    void attempt.then((report) => {
      inFlight.delete(attempt);
      for (const key of Object.keys(totals) as (keyof Totals)[]) totals[key] += report[key];
    });
  };

  /**
   * Waits until every attempt in flight hangs (the only ones a later command may find still running); with
   * `expire`, or on PGlite where a hung attempt holds the one connection, ends the hung ones until none is left.
   */
  const settle = async (expire: boolean) => {
    const ending = expire || !subject.concurrent;
    for (;;) {
      await until(() => inFlight.size === h.hung.size || (!subject.concurrent && h.hung.size > 0));
      // Read with no await between, so the answer holds when this returns.
      if (inFlight.size === h.hung.size && (h.hung.size === 0 || !ending)) return;
      if (ending) h.expireHung();
      await turn();
    }
  };

  // The handler runs for each claimed event no attempt budget ended, with the claim's attempt number (the claims of
  // processors that died count).
  const expectRan = (before: number, ran: { id: string; attempt: number }[]) => {
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(h.calls.slice(before).sort(byId)).toEqual(ran.sort(byId));
  };

  const step = async (index: 0 | 1, expire: boolean) => {
    const before = h.calls.length;
    const started = await (processors[index] as WebhookProcessor).startDue(LIMIT);
    for (const attempt of started) track(attempt);
    await settle(expire);
    expectRan(before, model.step(index, now).ran);
    if (expire || !subject.concurrent) model.expire(now);
  };

  /** A processDue step: hung attempts of earlier steps ended first, so that its claim cannot race their settling. */
  const wholeStep = async (index: 0 | 1) => {
    h.expireHung();
    await settle(true);
    model.expire(now);
    const before = h.calls.length;
    let report: ProcessorReport | undefined;
    const stepping = (processors[index] as WebhookProcessor).processDue().then((r) => {
      report = r;
    });
    // Its hung attempts end at their deadlines: the step waits for its whole batch.
    while (report === undefined) {
      if (h.hung.size > 0) h.expireHung();
      await turn();
    }
    await stepping;
    const { ran, purged } = model.step(index, now);
    expectRan(before, ran);
    model.expire(now);
    const { purged: got, ...counts } = report;
    // Purged only what was done longer than retainDoneMs ago, once the purge was due.
    expect(got).toBe(purged);
    for (const key of Object.keys(totals) as (keyof Totals)[]) totals[key] += counts[key];
  };

  const check = async () => {
    const records = await Promise.all(IDS.map((id) => h.inbox.get(id)));
    for (const [index, id] of IDS.entries()) {
      const got = records[index];
      const stored = model.events.get(id);
      if (stored === undefined) {
        // Never stored, or done and purged: purged only once done longer than retainDoneMs.
        expect(got, `${id} is stored`).toBeUndefined();
        continue;
      }
      expect(
        {
          state: got?.state,
          attempts: got?.attempts,
          availableAt: got?.availableAt,
          code: got?.lastError?.code,
          doneAt: got?.doneAt,
        },
        id,
      ).toEqual({
        state: stored.state,
        attempts: stored.attempts,
        availableAt: stored.availableAt,
        code: stored.lastCode,
        doneAt: stored.doneAt,
      });
    }
    expect(h.overlaps).toEqual([]);
    // Every claimed event counted once, by how it ended, and each success run exactly as often as the model says.
    expect(totals).toEqual(model.totals);
    for (const id of IDS) expect(h.okRuns.get(id) ?? 0, `${id} runs`).toBe(model.okRuns.get(id) ?? 0);
    expect([...h.hung.keys()].sort()).toEqual(
      [...model.events]
        .filter(([, s]) => s.running)
        .map(([id]) => id)
        .sort(),
    );
  };

  for (const op of ops) {
    switch (op.kind) {
      case "add": {
        const id = IDS[op.id] as string;
        const event: InboxEvent = {
          id,
          type: "order.shipped",
          payload: { id },
          scheme: "standard-webhooks",
          timestamp: undefined,
          receivedAt: now,
        };
        expect(await h.inbox.add(event)).toEqual({ duplicate: model.events.has(id) });
        model.add(id, now);
        break;
      }
      case "tick":
        now += op.ms;
        break;
      case "step":
        await (op.whole ? wholeStep(op.processor) : step(op.processor, false));
        break;
      case "expire": {
        h.expireHung();
        await settle(true);
        model.expire(now);
        break;
      }
      case "ghost": {
        // A processor that claims and dies holding the lease.
        const got = await h.inbox.claim({ now, leaseMs: GHOST_LEASE_MS, limit: 1, owner: "ghost" });
        const due = [...model.events].filter(([, s]) => model.isDue(s, now)).map(([id]) => id);
        expect(got.length).toBe(Math.min(1, due.length));
        for (const claim of got) {
          expect(due).toContain(claim.event.id);
          model.ghost(claim.event.id, now);
        }
        break;
      }
    }
    await check();
  }

  // At least once: with every deadline ended and the clock far on, each event left ends done or dead as the model says.
  for (let round = 0; round < 12; round++) {
    now += 1_000_000;
    await step((round % 2) as 0 | 1, true);
    await check();
  }
  for (const [id, stored] of model.events) {
    expect(["done", "dead"], id).toContain(stored.state);
  }
  expect(h.running.size).toBe(0);
  expect(inFlight.size).toBe(0);
}

// ---------------------------------------------------------------------------------------------------------------
// stop(): the runner (startWebhookProcessor) stopped at any point of a run

type StopOp =
  | { kind: "add"; id: number }
  | { kind: "wake" }
  | { kind: "turns"; n: number }
  | { kind: "expire" }
  | { kind: "tick"; ms: number };

const stopOpArb: fc.Arbitrary<StopOp> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("add" as const), id: fc.nat(IDS.length - 1) }) },
  { weight: 3, arbitrary: fc.constant({ kind: "wake" as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("turns" as const), n: fc.constantFrom(1, 3, 20) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "expire" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(1_000, 6_000) }) },
);

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await turn();
}

async function runStop(subject: Subject, setup: Setup, script: Script, before: readonly StopOp[]): Promise<void> {
  const behaviour = (id: string, attempt: number) =>
    script[IDS.indexOf(id as (typeof IDS)[number])]?.[attempt - 1] ?? "ok";
  const h = harness(await subject.fresh(), behaviour);
  let now = T0;
  const errors: unknown[] = [];
  // Pauses and the stop bound far off: the test wakes the runner, and stop() must wait for the attempts themselves.
  const runner = startWebhookProcessor(
    h.make(0, setup, () => now),
    { idleMs: 1e9, stopGraceMs: 2 ** 31 - 1, onError: (error) => errors.push(error) },
  );
  // On PGlite a hung attempt holds the one connection: anything else waits for it, so its deadline ends meanwhile.
  const unblocked = async <T>(work: Promise<T>): Promise<T> => {
    let settled = false;
    const done = () => {
      settled = true;
    };
    work.then(done, done);
    while (!settled) {
      if (!subject.concurrent && h.hung.size > 0) h.expireHung();
      await turn();
    }
    return work;
  };
  const add = (id: string) =>
    h.inbox.add({
      id,
      type: "order.shipped",
      payload: { id },
      scheme: "standard-webhooks",
      timestamp: undefined,
      receivedAt: now,
    });
  for (const op of before) {
    if (op.kind === "add") await unblocked(Promise.resolve(add(IDS[op.id] as string)));
    else if (op.kind === "wake") runner.wake();
    else if (op.kind === "turns") await turns(op.n);
    else if (op.kind === "expire") h.expireHung();
    else now += op.ms;
  }
  let resolved = false;
  const stopped = runner.stop().then(() => {
    resolved = true;
  });
  while (!resolved) {
    await turns(5);
    if (h.hung.size > 0) {
      // An attempt still within its time-out is waited for, not abandoned.
      expect(resolved).toBe(false);
      h.expireHung();
    }
  }
  await stopped;
  // In-flight work has ended: no handler runs, no attempt holds its event.
  expect(h.overlaps).toEqual([]);
  expect(h.running.size).toBe(0);
  expect(h.hung.size).toBe(0);
  expect(errors).toEqual([]);
  const records = await Promise.all(IDS.map((id) => h.inbox.get(id)));
  for (const [index, id] of IDS.entries()) {
    const record = records[index];
    if (record === undefined) continue;
    expect(record.state, id).not.toBe("processing");
    // Each claim ran the handler once, and the event settled as that run's script says.
    const runs = h.calls.filter((call) => call.id === id);
    expect(record.attempts, id).toBe(runs.length);
    if (runs.length === 0) continue;
    const last = behaviour(id, runs.length);
    if (last === "ok") expect(record.state, id).toBe("done");
    else {
      expect(["failed", "dead"], id).toContain(record.state);
      expect(record.lastError?.code, id).toBe(last === "throw" ? "handler_failed" : "handler_timeout");
    }
  }
  // After stop() resolved, nothing runs again, however much is due and however often it is woken.
  const calls = h.calls.length;
  now += 10_000_000;
  for (const id of IDS) await add(id);
  for (let i = 0; i < 3; i++) {
    runner.wake();
    await turns(20);
  }
  expect(h.calls.length).toBe(calls);
  const later = await Promise.all(IDS.map((id) => h.inbox.get(id)));
  for (const [index, record] of later.entries()) {
    // Unclaimed: as it was at the stop, or pending as just added.
    expect(record).toEqual(records[index] ?? expect.objectContaining({ state: "pending", attempts: 0 }));
  }
  await runner.done;
}

const ops = fc.array(opArb, { minLength: 1, maxLength: 30, size: "max" });

function runs(subject: Subject, numRuns: number) {
  return fc.assert(
    fc.asyncProperty(setupArb, scriptArb, ops, (setup, script, sequence) =>
      runSequence(subject, setup, script, sequence),
    ),
    { numRuns },
  );
}

function stops(subject: Subject, numRuns: number) {
  return fc.assert(
    fc.asyncProperty(setupArb, scriptArb, fc.array(stopOpArb, { maxLength: 20 }), (setup, script, before) =>
      runStop(subject, setup, script, before),
    ),
    { numRuns },
  );
}

describe("WebhookProcessor model: memory inbox", () => {
  it("agrees with the reference on any sequence of steps of two processors", async () => {
    await runs({ fresh: async () => createMemoryInbox(), concurrent: true }, 150);
  });

  it("stop(): waits for the attempts in flight, ends them as documented, then runs nothing", async () => {
    await stops({ fresh: async () => createMemoryInbox(), concurrent: true }, 60);
  });

  // The purge interval's edge, which random sequences seldom reach: a purge exactly one retention after the last one
  // runs, so the next is due a whole retention later (and the done event kept until then).
  it("purges once per retainDoneMs, counted from the last purge, and only events done longer ago", async () => {
    const subject: Subject = { fresh: async () => createMemoryInbox(), concurrent: true };
    const sequence: Op[] = [
      { kind: "add", id: 0 },
      { kind: "step", processor: 0, whole: true },
      { kind: "tick", ms: 2_000 },
      { kind: "step", processor: 0, whole: true },
      { kind: "tick", ms: 1 },
      { kind: "step", processor: 0, whole: false },
      { kind: "tick", ms: 2_000 },
      { kind: "step", processor: 0, whole: false },
    ];
    await runSequence(subject, { policy: 0, random: 0.5, retainDoneMs: 2_000 }, [[], [], [], []], sequence);
  });
});

describe.each(databases())("WebhookProcessor model: PostgreSQL inbox on $name", (backend) => {
  const { fresh } = suiteInbox(backend, "model_processor", 12);

  it("agrees with the reference on any sequence of steps of two processors", async () => {
    await runs({ fresh, concurrent: backend.concurrent }, backend.concurrent ? 30 : 15);
  });

  it("stop(): waits for the attempts in flight, ends them as documented, then runs nothing", async () => {
    await stops({ fresh, concurrent: backend.concurrent }, backend.concurrent ? 15 : 10);
  });
});
