/**
 * Model test at the store interface: random sequences of begin (several keys, callers and fingerprints), complete
 * (responses of every size, empty bodies, repeated header fields), release, forged and stale tokens and clock steps,
 * run in lockstep on every store and on a reference model written here, step by step (differential).
 *
 * Clocks. The memory store takes `now`: it runs sequences with clock steps, to the millisecond, so leases and
 * records expire and are taken over exactly where the model says. Redis expires records itself (`PX`: its `now`
 * option only dates a lease for the 409's Retry-After, docs/idempotency.md "Redis") and PostgreSQL on its own clock
 * (`statement_timestamp()`, `clock_timestamp()`; the store has no clock option): they run sequences without clock
 * steps, with leases and lifetimes no test run outlives. There a lease changes hands only by `release`.
 */

import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BeginResult,
  decide,
  type IdempotencyStore,
  MemoryIdempotencyStore,
  type StoredResponse,
  scopedKey,
} from "../../src/idempotency";
import { idempotencyMigrations, PostgresIdempotencyStore } from "../../src/idempotency/postgres";
import { RedisIdempotencyStore, type RedisScriptClient } from "../../src/idempotency/redis";
import { migrate } from "../../src/postgres";
import { databases, type OpenDatabase } from "../support/databases";
import { nodeRedis6 } from "../support/node-redis";
import { redisUrl, skipWithoutRedis, uniqueName } from "../support/services";

// Keys: three callers' scoped keys (two callers share an Idempotency-Key), and raw keys that exercise the Redis
// staging key (a hash tag of its own, a stray "}"), non-ASCII bytes and the empty key.
const KEYS = [
  scopedKey("acct_1", "k1"),
  scopedKey("acct_2", "k1"),
  scopedKey("acct_1", "k2"),
  "{tag}k",
  "k}x",
  "clé-ü",
  "",
];
// Fingerprints are opaque strings, returned exactly as given (store.ts): the empty one and non-ASCII ones too.
const FINGERPRINTS = ["fp-a", "fp-b", "", "fp-ü€"];
const HEADER_NAMES = ["content-type", "link", "vary", "location", "etag", "cache-control", "allow"];
// Redis stages a completed value from 16 KiB (its head included): sizes on either side of that line.
const BODY_SIZES = [0, 1, 100, 16_200, 16_300, 16_384, 40_000];

type ForgedToken = "none" | "suffix" | "empty";

// A response as the sequence holds it: a large body by its size and a seed, so that a counterexample prints short.
interface ResponseSpec {
  status: number;
  headers: Record<string, string | string[]>;
  body: number[] | { size: number; seed: number };
}

type Step =
  | { op: "begin"; key: number; fingerprint: number; leaseMs: number }
  // Begins sent together, with one fingerprint: at most one of them may take the lease.
  | { op: "race"; key: number; fingerprint: number; leaseMs: number; count: number }
  | {
      op: "complete";
      holder: number;
      otherKey: number | null;
      forged: ForgedToken;
      response: ResponseSpec;
      ttlMs: number;
    }
  | { op: "release"; holder: number; otherKey: number | null; forged: ForgedToken }
  | { op: "advance"; ms: number };

interface Timings {
  leases: number[];
  ttls: number[];
  /** Clock steps; none for stores that expire records on their server's own clock. */
  advances: number[];
}

// Leases end at an instant clock steps hit exactly: 100 + 150 = 250, 250 + 50 = 300, and so on.
const EXACT: Timings = { leases: [100, 250], ttls: [300, 1000], advances: [1, 49, 50, 99, 100, 150, 250, 300, 1000] };
// Longer than any run lasts, so that no real clock ends a lease or a record within one.
const REAL: Timings = { leases: [60_000, 90_000], ttls: [600_000, 900_000], advances: [] };

const headerValue = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("", "a, b", "ü-ẞ €", "</a>; rel=next"));

const response: fc.Arbitrary<ResponseSpec> = fc
  .record({
    status: fc.constantFrom(100, 200, 201, 204, 400, 409, 422, 599),
    headers: fc.uniqueArray(
      fc.tuple(fc.constantFrom(...HEADER_NAMES), fc.oneof(headerValue, fc.array(headerValue, { maxLength: 3 }))),
      { selector: ([name]) => name, maxLength: 4 },
    ),
    body: fc.oneof(
      fc.array(fc.nat(255), { maxLength: 24 }),
      fc.record({ size: fc.constantFrom(...BODY_SIZES), seed: fc.nat(255) }),
    ),
  })
  .map(({ status, headers, body }) => ({ status, headers: Object.fromEntries(headers), body }));

function storedResponse({ status, headers, body }: ResponseSpec): StoredResponse {
  const bytes = Array.isArray(body)
    ? Uint8Array.from(body)
    : Uint8Array.from({ length: body.size }, (_, i) => (i * 31 + body.seed) % 256);
  return { status, headers, body: bytes };
}

function steps(timings: Timings): fc.Arbitrary<Step[]> {
  const forged = fc.constantFrom<ForgedToken>("none", "none", "none", "suffix", "empty");
  const otherKey = fc.option(fc.nat(KEYS.length - 1), { freq: 4 });
  const step: fc.Arbitrary<Step>[] = [
    fc.record({
      op: fc.constant("begin" as const),
      key: fc.nat(KEYS.length - 1),
      fingerprint: fc.nat(FINGERPRINTS.length - 1),
      leaseMs: fc.constantFrom(...timings.leases),
    }),
    fc.record({
      op: fc.constant("race" as const),
      key: fc.nat(KEYS.length - 1),
      fingerprint: fc.nat(FINGERPRINTS.length - 1),
      leaseMs: fc.constantFrom(...timings.leases),
      count: fc.integer({ min: 2, max: 5 }),
    }),
    fc.record({
      op: fc.constant("complete" as const),
      holder: fc.nat(),
      otherKey,
      forged,
      response,
      ttlMs: fc.constantFrom(...timings.ttls),
    }),
    fc.record({ op: fc.constant("release" as const), holder: fc.nat(), otherKey, forged }),
  ];
  if (timings.advances.length > 0) {
    step.push(fc.record({ op: fc.constant("advance" as const), ms: fc.constantFrom(...timings.advances) }));
  }
  return fc.array(fc.oneof(...step), { minLength: 1, maxLength: 30 });
}

// The reference model: the contract of store.ts written plainly. A record is live while the clock reads less than
// its `until`; an expired one is as good as absent. Holders are the begins that acquired, in order.
type ModelRecord =
  | { state: "leased"; fingerprint: string; holder: number; until: number }
  | { state: "completed"; fingerprint: string; response: StoredResponse; until: number };

type Expected =
  | { kind: "acquired"; holder: number }
  | { kind: "in-progress"; fingerprint: string; retryAfterMs: number }
  | { kind: "completed"; fingerprint: string; response: StoredResponse };

class Model {
  now = 0;
  readonly records = new Map<string, ModelRecord>();
  readonly holders: string[] = [];

  live(key: string): ModelRecord | undefined {
    const record = this.records.get(key);
    return record !== undefined && record.until > this.now ? record : undefined;
  }

  begin(key: string, fingerprint: string, leaseMs: number): Expected {
    const record = this.live(key);
    if (record?.state === "leased") {
      return { kind: "in-progress", fingerprint: record.fingerprint, retryAfterMs: record.until - this.now };
    }
    if (record?.state === "completed") {
      return { kind: "completed", fingerprint: record.fingerprint, response: record.response };
    }
    const holder = this.holders.push(key) - 1;
    this.records.set(key, { state: "leased", fingerprint, holder, until: this.now + leaseMs });
    return { kind: "acquired", holder };
  }

  /** Whether `holder` (undefined: a token never handed out) holds the live lease on `key`. */
  holds(key: string, holder: number | undefined): boolean {
    const record = this.live(key);
    return holder !== undefined && record?.state === "leased" && record.holder === holder;
  }

  complete(key: string, holder: number | undefined, response: StoredResponse, ttlMs: number): boolean {
    const record = this.live(key);
    if (!this.holds(key, holder) || record === undefined) return false;
    this.records.set(key, { state: "completed", fingerprint: record.fingerprint, response, until: this.now + ttlMs });
    return true;
  }

  release(key: string, holder: number | undefined): boolean {
    if (!this.holds(key, holder)) return false;
    this.records.delete(key);
    return true;
  }
}

/** A store under test for one sequence: its keys are the run's own. */
interface Subject {
  readonly name: string;
  readonly store: IdempotencyStore;
  readonly key: (key: string) => string;
  /**
   * How `retryAfterMs` compares with the model's: "exact" where the store's clock is the test's (memory; Redis, whose
   * `now` dates the lease it reads back), "elapsed" where it is the server's (PostgreSQL; Redis before 7.0 reads PTTL):
   * at most the model's, less by the real time elapsed since the lease was taken.
   */
  readonly retryAfter: "exact" | "elapsed";
  /**
   * Whether the header field names come back in the order they were stored. PostgreSQL keeps them in `jsonb`, which
   * orders an object's names its own way (docs/idempotency.md, "PostgreSQL"; RFC 9110 §5.3: the order of fields with
   * differing names is not significant); every field's values keep their order on every store.
   */
  readonly headerOrder: boolean;
  /** The tokens this store handed out, by the model's holder number. */
  readonly tokens: string[];
  readonly seen: Set<string>;
}

type SubjectFactory = (run: number, now: () => number) => Omit<Subject, "tokens" | "seen">;

function expectResponse(subject: Subject, got: StoredResponse, expected: StoredResponse): void {
  const where = subject.name;
  expect(got.status, where).toBe(expected.status);
  const names = Object.keys(got.headers);
  const expectedNames = Object.keys(expected.headers);
  if (subject.headerOrder) expect(names, where).toEqual(expectedNames);
  else expect([...names].sort(), where).toEqual([...expectedNames].sort());
  for (const name of expectedNames) expect(got.headers[name], `${where}: ${name}`).toEqual(expected.headers[name]);
  expect(got.body.byteLength, where).toBe(expected.body.byteLength);
  expect(Buffer.compare(Buffer.from(got.body), Buffer.from(expected.body)), where).toBe(0);
}

function expectBegin(subject: Subject, got: BeginResult, expected: Expected, fingerprint: string): void {
  const where = subject.name;
  expect(got.kind, where).toBe(expected.kind);
  if (got.kind === "acquired" && expected.kind === "acquired") {
    // A fresh token: never one handed out before, so no earlier holder can pass for this one.
    expect(subject.seen.has(got.leaseToken), `${where}: token reused`).toBe(false);
    subject.seen.add(got.leaseToken);
    subject.tokens[expected.holder] = got.leaseToken;
    return;
  }
  if (got.kind === "in-progress" && expected.kind === "in-progress") {
    expect(got.fingerprint, where).toBe(expected.fingerprint);
    if (subject.retryAfter === "exact") expect(got.retryAfterMs, where).toBe(expected.retryAfterMs);
    else {
      expect(got.retryAfterMs, where).toBeGreaterThan(0);
      expect(got.retryAfterMs, where).toBeLessThanOrEqual(expected.retryAfterMs);
    }
    // The documented answers (docs/idempotency.md, the table): the same request 409, another 422.
    const decided = decide("k", fingerprint, got).kind;
    expect(decided, where).toBe(fingerprint === expected.fingerprint ? "conflict-in-progress" : "fingerprint-mismatch");
    return;
  }
  if (got.kind === "completed" && expected.kind === "completed") {
    expect(got.fingerprint, where).toBe(expected.fingerprint);
    expectResponse(subject, got.response, expected.response);
    expect(decide("k", fingerprint, got).kind, where).toBe(
      fingerprint === expected.fingerprint ? "replay" : "fingerprint-mismatch",
    );
  }
}

// The lease of a read-back: it finds a live record, so it takes no lease.
const PROBE_LEASE_MS = 100;

/** Runs `sequence` on the model and, step by step, on every subject; checks each answer against the model's. */
async function runSequence(sequence: Step[], subjects: Subject[], model: Model): Promise<void> {
  // A live key is read back after each step that may have changed it: the same fingerprint and another. Such a begin
  // changes nothing, so the model needs no step of its own for it.
  const probe = async (key: string) => {
    const record = model.live(key);
    if (record === undefined) return;
    const other = FINGERPRINTS.find((fp) => fp !== record.fingerprint) as string;
    for (const fingerprint of [record.fingerprint, other]) {
      const expected = model.begin(key, fingerprint, PROBE_LEASE_MS);
      for (const s of subjects) {
        expectBegin(s, await s.store.begin(s.key(key), fingerprint, PROBE_LEASE_MS), expected, fingerprint);
      }
    }
  };
  for (const step of sequence) {
    if (step.op === "advance") {
      model.now += step.ms;
      for (const key of KEYS) await probe(key);
      continue;
    }
    if (step.op === "begin") {
      const key = KEYS[step.key] as string;
      const fingerprint = FINGERPRINTS[step.fingerprint] as string;
      const expected = model.begin(key, fingerprint, step.leaseMs);
      for (const s of subjects) {
        expectBegin(s, await s.store.begin(s.key(key), fingerprint, step.leaseMs), expected, fingerprint);
      }
      await probe(key);
      continue;
    }
    if (step.op === "race") {
      const key = KEYS[step.key] as string;
      const fingerprint = FINGERPRINTS[step.fingerprint] as string;
      // The first begin as the model sees it; the others find what it left, whichever of them the store ran first.
      const first = model.begin(key, fingerprint, step.leaseMs);
      const rest = model.begin(key, fingerprint, step.leaseMs);
      for (const s of subjects) {
        const found = await Promise.all(
          Array.from({ length: step.count }, () => s.store.begin(s.key(key), fingerprint, step.leaseMs)),
        );
        const winner = first.kind === "acquired" ? found.findIndex((f) => f.kind === "acquired") : 0;
        expect(winner, `${s.name}: nobody acquired`).toBeGreaterThanOrEqual(0);
        found.forEach((f, i) => {
          expectBegin(s, f, i === winner ? first : rest, fingerprint);
        });
      }
      await probe(key);
      continue;
    }
    // complete or release: a holder's token (a stale one as often as not), on its own key or another, or forged.
    const count = model.holders.length;
    const holder = count === 0 ? undefined : step.holder % count;
    const key =
      step.otherKey !== null || holder === undefined
        ? (KEYS[step.otherKey ?? 0] as string)
        : (model.holders[holder] as string);
    const tokenOf = (s: Subject): string => {
      const token = holder === undefined ? "never-handed-out" : (s.tokens[holder] as string);
      return step.forged === "suffix" ? `${token}x` : step.forged === "empty" ? "" : token;
    };
    const modelHolder = step.forged === "none" ? holder : undefined;
    const stored = step.op === "complete" ? storedResponse(step.response) : undefined;
    const expected =
      step.op === "complete" && stored !== undefined
        ? model.complete(key, modelHolder, stored, step.ttlMs)
        : model.release(key, modelHolder);
    for (const s of subjects) {
      const done =
        step.op === "complete" && stored !== undefined
          ? await s.store.complete(s.key(key), tokenOf(s), stored, step.ttlMs)
          : await s.store.release(s.key(key), tokenOf(s));
      expect(done, `${s.name}: ${step.op}`).toBe(expected);
    }
    await probe(key);
  }
}

async function check(sequence: Step[], factories: SubjectFactory[], run: number): Promise<void> {
  const model = new Model();
  const now = () => 1_700_000_000_000 + model.now;
  const subjects = factories.map((make) => ({ ...make(run, now), tokens: [], seen: new Set<string>() }));
  await runSequence(sequence, subjects, model);
}

const memory: SubjectFactory = (_, now) => ({
  name: "memory",
  store: new MemoryIdempotencyStore({ now }),
  key: (key) => key,
  retryAfter: "exact",
  headerOrder: true,
});

describe("IdempotencyStore against a reference model", () => {
  let runs = 0;

  // Fast (no I/O): many runs. 400 sequences of up to 30 steps take about a second.
  it("memory, with clock steps: leases and records end at the very millisecond, fencing the old holder", async () => {
    await fc.assert(
      fc.asyncProperty(steps(EXACT), (sequence) => check(sequence, [memory], ++runs)),
      { numRuns: 400 },
    );
  });

  it("memory: a lease taken over after it ran out fences its holder; a record past its TTL starts afresh", async () => {
    const response = { status: 201, headers: { link: ["</a>", "</b>"] }, body: [] };
    await check(
      [
        { op: "begin", key: 0, fingerprint: 0, leaseMs: 100 },
        { op: "advance", ms: 100 },
        { op: "begin", key: 0, fingerprint: 1, leaseMs: 250 },
        { op: "complete", holder: 0, otherKey: null, forged: "none", response, ttlMs: 300 },
        { op: "release", holder: 0, otherKey: null, forged: "none" },
        { op: "complete", holder: 1, otherKey: null, forged: "none", response, ttlMs: 300 },
        { op: "advance", ms: 299 },
        { op: "advance", ms: 1 },
        { op: "begin", key: 0, fingerprint: 0, leaseMs: 100 },
      ],
      [memory],
      ++runs,
    );
  });

  describe("every store in lockstep, without clock steps", () => {
    const factories: SubjectFactory[] = [memory];
    const closers: (() => Promise<void>)[] = [];
    const prefix = `${uniqueName("idem_model")}:`;

    beforeAll(async () => {
      for (const backend of databases()) {
        const schema = uniqueName(`idem_model_${backend.name}`).toLowerCase();
        const open: OpenDatabase = await backend.open({ max: 2 });
        await migrate(open.db, idempotencyMigrations({ schema }));
        const store = new PostgresIdempotencyStore(open.db, { schema });
        factories.push((run) => ({
          name: `postgres (${backend.name})`,
          store,
          key: (key) => `${run}/${key}`,
          retryAfter: "elapsed",
          headerOrder: false,
        }));
        closers.push(async () => {
          await open.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await open.close();
        });
      }
      if (skipWithoutRedis()) return;
      const ioredis = new Redis(redisUrl as string);
      // Answers like Redis 6.2, which rejects NX with GET: begin runs its script, which reads the lease left by PTTL.
      const before7: RedisScriptClient = {
        callBuffer: (command, ...args) =>
          command === "set" && args.includes("NX") && args.includes("GET")
            ? Promise.reject(new Error("ERR syntax error"))
            : ioredis.callBuffer(command, ...args),
      };
      const nodeRedis = await nodeRedis6();
      const redises = [
        ["redis (ioredis)", ioredis, "exact"],
        ["redis (node-redis)", nodeRedis.client, "exact"],
        ["redis (ioredis, a server before 7.0)", before7, "elapsed"],
      ] as const;
      for (const [i, [name, client, retryAfter]] of redises.entries()) {
        factories.push((run, now) => ({
          name,
          store: new RedisIdempotencyStore(client, { prefix: `${prefix}${i}:${run}:`, now }),
          key: (key) => key,
          retryAfter,
          headerOrder: true,
        }));
      }
      closers.push(async () => {
        const keys = [...(await ioredis.keys(`${prefix}*`)), ...(await ioredis.keys(`{${prefix}*`))];
        if (keys.length > 0) await ioredis.del(...keys);
        ioredis.disconnect();
        await nodeRedis.close();
      });
    });
    afterAll(async () => {
      for (const close of closers) await close();
    });

    // Each step is a round trip on every store (two more for the reads after it). 40 sequences of up to 30 steps on
    // six stores (memory, PGlite, PostgreSQL, Redis through three clients) took about 4 s on the 2-core machine alone
    // and 10.5 s beside other test files (load average 8), where opening PGlite took 5 s more: near 20 s in all.
    it("answers every step as the model does, on every store", async () => {
      await fc.assert(
        fc.asyncProperty(steps(REAL), (sequence) => check(sequence, factories, ++runs)),
        { numRuns: 40 },
      );
    });
  });
});
