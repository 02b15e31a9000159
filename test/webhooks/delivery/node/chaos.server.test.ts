import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrate, transaction } from "../../../../src/postgres/index";
import { createEndpointAdmin } from "../../../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../../../src/webhooks/delivery/postgres/index";
import { type BundledScript, bundleScript } from "../../../support/bundled-script";
import { onServer } from "../../../support/databases";
import { freePort } from "../../../support/free-port";
import { databaseUrl, uniqueName } from "../../../support/services";

const EVENTS = 10_000;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const children = new Set<ChildProcess>();
// Each compiled once (bundled-script.ts) for the three starts and the restart after every kill: under tsx each start
// compiled the modules again, a second of CPU that the workers and the consumer needed.
const bundled: { worker?: BundledScript; consumer?: BundledScript } = {};
beforeAll(async () => {
  [bundled.worker, bundled.consumer] = await Promise.all([
    bundleScript(here("./chaos/worker.ts")),
    bundleScript(here("./chaos/consumer.ts")),
  ]);
});

function start(script: "worker" | "consumer", env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [(bundled[script] as BundledScript).file], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return child;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  bundled.worker?.remove();
  bundled.consumer?.remove();
});

onServer(
  "chaos: real processes, a misbehaving consumer, workers killed",
  () => {
    it(`delivers every one of ${EVENTS} events at least once`, { timeout: 120_000 }, async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 6 });
      const schema = uniqueName("whchaos").toLowerCase();
      try {
        await migrate(pool, deliveryMigrations({ schema }));
        const endpoints = createPostgresEndpointStore({ client: pool, schema });
        const queue = createPostgresDeliveryQueue({ client: pool, schema });
        const port = await freePort();
        const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
        const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve: false });
        const created = await admin.create({ url: `http://127.0.0.1:${port}/hooks`, enabled_events: ["order.*"] });
        if (!created.ok) throw new Error("endpoint refused");
        const secret = created.value.secrets[0]!.secret;

        const consumer = start("consumer", { CHAOS_PORT: String(port), CHAOS_SECRET: secret });
        const workerEnv = { CHAOS_SCHEMA: schema, DATABASE_URL: databaseUrl as string };
        const workers = [start("worker", workerEnv), start("worker", workerEnv)];

        // Publish in transactions from several clients while the workers run (the outbox path).
        const publishers = [0, 1, 2, 3].map(async (p) => {
          for (let batch = 0; batch < EVENTS / 4 / 250; batch++) {
            await transaction(pool, async (tx) => {
              const outbox = queue.withClient(tx);
              for (let i = 0; i < 250; i++) {
                const n = p * (EVENTS / 4) + batch * 250 + i;
                await outbox.publish(createEvent({ id: `evt_chaos_${n}`, type: "order.created", data: { n } }));
              }
            });
          }
        });

        let kills = 0;
        let stop = false;
        const killer = (async () => {
          while (!stop && kills < 6) {
            await sleep(1_500 + Math.random() * 1_500);
            if (stop) break;
            const index = kills % workers.length;
            workers[index]?.kill("SIGKILL");
            kills++;
            await sleep(100);
            workers[index] = start("worker", workerEnv);
          }
        })();

        const t0 = Date.now();
        await Promise.all(publishers);
        console.log(`published in ${Date.now() - t0} ms`);
        const deadline = Date.now() + 100_000;
        let delivered = 0;
        while (Date.now() < deadline) {
          const { rows } = await pool.query(
            `SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
                  count(*) FILTER (WHERE status = 'exhausted')::int AS exhausted,
                  count(*)::int AS total
           FROM "${schema}"."webhook_deliveries"`,
          );
          const row = rows[0] as { delivered: number; exhausted: number; total: number };
          delivered = row.delivered;
          expect(row.exhausted).toBe(0);
          if (delivered === EVENTS && kills >= 3) break;
          await sleep(100); // the test ends within a tenth of a second of the last delivery
        }
        stop = true;
        await killer;

        const stats = await new Promise<{ unique: number; accepted: number; rejectedSignatures: number }>((resolve) => {
          consumer.once("message", (m) =>
            resolve(m as { unique: number; accepted: number; rejectedSignatures: number }),
          );
          consumer.send("stats");
        });
        const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}"."webhook_attempts"`);
        const attempts = (rows[0] as { n: number }).n;
        console.log(
          `chaos: ${EVENTS} events, ${delivered} delivered, consumer accepted ${stats.accepted} (${stats.unique} unique, duplicates: ${stats.accepted - stats.unique}), ${attempts} attempts logged, ${kills} worker kills`,
        );
        expect(delivered).toBe(EVENTS);
        expect(stats.unique).toBe(EVENTS);
        expect(stats.rejectedSignatures).toBe(0);
        expect(kills).toBeGreaterThanOrEqual(3);
      } finally {
        for (const child of children) child.kill("SIGKILL");
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      }
    });
  },
  "several processes share one database, and PGlite is one process",
);
