/** In-memory store: rest-webhooks' GCRA limiter against rate-limiter-flexible's RateLimiterMemory. */
import { RateLimiterMemory } from "rate-limiter-flexible";
import { compilePolicies, createMemoryStore, createRateLimiter } from "../../src/ratelimit/index";
import { type Contender, compare, report } from "./measure";

interface Case {
  name: string;
  keys: number;
  quota: number;
  /**
   * Every check a key never seen before, through a store already holding `maxKeys` (ours evicts one key per check;
   * rate-limiter-flexible keeps every key until its window ends).
   */
  fresh?: { maxKeys: number };
}

const CASES: Case[] = [
  { name: "admitted, 1 key", keys: 1, quota: 1_000_000_000 },
  { name: "admitted, 10 000 keys", keys: 10_000, quota: 1_000_000_000 },
  { name: "admitted, 200 000 keys", keys: 200_000, quota: 1_000_000_000 },
  { name: "refused, 1 hot key over quota", keys: 1, quota: 10 },
  {
    name: "admitted, every key new, full 100 000-key store",
    keys: 0,
    quota: 1_000_000_000,
    fresh: { maxKeys: 100_000 },
  },
];

function contenders(c: Case): Contender[] {
  const keys = Array.from({ length: c.keys }, (_, i) => `user:${i}`);
  const store = createMemoryStore({ maxKeys: c.fresh?.maxKeys ?? 1_000_000 });
  const policy = compilePolicies([{ name: "minute", quota: c.quota, window: 60 }]);
  for (let i = 0; i < (c.fresh?.maxKeys ?? 0); i++) store.checkSync(`user:old:${i}`, policy, Date.now());
  const limiter = createRateLimiter({ policies: [{ name: "minute", quota: c.quota, window: 60 }], store });
  const rlf = new RateLimiterMemory({ points: c.quota, duration: 60 });
  // Each contender draws its own never-seen keys.
  const keyOf = () => {
    let next = 0;
    return c.fresh === undefined ? (i: number) => keys[i % c.keys] as string : () => `user:new:${next++}`;
  };
  const ours = keyOf();
  const theirs = keyOf();
  return [
    {
      name: "rest-webhooks",
      check: async (i) => (await limiter.check(ours(i), Date.now())).allowed,
    },
    {
      name: "rate-limiter-flexible",
      check: async (i) => {
        try {
          await rlf.consume(theirs(i));
          return true;
        } catch {
          return false;
        }
      },
    },
  ];
}

async function checkAnswers(): Promise<void> {
  for (const contender of contenders({ name: "check", keys: 1, quota: 5 })) {
    const answers: boolean[] = [];
    for (let i = 0; i < 7; i++) answers.push(await contender.check(0));
    if (answers.join() !== "true,true,true,true,true,false,false") {
      throw new Error(`${contender.name} answered ${answers.join()} for 7 checks against a quota of 5`);
    }
  }
}

/** Runs the memory cases; returns our ops/s ÷ theirs per case. */
export async function benchMemory(): Promise<{ name: string; ratio: number; inMean: boolean }[]> {
  await checkAnswers();
  console.log("\n### memory store, one check at a time (await each); answers checked first");
  const ratios: { name: string; ratio: number; inMean: boolean }[] = [];
  for (const c of CASES) {
    const subjects = contenders(c);
    const results = await compare(subjects, { rounds: 11, sampleMs: 100, inFlight: 1 });
    ratios.push({
      // The eviction case stays out of the geometric mean, which keeps measuring the cases it always has.
      inMean: c.fresh === undefined,
      name: c.name,
      ratio: report(
        `memory/${c.name}`,
        subjects.map((s) => s.name),
        results,
      ),
    });
  }
  return ratios;
}
