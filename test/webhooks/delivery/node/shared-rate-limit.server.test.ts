import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { migrate } from "../../../../src/postgres/index";
import { createEndpointAdmin } from "../../../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../../../src/webhooks/delivery/postgres/index";
import { bundleScript } from "../../../support/bundled-script";
import { onServer } from "../../../support/databases";
import { databaseUrl, uniqueName } from "../../../support/services";
import { localServer } from "./local-server";

// Issue 15: the per-endpoint rate limit is shared by every worker process on one PostgreSQL queue. Four processes,
// one endpoint limited to 10 deliveries a second, 20 s of real time: together they send at most 10/s plus the burst.
const RATE = 10;
const BURST = 1; // createEndpointRateLimiter's default: evenly spaced, one every 1 / RATE s
const RUN_MS = 20_000;
const WORKERS = 4;
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

// Bundled once and started with plain node: under tsx each of the four starts compiled every module again.
function start(file: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`worker exited early (${code})`)));
  });
}

onServer(
  "shared per-endpoint rate limit across worker processes",
  () => {
    it(`${WORKERS} worker processes together deliver at most ${RATE}/s plus the burst to one endpoint`, {
      timeout: 90_000,
    }, async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
      const schema = uniqueName("whrate").toLowerCase();
      const arrivals: number[] = [];
      const server = await localServer((_req, res) => {
        arrivals.push(performance.now());
        res.end("ok");
      });
      // Bundled while the schema is migrated and the backlog published.
      const bundling = bundleScript(fileURLToPath(new URL("./shared-rate/worker.ts", import.meta.url)));
      try {
        await migrate(pool, deliveryMigrations({ schema }));
        const endpoints = createPostgresEndpointStore({ client: pool, schema });
        const queue = createPostgresDeliveryQueue({ client: pool, schema });
        const admin = createEndpointAdmin({
          endpoints,
          queue,
          urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
          resolve: false,
        });
        const created = await admin.create({ url: server.url, enabled_events: ["*"], rate_limit: RATE });
        if (!created.ok) throw new Error("endpoint refused");
        // More than the run can deliver: the limit, not the backlog, decides.
        await Promise.all(
          Array.from({ length: RATE * (RUN_MS / 1_000) * 2 }, (_, i) =>
            queue.publish(createEvent({ type: "order.created", data: { i } })),
          ),
        );
        const { file } = await bundling;
        const workers = await Promise.all(
          Array.from({ length: WORKERS }, () =>
            start(file, { RATE_SCHEMA: schema, DATABASE_URL: databaseUrl as string }),
          ),
        );
        while (arrivals.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        const first = arrivals[0] as number;
        // Real time is the point of this test: the limit is per second of the workers' clocks.
        await new Promise((resolve) => setTimeout(resolve, RUN_MS));
        for (const worker of workers) worker.kill("SIGKILL");
        const inRun = arrivals.filter((at) => at - first < RUN_MS);
        // Any 1 s window holds at most RATE + BURST arrivals (one more for the network's jitter between the
        // limiter's decision and the arrival).
        let most = 0;
        for (let i = 0; i < inRun.length; i++) {
          let j = i;
          while (j < inRun.length && (inRun[j] as number) - (inRun[i] as number) < 1_000) j++;
          most = Math.max(most, j - i);
        }
        expect(most).toBeLessThanOrEqual(RATE + BURST + 1);
        // The whole run: at most RATE/s plus the burst. A slot the limiter offers is lost when no worker is there to
        // take it at once (evenly spaced, burst 1), so how far below the rate a run falls depends on the machine's
        // load (seen: 80 % with two other processes busy, 40 % on an overloaded CI machine): not asserted. That the
        // bound is not met vacuously, by workers that stopped: a second's worth arrived, and deliveries still
        // arrived in the run's second half.
        expect(inRun.length).toBeLessThanOrEqual((RATE * RUN_MS) / 1_000 + BURST + 1);
        expect(inRun.length).toBeGreaterThanOrEqual(RATE);
        expect((inRun.at(-1) as number) - first).toBeGreaterThanOrEqual(RUN_MS / 2);
      } finally {
        (await bundling.catch(() => undefined))?.remove();
        await server.close();
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      }
    });
  },
  "several worker processes on one database need a PostgreSQL server",
);
