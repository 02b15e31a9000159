import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { migrate } from "../../../../src/postgres/index";
import { createWebhookConsumer } from "../../../../src/webhooks/consumer/index";
import {
  createPostgresInbox,
  inboxMigrations,
  type PostgresInbox,
} from "../../../../src/webhooks/consumer/postgres/index";
import { generateSecret, sign } from "../../../../src/webhooks/signing/index";
import { onServer } from "../../../support/databases";
import { databaseUrl, uniqueName } from "../../../support/services";
import { listen, nowSeconds } from "../support";

const skip = databaseUrl === undefined;
const child = fileURLToPath(new URL("./fixtures/processor-child.ts", import.meta.url));
const schema = uniqueName("wh_crash_test");
const effectsTable = `${schema}.effects`;
const children: ChildProcess[] = [];
let pool: pg.Pool;
let inbox: PostgresInbox;

beforeAll(async () => {
  if (skip) return;
  pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  await migrate(pool, inboxMigrations({ schema }));
  inbox = createPostgresInbox({ client: pool, schema });
  await pool.query(`CREATE TABLE ${effectsTable} (event_id text NOT NULL, attempt int NOT NULL)`);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  if (skip) return;
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
});

/** Starts a processor process and resolves when it prints a line matching `until`. */
function startProcessor(mode: "hang" | "process", clockOffsetMs: number, until: RegExp) {
  const proc = spawn(process.execPath, ["--import", "tsx", child], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      INBOX_SCHEMA: schema,
      EFFECTS_TABLE: effectsTable,
      MODE: mode,
      CLOCK_OFFSET_MS: String(clockOffsetMs),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(proc);
  const line = new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no ${until} from the child; got ${JSON.stringify(out)}`)), 30_000);
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const found = out.split("\n").find((l) => until.test(l));
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    proc.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the child exited (${code ?? signal}) before ${until}; output ${JSON.stringify(out)}`));
    });
  });
  return { proc, line };
}

onServer(
  "a processor killed after the 2xx and before finishing",
  () => {
    it("leaves the event to be processed exactly once after a restart (SIGKILL, PostgreSQL inbox)", async () => {
      const secret = generateSecret();
      const server = await listen(createWebhookConsumer({ inbox, secrets: secret }));
      try {
        const body = JSON.stringify({ type: "order.paid", data: { order: "o1" } });
        const headers = sign({ id: "msg_crash", timestamp: nowSeconds(), body, secrets: secret });
        const response = await fetch(server.url, { method: "POST", body, headers });
        expect(response.status).toBe(202);
      } finally {
        await server.close();
      }

      const first = startProcessor("hang", 0, /^started msg_crash$/);
      await first.line;
      const exited = new Promise((resolve) => first.proc.once("exit", resolve));
      first.proc.kill("SIGKILL");
      await exited;
      expect((await inbox.get("msg_crash"))?.state).toBe("processing");

      // The restarted processor's clock is past the dead one's lease: no waiting on the wall clock.
      const second = startProcessor("process", 11_000, /^processed msg_crash \d+$/);
      expect(await second.line).toBe("processed msg_crash 2");
      // The line is printed inside the handler, before its transaction commits.
      await vi.waitFor(async () => expect((await inbox.get("msg_crash"))?.state).toBe("done"), { timeout: 10_000 });
      second.proc.kill("SIGTERM");

      // The killed attempt's write rolled back with its transaction; only the finished one remains.
      const effects = await pool.query(`SELECT event_id, attempt FROM ${effectsTable}`);
      expect(effects.rows).toEqual([{ event_id: "msg_crash", attempt: 2 }]);
      expect(await inbox.get("msg_crash")).toMatchObject({ state: "done", attempts: 2 });
    }, 60_000);
  },
  "several processes share one database, and PGlite is one process",
);
