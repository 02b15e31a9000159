/**
 * Differential model test: the memory, Redis and PostgreSQL stores, each driven through `createRateLimiter` with the
 * same random sequence of requests, against a reference that restates GCRA and the carry over a policy change in BigInt
 * rationals (sharing no code with gcra.ts or carry-state.ts). Checked after every step, for every store:
 * - the decision and the header fields it gives (docs/rate-limits.md, "Header semantics") equal the reference's;
 * - no key was ever admitted more than the documented bound (docs, "The guarantee" and "Changing a policy"): between
 *   any two of its admissions, n ≤ (Δt + max b·T) / min T over the policies in play (b + Δt / T for one policy), clock
 *   steps backwards included (Δt < 0);
 * - hostile keys (long, unicode, NUL, characters special to Redis or SQL, keys that differ only by case or Unicode
 *   normalisation) are distinct limits: a collision would make a store's decisions differ from the reference's.
 *
 * Time is the caller's (Redis `clock: "caller"`), never the wall clock. Redis still expires a key on its own clock,
 * after the wait its allowance needs to be full again (docs, "Redis": "Clock"): every emission interval here is 8.5 s
 * or more, so a key outlives a run however long the fake clock stands still.
 */
import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isWellFormed } from "../../src/http/well-formed";
import type { SqlDatabase } from "../../src/postgres/index";
import { migrate } from "../../src/postgres/index";
import {
  createEndpointRateLimiter,
  createMemoryStore,
  createRateLimiter,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitPolicy,
  type RateLimitStore,
  rateLimitHeaders,
} from "../../src/ratelimit/index";
import { createPostgresRateLimitStore, rateLimitMigrations } from "../../src/ratelimit/postgres/index";
import { createRedisStore } from "../../src/ratelimit/redis/index";
import { databases, type OpenDatabase } from "../support/databases";
import { redisUrl, skipWithoutRedis, uniqueName } from "../support/services";

// ---------------------------------------------------------------------------------------------------------------------
// The reference: one TAT per limit as an exact instant, in ticks of the limit's own (docs, "Exact arithmetic").

interface Limit {
  readonly quota: bigint;
  readonly periodMs: bigint;
  readonly burst: bigint;
  /** Ticks per ms: the quota, or quota / gcd(quota, period) where b·period + quota passes 2^53 − 1. */
  readonly perMs: bigint;
  /** T = period / quota ms, in ticks. */
  readonly interval: bigint;
}

interface Held {
  readonly limits: readonly Limit[];
  /** Per limit, its theoretical arrival time in its ticks since the epoch. */
  readonly tat: readonly bigint[];
}

interface ReferenceStep {
  readonly allowed: boolean;
  readonly left: readonly bigint[];
  /** Per limit, ms until one more unit frees up (0 when the allowance is full). */
  readonly resetMs: readonly bigint[];
  readonly held: Held | undefined;
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

function limitOf(policy: RateLimitPolicy): Limit {
  const [quota, periodMs, burst] = [
    BigInt(policy.quota),
    BigInt(policy.window * 1000),
    BigInt(policy.burst ?? policy.quota),
  ];
  const g = burst * periodMs + quota <= BigInt(Number.MAX_SAFE_INTEGER) ? 1n : gcd(quota, periodMs);
  return { quota, periodMs, burst, perMs: quota / g, interval: periodMs / g };
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a <= 0n ? -(-a / b) : (a + b - 1n) / b);

/** Whether window `a` is strictly nearer `period` than window `b` is, by ratio (docs, "Changing a policy"). */
function nearer(period: bigint, a: bigint, b: bigint): boolean {
  const [aHigh, aLow] = a >= period ? [a, period] : [period, a];
  const [bHigh, bLow] = b >= period ? [b, period] : [period, b];
  return aHigh * bLow < bHigh * aLow;
}

/**
 * The TAT each new limit starts from (docs, "Changing a policy"): the stored limit with the same window, else the one
 * left with the nearest window (the first of two as near), as the same instant rounded up to a tick of its own; a limit
 * for which none is left starts afresh (its TAT now: nothing ahead).
 */
function carried(held: Held | undefined, limits: readonly Limit[], nowMs: bigint): bigint[] {
  if (held === undefined) return limits.map((limit) => nowMs * limit.perMs);
  const taken = held.limits.map(() => false);
  const source = limits.map((limit) => {
    const j = held.limits.findIndex((stored, index) => !taken[index] && stored.periodMs === limit.periodMs);
    if (j !== -1) taken[j] = true;
    return j;
  });
  limits.forEach((limit, i) => {
    if (source[i] !== -1) return;
    let best = -1;
    held.limits.forEach((stored, j) => {
      if (taken[j]) return;
      if (best === -1 || nearer(limit.periodMs, stored.periodMs, (held.limits[best] as Limit).periodMs)) best = j;
    });
    if (best !== -1) taken[best] = true;
    source[i] = best;
  });
  return limits.map((limit, i) => {
    const j = source[i] as number;
    if (j === -1) return nowMs * limit.perMs;
    const from = held.limits[j] as Limit;
    return ceilDiv((held.tat[j] as bigint) * limit.perMs, from.perMs);
  });
}

/**
 * One request at `nowMs` (docs, "The guarantee"): admitted when `max(TAT, now) + T − now ≤ b · T` for every limit, and
 * then recorded in all of them; a refused request records nothing. `r` is the units admissible now, `t` the time until
 * one more frees up.
 */
function referenceCheck(held: Held | undefined, limits: readonly Limit[], nowMs: bigint): ReferenceStep {
  const tat = carried(held, limits, nowMs);
  // Everything in each limit's ticks.
  const ahead = limits.map((limit, i) => {
    const d = (tat[i] as bigint) - nowMs * limit.perMs;
    return d > 0n ? d : 0n;
  });
  const allowed = limits.every((limit, i) => (ahead[i] as bigint) + limit.interval <= limit.burst * limit.interval);
  const after = ahead.map((d, i) => (allowed ? d + (limits[i] as Limit).interval : d));
  const left = limits.map((limit, i) => {
    const room = limit.burst * limit.interval - (after[i] as bigint);
    return room <= 0n ? 0n : room / limit.interval;
  });
  // One more unit is available once `after − elapsed ≤ b·T − (left + 1)·T`, i.e. after that many ticks, in whole ms.
  const resetMs = limits.map((limit, i) => {
    if ((left[i] as bigint) >= limit.burst) return 0n;
    const wait = (after[i] as bigint) - limit.burst * limit.interval + ((left[i] as bigint) + 1n) * limit.interval;
    return ceilDiv(wait, limit.perMs);
  });
  const next = allowed ? { limits, tat: after.map((d, i) => nowMs * (limits[i] as Limit).perMs + d) } : held;
  return { allowed, left, resetMs, held: next };
}

/** The decision the limiter reports for a reference step (docs, "Header semantics"; `RateLimitDecision`). */
function referenceDecision(policies: readonly RateLimitPolicy[], step: ReferenceStep) {
  let retryAfterMs = 0n;
  const results = policies.map((policy, i) => {
    const left = step.left[i] as bigint;
    const reset = step.resetMs[i] as bigint;
    if (left === 0n && reset > retryAfterMs) retryAfterMs = reset;
    const resetSeconds = Number(ceilDiv(reset, 1000n));
    return {
      policy: policy.name,
      allowed: left > 0n || step.allowed,
      remaining: Number(left),
      resetSeconds,
      retryAfterSeconds: left > 0n ? 0 : resetSeconds,
    };
  });
  return { allowed: step.allowed, retryAfterMs: Number(retryAfterMs), results };
}

/** The header fields the reference decision shows, written out here (draft-11 §3, §4; RFC 9110 §10.2.3). */
function referenceHeaders(policies: readonly RateLimitPolicy[], decision: ReturnType<typeof referenceDecision>) {
  const headers: Record<string, string> = {
    "ratelimit-policy": policies.map((p) => `"${p.name}";q=${p.quota};w=${p.window}`).join(", "),
    ratelimit: decision.results.map((r) => `"${r.policy}";r=${r.remaining};t=${r.resetSeconds}`).join(", "),
  };
  if (!decision.allowed) headers["retry-after"] = String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
  return headers;
}

const actualDecision = (decision: RateLimitDecision) => ({
  allowed: decision.allowed,
  retryAfterMs: decision.retryAfterMs,
  results: decision.results.map((r) => ({
    policy: r.policy.name,
    allowed: r.allowed,
    remaining: r.remaining,
    resetSeconds: r.resetSeconds,
    retryAfterSeconds: r.retryAfterSeconds,
  })),
});

// ---------------------------------------------------------------------------------------------------------------------
// The bound: between a key's i-th and j-th admissions (in the order they were made), at times t_i and t_j,
// (j − i + 1) · min T ≤ t_j − t_i + max b·T, over the limits of the chain that carried the key's TAT throughout (docs,
// "The guarantee" and "Changing a policy"). It holds whatever the clock does: each admission moves the TAT on by its T
// (a carry only rounds it up), so TAT_j ≥ t_i + (j − i + 1) · min T, and an admission leaves it at most b·T past its
// time.

interface Admission {
  readonly atMs: bigint;
  /** The limits of its set that carry the key's TAT on from set to set (every limit but in an "anchored" run). */
  readonly chain: readonly Limit[];
}

/**
 * n · T_min ≤ Δt + (b·T)_max, exactly (T = periodMs / quota), for every run of admissions ending at the last one:
 * checked after each admission, so every run is checked once.
 */
function withinBound(admissions: readonly Admission[]): string | undefined {
  const j = admissions.length - 1;
  let minT: Limit | undefined;
  let maxBT: Limit | undefined;
  for (let i = j; i >= 0; i--) {
    for (const limit of (admissions[i] as Admission).chain) {
      if (minT === undefined || limit.periodMs * minT.quota < minT.periodMs * limit.quota) minT = limit;
      const bt = limit.burst * limit.periodMs;
      if (maxBT === undefined || bt * maxBT.quota > maxBT.burst * maxBT.periodMs * limit.quota) maxBT = limit;
    }
    if (minT === undefined || maxBT === undefined) continue;
    const n = BigInt(j - i + 1);
    const dt = (admissions[j] as Admission).atMs - (admissions[i] as Admission).atMs;
    // n · P₁/q₁ ≤ Δt + b₂·P₂/q₂, times q₁·q₂.
    const lhs = n * minT.periodMs * maxBT.quota;
    const rhs = dt * minT.quota * maxBT.quota + maxBT.burst * maxBT.periodMs * minT.quota;
    if (lhs > rhs) return `${n} admissions in ${dt} ms (admissions ${i}..${j})`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------------
// The scenarios.

/** Windows of 60 s and more with quotas of at most 7: T ≥ 8.5 s (see the file's comment on Redis expiry). */
const WINDOWS = [60, 120, 180, 240, 3_600] as const;

const policyArb = (window: fc.Arbitrary<number>) =>
  fc
    .record({
      quota: fc.integer({ min: 1, max: 7 }),
      window,
      burst: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
    })
    .map(({ burst, ...rest }) => (burst === undefined ? rest : { ...rest, burst }));

/**
 * How the policy sets of one run relate, which decides the chain the bound follows: every set holds one limit (each
 * carries the last one's TAT), or every set holds a limit of one anchor window (the same window is carried first, so
 * that limit's TAT goes on from set to set) and maybe one of another window, in either order. "free" sets of one or two
 * limits of any windows exercise the nearest-window choice (a tie goes to the first stored limit); their chains may
 * break (a limit left with no stored one starts afresh), so the bound is checked on the others only.
 */
type Shape = "single" | "anchored" | "free";

interface Scenario {
  readonly shape: Shape;
  readonly sets: readonly (readonly RateLimitPolicy[])[];
  /** "anchored": the window every set holds a limit of, in ms. */
  readonly anchorMs?: bigint;
}

const named = (policies: readonly Omit<RateLimitPolicy, "name">[]): RateLimitPolicy[] =>
  policies.map((policy, i) => ({ ...policy, name: `p${i}` }));

const windowArb = fc.constantFrom(...WINDOWS);

/**
 * 10^12 per 9·10^12 s (T = 9 s): with burst 1 it counts in ticks of 10^-12 ms, with a larger burst in ticks of 1 ms
 * (docs, "Exact arithmetic"), so a change of burst alone carries the TAT between the two.
 */
const bigPolicyArb = fc.constantFrom(1, 2, 5).map((burst) => ({ quota: 1e12, window: 9e12, burst }));

const anyPolicyArb = fc.oneof({ weight: 4, arbitrary: policyArb(windowArb) }, { weight: 1, arbitrary: bigPolicyArb });

const scenarioArb: fc.Arbitrary<Scenario> = fc.oneof(
  fc
    .array(anyPolicyArb, { minLength: 1, maxLength: 3 })
    .map((policies) => ({ shape: "single" as const, sets: policies.map((policy) => named([policy])) })),
  windowArb.chain((anchor) =>
    fc
      .array(
        fc.tuple(
          policyArb(fc.constant(anchor)),
          fc.option(policyArb(fc.constantFrom(...WINDOWS.filter((w) => w !== anchor))), { nil: undefined }),
          fc.boolean(),
        ),
        { minLength: 1, maxLength: 3 },
      )
      .map((sets) => ({
        shape: "anchored" as const,
        anchorMs: BigInt(anchor * 1000),
        sets: sets.map(([first, second, swap]) =>
          named(second === undefined ? [first] : swap ? [second, first] : [first, second]),
        ),
      })),
  ),
  fc
    .array(fc.array(anyPolicyArb, { minLength: 1, maxLength: 2 }), { minLength: 2, maxLength: 3 })
    .map((sets) => ({ shape: "free" as const, sets: sets.map(named) })),
);

/**
 * Keys hostile to one store or another, in groups of keys that a store could plausibly mistake for one another: case
 * and Unicode normalisation (NFC "é" and NFD "e\u0301", "Å" as U+00C5 and U+212B, "ß" and "ss" under case folding),
 * NUL and control characters (PostgreSQL's text refuses NUL), Redis glob and Cluster hash-tag characters, SQL quotes
 * and placeholders, characters outside the BMP, and long keys: past the memory store's 256-character digest and Redis's
 * 256-character head, equal in those 256, or with a surrogate pair cut by the 256th code unit.
 */
const HOSTILE_GROUPS: readonly (readonly string[])[] = [
  ["k", "K", "k ", " k"],
  ["é", "e\u0301", "E\u0301", "É"],
  ["\u00c5", "\u212b", "A\u030a"],
  ["ß", "SS", "ss", "ẞ"],
  ["", "\u0000", "k", "k\u0000", "k\u0000x", "\u0000\u0001\n"],
  ["\r\n", "\n", "\r", "\t", " "],
  ["*", "?", "[a-z]", "a", "\\*"],
  ["{tag}", "{tag}k", "tag", "{}", "{"],
  ["'; DROP TABLE rate_limits; --", "'", "''", '"', "$1", "\\", "%_", "%"],
  ["\u{1F600}", "\u{1F601}", "\ufffd", "\u200b", "\ufeff"],
  ["x".repeat(255), "x".repeat(256), "x".repeat(257), "x".repeat(300)],
  [`${"x".repeat(300)}a`, `${"x".repeat(300)}b`, `a${"x".repeat(300)}`],
  [`${"y".repeat(255)}\u{1F600}tail`, `${"y".repeat(255)}\u{1F601}tail`, `${"y".repeat(255)}\ufffdtail`],
  ["z".repeat(10_000), `${"z".repeat(10_000)}!`, `${"z".repeat(9_999)}Z`],
];

const HOSTILE_KEYS = [...new Set(HOSTILE_GROUPS.flat())];

/** A run's keys: two to four of one hostile group, or a few from anywhere, or any well-formed strings. */
const keysArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(...HOSTILE_GROUPS)
      .chain((group) => fc.shuffledSubarray([...group], { minLength: 2, maxLength: Math.min(4, group.length) })),
  },
  { weight: 1, arbitrary: fc.uniqueArray(fc.constantFrom(...HOSTILE_KEYS), { minLength: 1, maxLength: 4 }) },
  {
    weight: 1,
    arbitrary: fc.uniqueArray(fc.string({ unit: "binary", maxLength: 40 }).filter(isWellFormed), {
      minLength: 1,
      maxLength: 4,
    }),
  },
);

/**
 * A step: which key, under which policy set, after which change of the caller's clock. The clock stands still, moves
 * on by less than an emission interval or by many, or steps back a little (two instances' clocks a few seconds apart)
 * or by an hour.
 */
const stepArb = fc.record({
  key: fc.nat(),
  set: fc.nat(),
  dtMs: fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 20_000 }) },
    { weight: 2, arbitrary: fc.integer({ min: 20_000, max: 900_000 }) },
    { weight: 2, arbitrary: fc.integer({ min: -20_000, max: -1 }) },
    { weight: 1, arbitrary: fc.constant(-3_600_000) },
  ),
});

const T0 = 1_763_000_000_000;
const startArb = fc.constantFrom(T0, 0, -T0);

// ---------------------------------------------------------------------------------------------------------------------

interface Subject {
  readonly name: string;
  readonly store: RateLimitStore;
}

const skipRedis = skipWithoutRedis();
const namespace = `${uniqueName("rl_model")}:`;
const schema = uniqueName("rl_model").toLowerCase();
const backend = databases().at(-1);

describe("rate-limit stores vs an independent GCRA reference, through createRateLimiter", () => {
  const subjects: Subject[] = [];
  let redis: Redis | undefined;
  let database: OpenDatabase | undefined;
  let run = 0;

  beforeAll(async () => {
    subjects.push({ name: "memory", store: createMemoryStore() });
    if (!skipRedis) {
      redis = new Redis(redisUrl as string);
      subjects.push({ name: "redis", store: createRedisStore({ client: redis, clock: "caller" }) });
    }
    if (backend !== undefined) {
      database = await backend.open({ max: 4 });
      const db: SqlDatabase = database.db;
      await migrate(db, rateLimitMigrations({ schema }));
      subjects.push({
        name: `postgres (${backend.name})`,
        store: createPostgresRateLimitStore({ client: db, schema }),
      });
    }
  });

  afterAll(async () => {
    if (redis !== undefined) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${namespace}*`, "COUNT", 500);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== "0");
      redis.disconnect();
    }
    if (database !== undefined) {
      await database.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await database.close();
    }
  });

  it("every store decides as the reference through policy changes and clock steps, within the bound", async () => {
    await fc.assert(
      fc.asyncProperty(
        scenarioArb,
        keysArb,
        startArb,
        fc.array(stepArb, { minLength: 1, maxLength: 30 }),
        async (scenario, keys, start, steps) => {
          run++;
          // Each run its own prefix (every store sees prefix + key, so the hostile part stays at the end).
          const prefix = `${namespace}${run}:`;
          const limiters: RateLimiter[][] = subjects.map(({ store }) =>
            scenario.sets.map((policies) => createRateLimiter({ policies, store, prefix })),
          );
          const held = new Map<string, Held | undefined>();
          // Per store, per key: the admissions it made.
          const admitted = subjects.map(() => new Map<string, Admission[]>());
          let now = start;
          for (const [index, step] of steps.entries()) {
            now += step.dtMs;
            const key = keys[step.key % keys.length] as string;
            const which = step.set % scenario.sets.length;
            const policies = scenario.sets[which] as RateLimitPolicy[];
            const limits = policies.map(limitOf);
            const before = held.get(key);
            const expected = referenceCheck(before, limits, BigInt(now));
            held.set(key, expected.held);
            const decision = referenceDecision(policies, expected);
            if (!decision.allowed) {
              // The reference's own reading of Retry-After: one who waits retryAfterMs is admitted, not a ms before.
              const due = BigInt(now + decision.retryAfterMs);
              expect(referenceCheck(before, limits, due).allowed).toBe(true);
              expect(referenceCheck(before, limits, due - 1n).allowed).toBe(false);
            }
            const headers = referenceHeaders(policies, decision);

            const actual = await Promise.all(
              limiters.map((byStore) => (byStore[which] as RateLimiter).check(key, now)),
            );
            actual.forEach((got, s) => {
              const where = `${(subjects[s] as Subject).name}, step ${index}, key ${JSON.stringify(key).slice(0, 60)}`;
              expect(actualDecision(got), where).toEqual(decision);
              expect(rateLimitHeaders(got), where).toEqual(headers);
              if (!got.allowed || scenario.shape === "free") return;
              const chain =
                scenario.shape === "anchored" ? limits.filter((limit) => limit.periodMs === scenario.anchorMs) : limits;
              const log = (admitted[s] as Map<string, Admission[]>).get(key) ?? [];
              log.push({ atMs: BigInt(now), chain });
              (admitted[s] as Map<string, Admission[]>).set(key, log);
              expect(withinBound(log), where).toBeUndefined();
            });
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  // Every hostile key at once, each its own limit: admitted once (burst 1), then refused, in every store.
  it("keeps every hostile key a distinct limit, none erroring", async () => {
    run++;
    const prefix = `${namespace}${run}:`;
    const policies = [{ name: "p", quota: 1, window: 3_600, burst: 1 }];
    const distinct = HOSTILE_KEYS;
    for (const { name, store } of subjects) {
      const limiter = createRateLimiter({ policies, store, prefix });
      const first = await Promise.all(distinct.map((key) => limiter.check(key, T0)));
      expect(
        first.map((d) => d.allowed),
        name,
      ).toEqual(distinct.map(() => true));
      const again = await Promise.all(distinct.map((key) => limiter.check(key, T0 + 1)));
      expect(
        again.map((d) => d.allowed),
        name,
      ).toEqual(distinct.map(() => false));
    }
  });

  /**
   * The endpoint pacer's rates as the docs say it stores them ("The guarantee", last paragraph): a decimal rate as an
   * integer quota per 1, 1000 or 1,000,000 s, any other as the fraction it was divided from. T ≥ 8 s each.
   */
  const RATES: readonly (readonly [perSecond: number, quota: number, periodMs: number])[] = [
    [0.1, 100, 1_000_000],
    [0.05, 50, 1_000_000],
    [0.125, 125, 1_000_000],
    [0.0625, 62_500, 1_000_000_000],
    [1 / 9, 1, 9_000],
    [1 / 30, 1, 30_000],
    [1 / 86_400, 1, 86_400_000],
  ];

  it("every store paces endpoints as the reference, through rate and clock changes, within the bound", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        keysArb,
        startArb,
        fc.array(
          fc.record({ key: fc.nat(), rate: fc.nat({ max: RATES.length - 1 }), dtMs: stepArb.map((s) => s.dtMs) }),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        async (burst, keys, start, steps) => {
          run++;
          const prefix = `${namespace}${run}:`;
          const pacers = subjects.map(({ store }) => createEndpointRateLimiter({ store, burst, prefix }));
          const held = new Map<string, Held | undefined>();
          const admitted = subjects.map(() => new Map<string, Admission[]>());
          let now = start;
          for (const [index, step] of steps.entries()) {
            now += step.dtMs;
            const key = keys[step.key % keys.length] as string;
            const [perSecond, quota, periodMs] = RATES[step.rate] as (typeof RATES)[number];
            const limit = limitOf({ name: "pacer", quota, window: periodMs / 1000, burst });
            const expected = referenceCheck(held.get(key), [limit], BigInt(now));
            held.set(key, expected.held);
            // Refused: the exact instant the next delivery is admitted (docs, "Example").
            const answer = expected.allowed
              ? { allowed: true }
              : { allowed: false, retryAtMs: now + Number(expected.resetMs[0] as bigint) };
            const actual = await Promise.all(pacers.map((pacer) => pacer.acquire(key, perSecond, now)));
            actual.forEach((got, s) => {
              const where = `${(subjects[s] as Subject).name}, step ${index}, key ${JSON.stringify(key).slice(0, 60)}`;
              expect(got, where).toEqual(answer);
              if (!got.allowed) return;
              const log = (admitted[s] as Map<string, Admission[]>).get(key) ?? [];
              log.push({ atMs: BigInt(now), chain: [limit] });
              (admitted[s] as Map<string, Admission[]>).set(key, log);
              expect(withinBound(log), where).toBeUndefined();
            });
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});
