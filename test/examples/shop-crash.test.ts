/**
 * Exactly-once POST, as a client sees it: the shop in a real process, bursts of 200 keyed POSTs in flight, the process
 * SIGKILLed at a random moment (and, to make it certain, at an injected point between an order's write and its
 * idempotency record's completion), then every key retried on a fresh process until it answers 2xx (started beside the
 * dying one, so no round waits on a start; it shares nothing with it but the database).
 * PostgreSQL: the record, the order and its event share one transaction, so exactly one order and one event per key.
 * Memory: a restart forgets keys and resources alike, so a key answered before the crash runs again (at least once).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueToken } from "../../examples/shop/tokens";
import { type BundledScript, bundleScript } from "../support/bundled-script";
import { onServer } from "../support/databases";
import { databaseUrl, uniqueName } from "../support/services";

const fixture = fileURLToPath(new URL("./fixtures/shop-process.ts", import.meta.url));
const children = new Set<ChildProcess>();
// Compiled once for the dozen starts below (bundled-script.ts), not once per start.
let bundled: BundledScript | undefined;
beforeAll(async () => {
  bundled = await bundleScript(fixture);
});
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  bundled?.remove();
});

interface Running {
  url: string;
  kill(): Promise<void>;
  exited: Promise<void>;
}

/** Starts the shop process and resolves once it listens. */
function start(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [(bundled as BundledScript).file], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\S+)/.exec(out);
      if (match) {
        resolve({
          url: match[1] as string,
          exited,
          kill: async () => {
            child.kill("SIGKILL");
            await exited;
          },
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`the shop process exited (${code}) before listening: ${out}`)));
  });
}

/** `started`, marked handled until awaited: a start that fails while the test awaits something else fails there. */
function waitable(started: Promise<Running>): Promise<Running> {
  started.catch(() => {});
  return started;
}

interface Answer {
  status: number;
  body: string;
  replayed: boolean;
}

async function post(url: string, path: string, token: string, key: string, body: unknown): Promise<Answer | undefined> {
  try {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": `"${key}"` },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      body: await response.text(),
      replayed: response.headers.get("idempotent-replayed") === "true",
    };
  } catch {
    return undefined; // the process died with the request in flight
  }
}

/** Sends every key with at most `inFlight` requests at once; `afterEach(n)` runs after the n-th answer. */
async function burst(
  keys: readonly string[],
  send: (key: string) => Promise<Answer | undefined>,
  inFlight: number,
  afterEach: (answered: number) => void = () => {},
): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  let next = 0;
  let answered = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < keys.length) {
        const key = keys[next++] as string;
        const answer = await send(key);
        if (answer !== undefined) answers.set(key, answer);
        afterEach(++answered);
      }
    }),
  );
  return answers;
}

/** Retries every key until it answers 2xx; returns the final answers. */
async function retryAll(keys: readonly string[], send: (key: string) => Promise<Answer | undefined>) {
  const finals = new Map<string, Answer>();
  for (let round = 0; round < 20 && finals.size < keys.length; round++) {
    const pending = keys.filter((key) => !finals.has(key));
    const answers = await burst(pending, send, 25);
    for (const [key, answer] of answers) if (answer.status >= 200 && answer.status < 300) finals.set(key, answer);
  }
  expect(finals.size).toBe(keys.length);
  return finals;
}

const ROUNDS = 5;
const KEYS = 200;
const random = (n: number) => Math.floor(Math.random() * n);

onServer(
  "exactly-once POST across crashes (PostgreSQL, real processes)",
  () => {
    it(`${ROUNDS} bursts of ${KEYS} keyed POSTs, each process killed mid-burst: one order and one event per key`, {
      timeout: 240_000,
    }, async () => {
      const schema = uniqueName("shopcrash").toLowerCase();
      const env = {
        DATABASE_URL: databaseUrl as string,
        SHOP_SCHEMA: schema,
        SHOP_JWT_SECRET: randomBytes(32).toString("base64url"),
        SHOP_API_KEY: `sk_test_${randomBytes(16).toString("base64url")}`,
      };
      const admin = await issueToken(env.SHOP_JWT_SECRET, { sub: "admin", admin: true });
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
      try {
        let shop = await start(env);
        // The next process to die at the injected point, started while the one before it still serves: it need only
        // listen by the time that one is killed, so no round waits on a start.
        const crashing = () => waitable(start({ ...env, CRASH_AT_ORDER: String(1 + random(KEYS)) }));
        let nextCrashing = crashing();
        const user = JSON.parse(
          (await post(shop.url, "/users", admin, "setup-user", { name: "Ada", tier: "gold" }))?.body ?? "{}",
        );
        const endpoint = await fetch(`${shop.url}/v1/webhook_endpoints`, {
          method: "POST",
          headers: { authorization: `Bearer ${env.SHOP_API_KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ url: "http://127.0.0.1:9/hooks", enabled_events: ["order.created"] }),
        });
        expect(endpoint.status).toBe(201);
        const item = { items: [{ sku: "TEA-1", quantity: 1, unit_price: 450 }] };
        const path = `/users/${user.id}/orders`;
        const seen = new Map<string, Set<string>>(); // every 2xx body each key answered
        const allKeys: string[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const keys = Array.from({ length: KEYS }, (_, i) => `r${round}-k${i}-${randomBytes(4).toString("hex")}`);
          allKeys.push(...keys);
          // Even rounds die at the injected point (an order written, nothing committed); odd ones at a random moment.
          const injected = round % 2 === 0;
          // A random moment needs no restart: the process that answered the last retries was started with `env`.
          if (injected) {
            await shop.kill();
            shop = await nextCrashing;
          }
          const dying = shop;
          // The process that takes the retries, started beside the one that dies: it knows nothing the database
          // does not, whenever it started, and is up by the time the burst is over.
          const restarting = waitable(start(env));
          if (round + 1 < ROUNDS && (round + 1) % 2 === 0) nextCrashing = crashing();
          const killAfter = random(KEYS);
          const send = (key: string) => post(dying.url, path, admin, key, item);
          const answers = await burst(keys, send, 50, (n) => {
            if (!injected && n === killAfter) void dying.kill();
          });
          await dying.kill();
          for (const [key, answer] of answers) {
            if (answer.status < 300) (seen.get(key) ?? seen.set(key, new Set()).get(key))?.add(answer.body);
          }
          shop = await restarting;
          const restarted = shop;
          const finals = await retryAll(keys, (key) => post(restarted.url, path, admin, key, item));
          for (const [key, answer] of finals) (seen.get(key) ?? seen.set(key, new Set()).get(key))?.add(answer.body);
        }
        // Every retry of a key answered the same body.
        for (const key of allKeys) expect(seen.get(key)?.size, key).toBe(1);
        const orderIds = allKeys.map(
          (key) => JSON.parse([...(seen.get(key) as Set<string>)][0] as string).id as string,
        );
        expect(new Set(orderIds).size).toBe(allKeys.length);
        // Exactly one order per key: the database holds those orders and no other.
        const { rows } = await pool.query(`SELECT id FROM "${schema}".orders WHERE user_id = $1`, [user.id]);
        expect(rows.map((row) => row.id).sort()).toEqual([...orderIds].sort());
        // Exactly one order.created event per order in the outbox, each with its own event id.
        const events = await pool.query(
          `SELECT event_id, payload FROM "${schema}".webhook_deliveries WHERE event_type = 'order.created'`,
        );
        const perOrder = new Map<string, Set<string>>();
        for (const row of events.rows) {
          const orderId = JSON.parse(row.payload).data.id as string;
          (perOrder.get(orderId) ?? perOrder.set(orderId, new Set()).get(orderId))?.add(row.event_id);
        }
        expect(events.rows.length).toBe(orderIds.length);
        for (const id of orderIds) expect(perOrder.get(id)?.size, id).toBe(1);
        await shop.kill();
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      }
    });
  },
  "several processes share one database, and PGlite is one process",
);

describe("idempotency keys on memory storage across a restart", () => {
  it("a key answered before the crash runs again after it: at least once, as documented", {
    timeout: 60_000,
  }, async () => {
    const env = {
      STORAGE: "memory",
      SHOP_JWT_SECRET: randomBytes(32).toString("base64url"),
      SHOP_API_KEY: `sk_test_${randomBytes(16).toString("base64url")}`,
    };
    const admin = await issueToken(env.SHOP_JWT_SECRET, { sub: "admin", admin: true });
    const keys = Array.from({ length: 20 }, (_, i) => `mem-${i}`);
    const body = { name: "Grace", tier: "gold" };
    let shop = await start(env);
    const before = await burst(keys, (key) => post(shop.url, "/users", admin, key, body), 5);
    expect((await post(shop.url, "/users", admin, "mem-0", body))?.replayed).toBe(true); // while it lives: replayed
    await shop.kill();
    shop = await start(env);
    const restarted = shop;
    const after = await retryAll(keys, (key) => post(restarted.url, "/users", admin, key, body));
    for (const key of keys) {
      expect(after.get(key)?.replayed, key).toBe(false);
      expect(JSON.parse(after.get(key)?.body ?? "{}").id).not.toBe(JSON.parse(before.get(key)?.body ?? "{}").id);
    }
    await shop.kill();
  });
});
