/**
 * A model-based test of every Inbox: random sequences of adds (redeliveries of one id with the same or another body
 * included), claims, completions, failures, dead-letter retries, purges and clock steps, run on the memory inbox
 * (bounded and not), on PGlite and on the PostgreSQL server, each step checked against a small reference written
 * here. Times are explicit Unix ms values from a model clock; nothing reads the wall clock.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type {
  ConsumerErrorRecord,
  Inbox,
  InboxClaim,
  InboxEvent,
  InboxRecord,
  InboxState,
} from "../../../src/webhooks/consumer/index";
import { createMemoryInbox, type MemoryInbox } from "../../../src/webhooks/consumer/memory/index";
import { databases } from "../../support/databases";
import { suiteInbox } from "./support";

const T0 = 1_700_000_000_000;
/** Few ids, so that redeliveries of one id are common; one of them is not ASCII (bytes are counted in UTF-8). */
const IDS = ["e0", "e1", "e2", "e3", "é4"] as const;
const TYPES = ["order.shipped", "ordre.expédié"] as const;
/** Payload padding: small ones mostly; the last is larger than the bounded memory inbox's `maxBytes` alone. */
const PADS = [0, 0, 20, 20, 120, 400, 700] as const;
const LEASES = [0, 1_000, 5_000] as const;

const utf8 = (text: string) => new TextEncoder().encode(text).byteLength;

// ---------------------------------------------------------------------------------------------------------------
// Operations

type Op =
  | { kind: "tick"; ms: number }
  | {
      kind: "add";
      id: number;
      type: number;
      pad: number;
      n: number;
      /** Passes the body as received (`source.json`), with white space the payload's JSON text lacks. */
      body: boolean;
      offset: number;
      /** A second add of the same id with another body, made at once (a redelivery racing the first). */
      racing: boolean;
    }
  | { kind: "claim"; limit: number; lease: number; owner: number }
  | {
      kind: "complete";
      pick: number;
      throws: boolean;
      /**
       * The attempt's deadline: passed already (`signal` aborted before the call), or reached while the work runs
       * (which then never settles), or none.
       */
      deadline: "before" | "during" | undefined;
      /** Fails the claim as dead while its work runs, without waiting (settled once the work has). */
      failInside: boolean;
      /** Claims again, `extraMs` on, while the work runs (backends where a query can run beside the work). */
      claimInside: { limit: number; extraMs: number } | undefined;
    }
  | { kind: "fail"; pick: number; retryInMs: number | "dead" }
  | { kind: "retryDead"; id: number }
  | { kind: "purge"; backMs: number | "all" }
  | { kind: "deadLetters"; limit: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(0, 1, 500, 1_000, 6_000) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("add" as const),
      id: fc.nat(IDS.length - 1),
      type: fc.nat(TYPES.length - 1),
      pad: fc.nat(PADS.length - 1),
      n: fc.nat(9),
      body: fc.boolean(),
      offset: fc.constantFrom(-2_000, 0, 0, 0, 1, 2_000),
      racing: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      limit: fc.nat(4),
      lease: fc.nat(LEASES.length - 1),
      owner: fc.nat(1),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("complete" as const),
      pick: fc.nat(6),
      throws: fc.constantFrom(false, false, false, true),
      deadline: fc.constantFrom(undefined, undefined, undefined, undefined, "before" as const, "during" as const),
      failInside: fc.constantFrom(false, false, true),
      claimInside: fc.option(
        fc.record({ limit: fc.integer({ min: 1, max: 4 }), extraMs: fc.constantFrom(0, 10_000) }),
        { freq: 3, nil: undefined },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("fail" as const),
      pick: fc.nat(6),
      retryInMs: fc.constantFrom<number | "dead">(-1_000, 0, 500, 3_000, "dead", "dead"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("retryDead" as const), id: fc.nat(IDS.length - 1) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("purge" as const),
      backMs: fc.constantFrom<number | "all">(0, 1_000, "all"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deadLetters" as const), limit: fc.nat(3) }) },
);

// ---------------------------------------------------------------------------------------------------------------
// The reference model: what docs/webhooks-consumers.md and the Inbox doc comments promise, written plainly.

interface Bounds {
  maxBytes: number;
  maxDone: number;
}

interface Stored {
  /** The event as first added: a redelivery changes nothing. */
  readonly event: InboxEvent;
  state: InboxState;
  attempts: number;
  availableAt: number | undefined;
  lastError: ConsumerErrorRecord | undefined;
  doneAt: number | undefined;
  /** The token of the claim that holds it; any other is stale. */
  token: string | undefined;
  /** Every token a claim gave it: a new claim's token must be none of them. */
  readonly tokens: Set<string>;
  /** What it counts toward `maxBytes`: its body, id and type; its id and type alone once done. */
  bytes: number;
  /** When it was done, in done order (the memory inbox drops the one done longest ago first). */
  doneSeq: number;
  /** When it died, in death order (dead letters are listed oldest first). */
  deadSeq: number;
  diedAt: number;
  /** Successful runs of its work: never more than one per stored event. */
  runs: number;
}

type AddOutcome = { duplicate: boolean } | { refused: "inbox_full" | "event_too_large"; size: number };

class Model {
  readonly events = new Map<string, Stored>();
  #seq = 0;

  constructor(readonly bounds: Bounds | undefined) {}

  get bytes(): number {
    let total = 0;
    for (const stored of this.events.values()) total += stored.bytes;
    return total;
  }

  /** Bytes of events not yet done: never dropped, since each was acknowledged. */
  get openBytes(): number {
    let total = 0;
    for (const stored of this.events.values()) if (stored.state !== "done") total += stored.bytes;
    return total;
  }

  #doneOldestFirst(): Stored[] {
    return [...this.events.values()].filter((s) => s.state === "done").sort((a, b) => a.doneSeq - b.doneSeq);
  }

  add(event: InboxEvent, bodyBytes: number): AddOutcome {
    if (this.events.has(event.id)) return { duplicate: true };
    const bytes = bodyBytes + utf8(event.id) + utf8(event.type);
    if (this.bounds !== undefined) {
      if (bytes > this.bounds.maxBytes) return { refused: "event_too_large", size: bytes };
      if (this.openBytes + bytes > this.bounds.maxBytes) return { refused: "inbox_full", size: bytes };
      const done = this.#doneOldestFirst();
      while (this.bytes + bytes > this.bounds.maxBytes) this.events.delete((done.shift() as Stored).event.id);
    }
    this.events.set(event.id, {
      event,
      state: "pending",
      attempts: 0,
      availableAt: event.receivedAt,
      lastError: undefined,
      doneAt: undefined,
      token: undefined,
      tokens: new Set(),
      bytes,
      doneSeq: 0,
      deadSeq: 0,
      diedAt: 0,
      runs: 0,
    });
    return { duplicate: false };
  }

  /** Events a claim at `now` may take: pending, failed or processing, due by now, and not running. */
  due(now: number, running: string | undefined): Stored[] {
    return [...this.events.values()].filter(
      (s) =>
        (s.state === "pending" || s.state === "failed" || s.state === "processing") &&
        (s.availableAt as number) <= now &&
        s.event.id !== running,
    );
  }

  claimed(id: string, token: string, now: number, leaseMs: number): void {
    const stored = this.events.get(id) as Stored;
    stored.state = "processing";
    stored.attempts++;
    stored.availableAt = now + leaseMs;
    stored.token = token;
    stored.tokens.add(token);
  }

  held(claim: InboxClaim): Stored | undefined {
    const stored = this.events.get(claim.event.id);
    return stored?.state === "processing" && stored.token === claim.token ? stored : undefined;
  }

  done(stored: Stored, now: number): void {
    stored.state = "done";
    stored.availableAt = undefined;
    stored.token = undefined;
    stored.doneAt = now;
    stored.doneSeq = ++this.#seq;
    stored.bytes = utf8(stored.event.id) + utf8(stored.event.type);
    stored.runs++;
    if (this.bounds !== undefined) {
      const done = this.#doneOldestFirst();
      while (done.length > this.bounds.maxDone) this.events.delete((done.shift() as Stored).event.id);
    }
  }

  fail(stored: Stored, retryAt: number | "dead", error: ConsumerErrorRecord, now: number): void {
    stored.lastError = error;
    stored.token = undefined;
    if (retryAt === "dead") {
      stored.state = "dead";
      stored.availableAt = undefined;
      stored.deadSeq = ++this.#seq;
      stored.diedAt = now;
    } else {
      stored.state = "failed";
      stored.availableAt = retryAt;
    }
  }

  retryDead(id: string, now: number): boolean {
    const stored = this.events.get(id);
    if (stored?.state !== "dead") return false;
    stored.state = "pending";
    stored.attempts = 0;
    stored.availableAt = now;
    return true;
  }

  purge(before: number): number {
    let purged = 0;
    for (const [id, stored] of this.events) {
      if (stored.state === "done" && (stored.doneAt as number) < before) {
        this.events.delete(id);
        purged++;
      }
    }
    return purged;
  }

  deadOldestFirst(): Stored[] {
    return [...this.events.values()].filter((s) => s.state === "dead").sort((a, b) => a.deadSeq - b.deadSeq);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Running a sequence on one inbox

interface Subject {
  /** A fresh, empty inbox. */
  fresh(): Promise<Inbox>;
  bounds?: Bounds;
  /** Whether `get` gives a done event's payload back (PostgreSQL keeps the row; the memory inbox lets it go). */
  keepsDonePayload: boolean;
  /** Whether a claim can run while a completion's work runs (not on PGlite's one connection). */
  concurrent: boolean;
}

function payloadOf(n: number, pad: number): { n: number; pad: string; note: string } {
  return { n, pad: "x".repeat(pad), note: "é ✓" };
}

const ERROR: ConsumerErrorRecord = { code: "handler_failed", message: "nope" };

/** The event fields of a record or claim, as stored. */
function eventFields(event: InboxEvent) {
  return {
    id: event.id,
    type: event.type,
    payload: event.payload,
    scheme: event.scheme,
    timestamp: event.timestamp,
    receivedAt: event.receivedAt,
  };
}

async function runSequence(subject: Subject, ops: readonly Op[]): Promise<void> {
  const inbox = await subject.fresh();
  const model = new Model(subject.bounds);
  let now = T0;
  /** Every claim ever given, so that stale ones are picked too. */
  const claims: InboxClaim[] = [];

  /** Checks a claim's answer against the model, then applies it. */
  const checkClaim = (got: InboxClaim[], at: number, limit: number, leaseMs: number, running?: string) => {
    const due = model.due(at, running);
    // At most `limit`, and as many as are due: a due event is never left behind while there is room.
    expect(got.length).toBe(Math.min(limit, due.length));
    const ids = got.map((c) => c.event.id);
    expect(new Set(ids).size).toBe(ids.length);
    const dueBy = new Map(due.map((s) => [s.event.id, s.availableAt as number]));
    // Only due events (never a done, dead, running or leased one), the oldest due first: none left out was due
    // before one taken (ties are free).
    for (const id of ids) expect(dueBy.has(id), `claimed ${id}, which is not due`).toBe(true);
    const latestTaken = Math.max(...ids.map((id) => dueBy.get(id) as number));
    for (const [id, at] of dueBy) if (!ids.includes(id)) expect(at).toBeGreaterThanOrEqual(latestTaken);
    // In order of due time (Inbox.claim: "oldest due first").
    const times = ids.map((id) => dueBy.get(id) as number);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    for (const claim of got) {
      const stored = model.events.get(claim.event.id) as Stored;
      expect(eventFields(claim.event)).toEqual(eventFields(stored.event));
      expect(claim.attempts).toBe(stored.attempts + 1);
      // A fresh token: a claim this one took over can no longer complete or fail it.
      expect(stored.tokens.has(claim.token)).toBe(false);
      model.claimed(claim.event.id, claim.token, at, leaseMs);
    }
    claims.push(...got);
  };

  const checkState = async () => {
    // Read side by side (a server's pool answers them at once), then compared one by one.
    const records = await Promise.all(IDS.map((id) => inbox.get(id)));
    for (const [index, id] of IDS.entries()) {
      const got = records[index];
      const stored = model.events.get(id);
      if (stored === undefined) {
        expect(got, `${id} is stored`).toBeUndefined();
        continue;
      }
      const payload = stored.state === "done" && !subject.keepsDonePayload ? undefined : stored.event.payload;
      const want: InboxRecord = {
        ...eventFields(stored.event),
        payload,
        state: stored.state,
        attempts: stored.attempts,
        availableAt: stored.availableAt,
        lastError: stored.lastError,
        doneAt: stored.doneAt,
      };
      expect(got, `${id} as stored`).toEqual(want);
      // Never processed twice: a redelivery of a done event makes no second run.
      expect(stored.runs).toBeLessThanOrEqual(1);
    }
    if (isMemory(inbox)) {
      expect(inbox.size).toBe(model.events.size);
      expect(inbox.bytes).toBe(model.bytes);
      if (subject.bounds !== undefined) expect(inbox.bytes).toBeLessThanOrEqual(subject.bounds.maxBytes);
    }
  };

  const add = async (event: InboxEvent, body: Uint8Array | undefined) => {
    try {
      return await inbox.add(event, body === undefined ? undefined : { json: body });
    } catch (error) {
      return error;
    }
  };

  const checkAdd = (got: unknown, want: AddOutcome) => {
    if ("refused" in want) {
      // InboxFullError / InboxEventTooLargeError, with the bound (and the event's size) they name.
      expect(got).toMatchObject({ code: want.refused, limit: subject.bounds?.maxBytes });
      if (want.refused === "event_too_large") expect(got).toMatchObject({ size: want.size });
    } else expect(got).toEqual(want);
  };

  for (const op of ops) {
    switch (op.kind) {
      case "tick":
        now += op.ms;
        break;
      case "add": {
        const id = IDS[op.id] as string;
        const make = (n: number) => {
          const payload = payloadOf(n, PADS[op.pad] as number);
          const event: InboxEvent = {
            id,
            type: TYPES[op.type] as string,
            payload,
            scheme: "standard-webhooks",
            timestamp: 1_700_000_000,
            receivedAt: now + op.offset,
          };
          const text = op.body ? ` ${JSON.stringify(payload, null, 1)} ` : JSON.stringify(payload);
          return { event, body: op.body ? new TextEncoder().encode(text) : undefined, bytes: utf8(text) };
        };
        const first = make(op.n);
        if (!op.racing) {
          checkAdd(await add(first.event, first.body), model.add(first.event, first.bytes));
          break;
        }
        // Another body of the same size, so that both are refused alike when one is.
        const second = make((op.n + 1) % 10);
        const results = await Promise.all([add(first.event, first.body), add(second.event, second.body)]);
        const known = model.events.has(id);
        const want = model.add(first.event, first.bytes);
        if ("refused" in want || known) {
          for (const result of results) checkAdd(result, want);
          break;
        }
        // One of the two is stored, the other answered as a duplicate; the model keeps the one stored.
        expect(results.map((r) => (r as { duplicate: boolean }).duplicate).sort()).toEqual([false, true]);
        if ((results[1] as { duplicate: boolean }).duplicate === false) {
          model.events.delete(id);
          model.add(second.event, second.bytes);
        }
        break;
      }
      case "claim": {
        const leaseMs = LEASES[op.lease] as number;
        const got = await inbox.claim({ now, leaseMs, limit: op.limit, owner: `p${op.owner}` });
        checkClaim(got, now, op.limit, leaseMs);
        break;
      }
      case "complete": {
        if (claims.length === 0) break;
        const claim = pick(claims, model, op.pick);
        const held = model.held(claim);
        const inside = subject.concurrent ? op.claimInside : undefined;
        let ran = false;
        const thrown = new Error("work failed");
        let failing: Promise<boolean> | undefined;
        const work = async () => {
          ran = true;
          if (op.failInside && op.deadline === undefined)
            failing = inbox.fail(claim, { dead: true, error: ERROR }, now);
          if (inside !== undefined) {
            // While the work runs its event is nobody else's, even past its lease.
            const at = now + inside.extraMs;
            const got = await inbox.claim({ now: at, leaseMs: 1_000, limit: inside.limit, owner: "inside" });
            checkClaim(got, at, inside.limit, 1_000, claim.event.id);
          }
          if (deadline !== undefined) {
            // Time is up while the work runs, and the work never settles: the inbox must not wait for it.
            deadline.abort(reason);
            await new Promise(() => {});
          }
          if (op.throws) throw thrown;
        };
        const reason = new Error("deadline");
        const deadline = op.deadline === "during" ? new AbortController() : undefined;
        const signal = op.deadline === "before" ? AbortSignal.abort(reason) : deadline?.signal;
        const result = await inbox.complete(claim, work, now, { signal });
        if (op.deadline === "during" && held !== undefined) {
          // Abandoned at the signal, with its reason: nothing marked, still held under its lease.
          expect(ran).toBe(true);
          expect(result).toEqual({ outcome: "failed", error: reason });
        } else if (op.deadline === "before") {
          // Inbox.complete's `signal`: an attempt whose time is up runs nothing and marks nothing. A stale claim under
          // such a signal may be answered either way: neither runs the work.
          expect(ran).toBe(false);
          if (held !== undefined) expect(result).toEqual({ outcome: "failed", error: reason });
          else expect([{ outcome: "lost" }, { outcome: "failed", error: reason }]).toContainEqual(result);
        } else if (held === undefined) {
          // Taken over, settled or done: the work does not run.
          expect(result).toEqual({ outcome: "lost" });
          expect(ran).toBe(false);
        } else if (op.throws) {
          // Nothing marked: still held under its lease, for the processor to settle.
          expect(result).toEqual({ outcome: "failed", error: thrown });
        } else {
          expect(result).toEqual({ outcome: "done" });
          model.done(held, now);
        }
        if (failing !== undefined) {
          // A fail made while the work ran settles once it has: nothing after done, the attempt after a failure.
          const holding = model.held(claim);
          expect(await failing).toBe(holding !== undefined);
          if (holding !== undefined) model.fail(holding, "dead", ERROR, now);
        }
        break;
      }
      case "fail": {
        if (claims.length === 0) break;
        const claim = pick(claims, model, op.pick);
        const held = model.held(claim);
        const outcome =
          op.retryInMs === "dead"
            ? { dead: true as const, error: ERROR }
            : { retryAt: now + op.retryInMs, error: ERROR };
        // Settled by the claim that holds it only: a stale claim is ignored.
        expect(await inbox.fail(claim, outcome, now)).toBe(held !== undefined);
        if (held !== undefined) model.fail(held, op.retryInMs === "dead" ? "dead" : now + op.retryInMs, ERROR, now);
        break;
      }
      case "retryDead": {
        // Mostly a dead letter, else any id (one that is not dead is refused).
        const dead = model.deadOldestFirst();
        const id =
          dead.length > 0 && op.id < 3 ? (dead[op.id % dead.length] as Stored).event.id : (IDS[op.id] as string);
        const retried = model.retryDead(id, now);
        expect(await inbox.retryDeadLetter(id, now)).toBe(retried);
        break;
      }
      case "purge": {
        const before = op.backMs === "all" ? Number.POSITIVE_INFINITY : now - op.backMs;
        const purged = model.purge(before);
        expect(await inbox.purgeDone(before)).toBe(purged);
        break;
      }
      case "deadLetters": {
        const got = (await inbox.deadLetters({ limit: op.limit })).map((r) => r.id);
        const dead = model.deadOldestFirst();
        expect(got.length).toBe(Math.min(op.limit, dead.length));
        // Oldest first (by when each died; ties are free), and the oldest ones when the limit cuts the list.
        const diedAt = new Map(dead.map((s) => [s.event.id, s.diedAt]));
        const times = got.map((id) => diedAt.get(id) as number);
        for (const time of times) expect(time).toBeTypeOf("number");
        expect(times).toEqual([...times].sort((a, b) => a - b));
        const latest = Math.max(...times);
        for (const [id, at] of diedAt) if (!got.includes(id)) expect(at).toBeGreaterThanOrEqual(latest);
        break;
      }
    }
    await checkState();
  }

  // Nothing acknowledged is lost: once every lease and retry time has passed, each event not done is claimable
  // (dead letters once retried), and completing them leaves every stored event done.
  now += 1_000_000;
  for (const stored of model.deadOldestFirst()) {
    expect(await inbox.retryDeadLetter(stored.event.id, now)).toBe(true);
    model.retryDead(stored.event.id, now);
  }
  const open = [...model.events.values()].filter((s) => s.state !== "done").map((s) => s.event.id);
  const last = await inbox.claim({ now, leaseMs: 1_000, limit: IDS.length, owner: "drain" });
  checkClaim(last, now, IDS.length, 1_000);
  expect(last.map((c) => c.event.id).sort()).toEqual(open.sort());
  for (const claim of last) {
    expect(await inbox.complete(claim, async () => {}, now)).toEqual({ outcome: "done" });
    model.done(model.held(claim) as Stored, now);
  }
  await checkState();
  for (const stored of model.events.values()) expect(stored.state).toBe("done");
}

/**
 * Mostly a claim that still holds its event (the processor's case), else any claim given so far: most of those were
 * taken over or settled since, the stale claims an inbox must ignore.
 */
function pick(claims: readonly InboxClaim[], model: Model, index: number): InboxClaim {
  const holding = claims.filter((claim) => model.held(claim) !== undefined);
  if (index < 4 && holding.length > 0) return holding[index % holding.length] as InboxClaim;
  return claims[(index * 7919) % claims.length] as InboxClaim;
}

function isMemory(inbox: Inbox): inbox is MemoryInbox {
  return "bytes" in inbox && typeof (inbox as { bytes?: unknown }).bytes === "number";
}

const ops = fc.array(opArb, { minLength: 1, maxLength: 40, size: "max" });

describe("Inbox model: memory", () => {
  it("agrees with the reference on any sequence (default bounds)", async () => {
    const subject: Subject = { fresh: async () => createMemoryInbox(), keepsDonePayload: false, concurrent: true };
    await fc.assert(
      fc.asyncProperty(ops, (sequence) => runSequence(subject, sequence)),
      { numRuns: 100 },
    );
  });

  it("agrees with the reference on any sequence under small maxBytes and maxDone, bodies kept as text", async () => {
    const bounds: Bounds = { maxBytes: 600, maxDone: 2 };
    const subject: Subject = {
      fresh: async () => createMemoryInbox({ ...bounds, parsedBytes: 100 }),
      bounds,
      keepsDonePayload: false,
      concurrent: true,
    };
    await fc.assert(
      fc.asyncProperty(ops, (sequence) => runSequence(subject, sequence)),
      { numRuns: 100 },
    );
  });
});

describe.each(databases())("Inbox model: PostgreSQL on $name", (backend) => {
  const { fresh } = suiteInbox(backend, "wh_inbox_model", 4);

  it("agrees with the reference on any sequence", async () => {
    const subject: Subject = {
      fresh,
      keepsDonePayload: true,
      concurrent: backend.concurrent,
    };
    await fc.assert(
      fc.asyncProperty(ops, (sequence) => runSequence(subject, sequence)),
      { numRuns: backend.concurrent ? 20 : 10 },
    );
  });
});
