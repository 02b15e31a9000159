/**
 * The shop's default storage (embedded PGlite in a data directory) across restarts, with `npm start`'s entry
 * (examples/shop/main.ts) in real processes: users, orders and pending webhook deliveries survive a graceful stop (SIGTERM) and a crash (SIGKILL in the
 * middle of a burst of writes: every write answered 2xx is kept); once the consumer, down all along, comes up, the
 * event of every answered order is delivered (once or more).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueToken } from "../../examples/shop/tokens";
import { verify } from "../../src/webhooks/signing/index";
import { type BundledScript, bundleScript } from "../support/bundled-script";
import { freePort } from "../support/free-port";

const main = fileURLToPath(new URL("../../examples/shop/main.ts", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "shop-restart-"));
const children = new Set<ChildProcess>();
let consumer: Server | undefined;
// `npm start`'s entry compiled once for the three starts below (bundled-script.ts), not once per start.
let bundled: BundledScript | undefined;
beforeAll(async () => {
  bundled = await bundleScript(main);
});
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  bundled?.remove();
  await new Promise<void>((resolve) => (consumer ? consumer.close(() => resolve()) : resolve()));
  rmSync(dataDir, { recursive: true, force: true });
});

interface Shop {
  url: string;
  output: () => string;
  stop(signal: "SIGTERM" | "SIGKILL"): Promise<number | null>;
}

function start(env: Record<string, string>): Promise<Shop> {
  // The default storage: no server, no explicit mode.
  const { DATABASE_URL: _server, SHOP_STORAGE: _mode, ...inherited } = process.env;
  const child = spawn(process.execPath, [(bundled as BundledScript).file], {
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let out = "";
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  child.stderr?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match)
        resolve({
          url: match[1] as string,
          output: () => out,
          stop: async (signal) => {
            child.kill(signal);
            return exited;
          },
        });
    });
    void exited.then((code) => reject(new Error(`the shop exited (${code}) before listening:\n${out}`)));
  });
}

describe("the shop on its default PGlite storage, restarted", () => {
  it("keeps users and orders through SIGTERM and SIGKILL, and delivers every pending event once the consumer is up", {
    timeout: 180_000,
  }, async () => {
    const env = {
      PORT: "0",
      SHOP_DATA_DIR: dataDir,
      SHOP_JWT_SECRET: randomBytes(32).toString("base64url"),
      SHOP_API_KEY: `sk_test_${randomBytes(16).toString("base64url")}`,
      WEBHOOKS_ALLOW_INSECURE_URLS: "1",
      // Fast retries with a budget (about 20 s of attempts) longer than the consumer is down.
      SHOP_WEBHOOK_RETRY_SCHEDULE: [0, ...Array(100).fill(200)].join(","),
      // The circuit the down consumer opened probes again after 1 s, not the default 30 s, once the consumer is up.
      SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS: "1000",
    };
    const admin = await issueToken(env.SHOP_JWT_SECRET, { sub: "admin", admin: true });
    const call = async (shop: Shop, method: string, path: string, body?: unknown, token = admin) => {
      const response = await fetch(`${shop.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: await response.json() };
    };
    const consumerPort = await freePort(); // nothing listens there until the end

    let shop = await start(env);
    expect(shop.output()).toContain(`storage: pglite, data in ${dataDir}`);
    expect(shop.output()).toContain("initialising a new PGlite data directory");
    const user = await call(shop, "POST", "/users", { name: "Ada", tier: "gold" });
    expect(user.status).toBe(201);
    const endpoint = await call(
      shop,
      "POST",
      "/v1/webhook_endpoints",
      { url: `http://127.0.0.1:${consumerPort}/hooks`, enabled_events: ["order.created"] },
      env.SHOP_API_KEY,
    );
    expect(endpoint.status).toBe(201);
    const secret = endpoint.body.secret as string;
    const orderIds: string[] = [];
    const order = async () => {
      const created = await call(shop, "POST", `/users/${user.body.id}/orders`, {
        items: [{ sku: "TEA-1", quantity: 1, unit_price: 450 }],
      });
      if (created.status !== 201) throw new Error(`POST answered ${created.status}`);
      orderIds.push(created.body.id as string);
    };
    for (let i = 0; i < 10; i++) await order();

    // A graceful stop, then a restart on the same directory: no initialisation, everything there.
    expect(await shop.stop("SIGTERM")).toBe(0);
    shop = await start(env);
    expect(shop.output()).not.toContain("initialising");
    const listed = await call(shop, "GET", `/users/${user.body.id}/orders?limit=100`);
    expect(listed.status).toBe(200);
    expect((listed.body as { id: string }[]).map((o) => o.id).sort()).toEqual([...orderIds].sort());

    // Thirty more, five in flight at a time, and a SIGKILL mid-burst: every order answered 201 must survive.
    const dying = shop;
    let answered = 0;
    let killed: Promise<number | null> | undefined;
    let next = 0;
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        while (next < 30 && killed === undefined) {
          next++;
          try {
            await order();
            if (++answered === 15) killed = dying.stop("SIGKILL");
          } catch {
            // the process died with this request in flight: never answered, so nothing is promised
          }
        }
      }),
    );
    await killed;
    shop = await start(env); // the dead process's lock is taken over
    expect((await call(shop, "GET", `/users/${user.body.id}`)).body).toMatchObject({ name: "Ada", tier: "gold" });
    const after = await call(shop, "GET", `/users/${user.body.id}/orders?limit=100`);
    const kept = new Set((after.body as { id: string }[]).map((o) => o.id));
    for (const id of orderIds) expect(kept.has(id), id).toBe(true);

    // The consumer comes up: every order's event arrives, signed with the endpoint's secret.
    const delivered = new Map<string, number>();
    let resolveAll: () => void = () => {};
    const all = new Promise<void>((resolve) => {
      resolveAll = resolve;
    });
    consumer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const result = verify<{ type: string; data: { id: string } }>({
          body: Buffer.concat(chunks),
          headers: req.headers,
          secrets: secret,
        });
        if (!result.ok) {
          res.writeHead(400).end();
          return;
        }
        const id = result.payload.data.id;
        delivered.set(id, (delivered.get(id) ?? 0) + 1);
        res.writeHead(204).end();
        if (orderIds.every((orderId) => delivered.has(orderId))) resolveAll();
      });
    }).listen(consumerPort, "127.0.0.1");
    await all;
    // Every answered order's event, and only events of orders the database kept (one in flight may have committed).
    for (const id of orderIds) expect(delivered.has(id), id).toBe(true);
    for (const id of delivered.keys()) expect(kept.has(id), id).toBe(true);
    expect(await shop.stop("SIGTERM")).toBe(0);
  });
});
