/**
 * The example consumer over real HTTP: signed deliveries (signed by the `standardwebhooks` package) are
 * acknowledged with 202 and processed once; bad signatures get 400; `failFirst` answers 503 first.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { type ConsumerApp, createConsumerApp } from "../../examples/consumer/app";
import { loadConsumerSettings } from "../../examples/consumer/config";
import { type Listening, listen } from "../../examples/shop/server";
import { bundledOnce } from "../support/bundled-script";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

interface Running {
  app: ConsumerApp;
  server: Listening;
  lines: string[];
}

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  await running?.app.close();
  running = undefined;
});

async function start(options: { failFirst?: number; failTypes?: string } = {}): Promise<Running> {
  const lines: string[] = [];
  const app = createConsumerApp({ secret: SECRET, ...options, background: false, log: (line) => lines.push(line) });
  const server = await listen(app.handler, { port: 0, host: "127.0.0.1" });
  running = { app, server, lines };
  return running;
}

function deliver(url: string, event: { id: string; type: string; data: Record<string, unknown> }, secret = SECRET) {
  const body = JSON.stringify({ ...event, timestamp: new Date().toISOString() });
  const id = `msg_${event.id}`;
  const timestamp = new Date();
  const signature = new Webhook(secret).sign(id, timestamp, body);
  return fetch(`${url}/webhooks`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signature,
    },
    body,
  });
}

describe("the example consumer", () => {
  it("acknowledges with 202 and processes each event once, however often it is delivered", async () => {
    const { app, server } = await start();
    const event = { id: `evt_${randomUUID()}`, type: "order.shipped", data: { id: "ord_1" } };
    for (let i = 0; i < 3; i++) expect((await deliver(server.url, event)).status).toBe(202);
    await app.drain();
    expect(app.processed.map((p) => [p.type, p.subject])).toEqual([["order.shipped", "ord_1"]]);
  });

  it("refuses a bad signature with a 400 problem and processes nothing", async () => {
    const { app, server, lines } = await start();
    const event = { id: `evt_${randomUUID()}`, type: "order.created", data: { id: "ord_2" } };
    const reply = await deliver(server.url, event, "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldCBhdCBhbGw=");
    expect(reply.status).toBe(400);
    expect(reply.headers.get("content-type")).toBe("application/problem+json");
    await app.drain();
    expect(app.processed).toEqual([]);
    expect(lines.some((line) => line.startsWith("refused a delivery"))).toBe(true);
  });

  it("fails the first deliveries of matching events with 503 when asked to", async () => {
    const { app, server } = await start({ failFirst: 2, failTypes: "order.shipped" });
    const shipped = { id: `evt_${randomUUID()}`, type: "order.shipped", data: { id: "ord_3" } };
    const created = { id: `evt_${randomUUID()}`, type: "order.created", data: { id: "ord_3" } };
    expect((await deliver(server.url, created)).status).toBe(202);
    expect((await deliver(server.url, shipped)).status).toBe(503);
    expect((await deliver(server.url, shipped)).status).toBe(503);
    expect((await deliver(server.url, shipped)).status).toBe(202);
    await app.drain();
    expect(app.processed.map((p) => p.type)).toEqual(["order.created", "order.shipped"]);
  });
});

describe("the example consumer's settings", () => {
  it("defaults to 127.0.0.1:4000, failing nothing", () => {
    expect(loadConsumerSettings({ WEBHOOK_SECRET: SECRET })).toEqual({
      ok: true,
      settings: { secret: SECRET, port: 4000, host: "127.0.0.1", failFirst: 0, failTypes: "*" },
    });
  });

  // z.coerce.number() read "" as 0: `PORT=` listened on a random port, and "0x1F90" on 8080.
  it.each(["", " ", "0x1F90", "1e3", "-1", "4000.5"])("refuses PORT=%j, which is not a decimal port", (port) => {
    const loaded = loadConsumerSettings({ WEBHOOK_SECRET: SECRET, PORT: port });
    expect(loaded.ok).toBe(false);
    expect(loaded.ok ? [] : loaded.errors).toEqual(["PORT: must be written in decimal digits"]);
  });

  it("refuses a CONSUMER_FAIL_FIRST that is not a decimal count, and a secret that is not whsec_", () => {
    const loaded = loadConsumerSettings({ WEBHOOK_SECRET: "secret", CONSUMER_FAIL_FIRST: "" });
    expect(loaded.ok ? [] : loaded.errors.map((line) => line.split(":")[0])).toEqual([
      "WEBHOOK_SECRET",
      "CONSUMER_FAIL_FIRST",
    ]);
  });

  // Bundled once for both starts (bundled-script.ts), not compiled by tsx per start.
  const main = bundledOnce(fileURLToPath(new URL("../../examples/consumer/main.ts", import.meta.url)));
  /** Starts main.ts to its end (killed after 20 s): its exit status and output. */
  async function runMain(
    env: Record<string, string>,
  ): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [await main()], {
      env: { ...process.env, WEBHOOK_SECRET: SECRET, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 20_000,
    });
    const output = { stdout: "", stderr: "" };
    child.stdout.on("data", (chunk: Buffer) => {
      output.stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output.stderr += chunk.toString();
    });
    const status = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    });
    return { status, ...output };
  }

  // Concurrent: two processes of their own, side by side.
  it.concurrent("main.ts exits 1 on an empty PORT instead of listening on a random port", {
    timeout: 30_000,
  }, async () => {
    const run = await runMain({ PORT: "" });
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain("PORT: must be written in decimal digits");
  });

  // It crashed with an EADDRINUSE stack trace where the shop says one line.
  it.concurrent("main.ts says in one line that its port is taken, and exits 1", { timeout: 30_000 }, async () => {
    const taken = await listen(() => ({ status: 204, headers: {} }), { port: 0, host: "127.0.0.1" });
    try {
      const run = await runMain({ PORT: taken.url.split(":").pop() as string });
      expect(run.status, run.stdout + run.stderr).toBe(1);
      expect(run.stderr.trim()).toMatch(/^consumer: 127\.0\.0\.1:\d+ is already in use\. Pick another port/);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await taken.close();
    }
  });
});
