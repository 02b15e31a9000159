/** In-memory store: rest-webhooks' GCRA limiter against rate-limiter-flexible's RateLimiterMemory. */
import { RateLimiterMemory } from "rate-limiter-flexible";
import { createMemoryStore, createRateLimiter } from "../../src/ratelimit/index";
import { type Contender, compare, report } from "./measure";

interface Case {
  name: string;
  keys: number;
  quota: number;
}

const CASES: Case[] = [
  { name: "admitted, 1 key", keys: 1, quota: 1_000_000_000 },
  { name: "admitted, 10 000 keys", keys: 10_000, quota: 1_000_000_000 },
  { name: "admitted, 200 000 keys", keys: 200_000, quota: 1_000_000_000 },
  { name: "refused, 1 hot key over quota", keys: 1, quota: 10 },
];

function contenders(c: Case): Contender[] {
  const keys = Array.from({ length: c.keys }, (_, i) => `user:${i}`);
  const limiter = createRateLimiter({
    policies: [{ name: "minute", quota: c.quota, window: 60 }],
    store: createMemoryStore({ maxKeys: 1_000_000 }),
  });
  const rlf = new RateLimiterMemory({ points: c.quota, duration: 60 });
  return [
    {
      name: "rest-webhooks",
      check: async (i) => (await limiter.check(keys[i % c.keys] as string, Date.now())).allowed,
    },
    {
      name: "rate-limiter-flexible",
      check: async (i) => {
        try {
          await rlf.consume(keys[i % c.keys] as string);
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
export async function benchMemory(): Promise<{ name: string; ratio: number }[]> {
  await checkAnswers();
  console.log("\n### memory store, one check at a time (await each); answers checked first");
  const ratios: { name: string; ratio: number }[] = [];
  for (const c of CASES) {
    const subjects = contenders(c);
    const results = await compare(subjects, { rounds: 11, sampleMs: 100, inFlight: 1 });
    ratios.push({
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
