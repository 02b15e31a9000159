/**
 * Model test: random sequences of requests (key, body, caller), handler completions in any order
 * and clock steps, run against the middleware on the in-memory store with a fake clock, and
 * checked response by response against a reference model of the rules.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Handler, HttpProblem, type HttpResponse, json, text } from "../../src/http";
import { idempotency, MemoryIdempotencyStore } from "../../src/idempotency";
import { bodyText, deferred, fakeClock, request } from "./support";

const LEASE = 1000;
const TTL = 5000;
const KEYS = ['"k0"', "k1", '"k2"'];
const BODIES = ['{"a":1}', '{"a":2}'];
const CALLERS = ["acct_1", "acct_2"];

type Outcome = "created" | "bad-request" | "unavailable" | "throw" | "problem";
const OUTCOMES: Outcome[] = ["created", "bad-request", "unavailable", "throw", "problem"];

type Command =
  | { op: "start"; key: number; body: number; caller: number }
  | { op: "finish"; pick: number; outcome: Outcome }
  | { op: "advance"; ms: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant("start" as const), key: fc.nat(2), body: fc.nat(1), caller: fc.nat(1) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant("finish" as const), pick: fc.nat(), outcome: fc.constantFrom(...OUTCOMES) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 2500 }) }) },
);

// What a client sees: a status, whether it was a replay, a body; or a thrown error.
type Seen = { status: number; replayed: boolean; body: string } | { thrown: true };

function outcomeResponse(outcome: Outcome, run: number): HttpResponse {
  switch (outcome) {
    case "created":
      return json(201, { run });
    case "bad-request":
      return text(400, `bad ${run}`);
    case "unavailable":
      return text(503, `later ${run}`);
    case "throw":
      throw new Error(`boom ${run}`);
    case "problem":
      throw new HttpProblem({ status: 422, code: "invalid_order", detail: `run ${run}` });
  }
}

function seenOf(response: HttpResponse): Seen {
  return {
    status: response.status,
    replayed: response.headers["idempotent-replayed"] === "true",
    body: bodyText(response.body),
  };
}

// The reference model: the rules of the issue, written plainly.
type ModelRecord =
  | { state: "running"; fingerprint: string; leaseUntil: number; run: number }
  | { state: "done"; fingerprint: string; until: number; status: number; body: string };

class Model {
  readonly records = new Map<string, ModelRecord>();
  runs = 0;

  start(scope: string, fingerprint: string, now: number): Seen | { execute: number } {
    const record = this.records.get(scope);
    const live = record !== undefined && (record.state === "running" ? record.leaseUntil : record.until) > now;
    if (record && live) {
      if (record.fingerprint !== fingerprint) return { status: 422, replayed: false, body: "*" };
      if (record.state === "running") return { status: 409, replayed: false, body: "*" };
      return { status: record.status, replayed: true, body: record.body };
    }
    const run = ++this.runs;
    this.records.set(scope, { state: "running", fingerprint, leaseUntil: now + LEASE, run });
    return { execute: run };
  }

  /** Records the outcome; returns whether the run's lease was lost (ran out, taken over or not): nothing recorded. */
  finish(scope: string, run: number, seen: Seen, now: number): boolean {
    const record = this.records.get(scope);
    if (record?.state !== "running" || record.run !== run) return true;
    const lost = record.leaseUntil <= now;
    const stored = "status" in seen && seen.status < 500;
    if (!stored) this.records.delete(scope);
    else if (record.leaseUntil > now) {
      this.records.set(scope, { state: "done", fingerprint: record.fingerprint, until: now + TTL, ...seen });
    }
    return lost;
  }
}

interface Pending {
  run: number;
  scope: string;
  response: Promise<Seen>;
}

async function check(commands: Command[]): Promise<void> {
  const clock = fakeClock();
  const model = new Model();
  const pending: Pending[] = [];
  let runs = 0;
  let onRun: ((run: number) => void) | undefined;
  // Each handler run waits for its gate: a "finish" command opens it with the run's outcome.
  const gates = new Map<number, (outcome: Outcome) => void>();
  const handler: Handler = async () => {
    const run = ++runs;
    const gate = deferred<Outcome>();
    gates.set(run, gate.resolve);
    onRun?.(run);
    return outcomeResponse(await gate.promise, run);
  };
  // What onStoreError was told: a finish whose lease was lost must report it, and no other.
  const reports: unknown[] = [];
  const handle = idempotency({
    store: new MemoryIdempotencyStore({ now: clock.now, maxEntries: 1000 }),
    identify: (req) => req.headers["x-account"] as string,
    leaseMs: LEASE,
    ttlMs: TTL,
    onStoreError: (error) => reports.push((error as { code?: unknown }).code),
  })(handler);

  for (const c of commands) {
    if (c.op === "advance") {
      clock.advance(c.ms);
      continue;
    }
    if (c.op === "finish") {
      if (pending.length === 0) continue;
      const [p] = pending.splice(c.pick % pending.length, 1) as [Pending];
      gates.get(p.run)?.(c.outcome);
      const seen = await p.response;
      const expected = (() => {
        try {
          return seenOf(outcomeResponse(c.outcome, p.run));
        } catch (error) {
          return error instanceof HttpProblem ? seenOf(error.toResponse()) : ({ thrown: true } as const);
        }
      })();
      expect(seen).toEqual(expected);
      const lost = model.finish(p.scope, p.run, seen, clock.now());
      expect(reports.splice(0)).toEqual(lost ? ["idempotency_lease_lost"] : []);
      continue;
    }
    const key = KEYS[c.key] as string;
    const caller = CALLERS[c.caller] as string;
    const body = BODIES[c.body] as string;
    // The model's scope and fingerprint are plain strings: it knows nothing of hashing.
    const scope = `${caller}|${key.replaceAll('"', "")}`;
    const expected = model.start(scope, body, clock.now());
    const called = deferred<number>();
    onRun = called.resolve;
    const response: Promise<Seen> = Promise.resolve(handle(request({ key, caller, body }))).then(seenOf, () => ({
      thrown: true,
    }));
    const first = await Promise.race([response, called.promise]);
    onRun = undefined;
    if (typeof first === "number") {
      expect(expected).toEqual({ execute: first });
      pending.push({ run: first, scope, response });
    } else if ("execute" in expected) {
      throw new Error(`the model expected run ${expected.execute}, the middleware answered ${JSON.stringify(first)}`);
    } else if ("status" in expected && expected.body === "*") {
      // A problem document: its status and that it is no replay are what the model knows.
      expect("status" in first && [first.status, first.replayed]).toEqual([expected.status, false]);
    } else expect(first).toEqual(expected);
  }
  for (const p of pending) gates.get(p.run)?.("created");
  await Promise.all(pending.map((p) => p.response));
}

describe("idempotency middleware against a reference model (memory store, fake clock)", () => {
  it("answers every request as the model does, whatever the interleaving", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 40 }), (commands) => check(commands)),
      { numRuns: 300 },
    );
  });

  it("runs a key's handler once however many times the same request is retried", async () => {
    await check([
      { op: "start", key: 0, body: 0, caller: 0 },
      { op: "start", key: 0, body: 0, caller: 0 },
      { op: "finish", pick: 0, outcome: "created" },
      { op: "start", key: 0, body: 0, caller: 0 },
      { op: "start", key: 0, body: 1, caller: 0 },
      { op: "advance", ms: 1500 },
      { op: "start", key: 0, body: 0, caller: 0 },
    ]);
  });
});
