/**
 * The shop's configuration: `loadConfig` read from environment variables, `main.ts` started as `npm start`
 * starts it, and the webhook URL policy that WEBHOOKS_ALLOW_INSECURE_URLS switches.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createShop, type Shop } from "../../examples/shop/app";
import { loadConfig, type ShopConfig } from "../../examples/shop/config";
import { type Listening, listen } from "../../examples/shop/server";
import { issueToken } from "../../examples/shop/tokens";
import { bundledOnce } from "../support/bundled-script";
import { client, eventually } from "./shop-harness";

const SECRETS = {
  SHOP_JWT_SECRET: "j".repeat(32),
  SHOP_API_KEY: "sk_test_0123456789abcdef",
};

function loaded(env: Record<string, string | undefined>) {
  const result = loadConfig(env);
  if (!result.ok) throw new Error(`expected a valid configuration, got: ${result.errors.join("; ")}`);
  return result;
}

/** The variable each configuration error names (the text before the colon). */
function failing(env: Record<string, string | undefined>): string[] {
  const result = loadConfig(env);
  if (result.ok) throw new Error("expected the configuration to be refused");
  return result.errors.map((error) => error.split(":")[0] as string);
}

describe("loadConfig", () => {
  it("listens on 127.0.0.1:3000 and keeps its data in an embedded PGlite directory by default", () => {
    const { server, shop } = loaded({});
    expect(server).toEqual({ port: 3000, host: "127.0.0.1" });
    expect(shop.storage).toEqual({ kind: "pglite", dataDir: ".data/shop", schema: "shop" });
    expect(shop.bodyLimit).toBe(65_536);
    expect(shop.allowInsecureWebhookUrls).toBe(false);
  });

  it("reads PORT, and refuses one that is not a port number", () => {
    expect(loaded({ PORT: "8080" }).server.port).toBe(8080);
    expect(loaded({ PORT: "0" }).server.port).toBe(0);
    expect(failing({ PORT: "http" })).toEqual(["PORT"]);
    expect(failing({ PORT: "70000" })).toEqual(["PORT"]);
  });

  // Regression: Number() read an empty PORT as 0, a random port, and "0x10" as port 16.
  it("takes PORT and SHOP_BODY_LIMIT in decimal digits only, not what Number() would make of them", () => {
    for (const value of ["", " ", "0x10", "1e3", "+80", "80.0", "-1"]) {
      expect(failing({ PORT: value }), JSON.stringify(value)).toEqual(["PORT"]);
      expect(failing({ SHOP_BODY_LIMIT: value.replace("80", "2048") }), JSON.stringify(value)).toEqual([
        "SHOP_BODY_LIMIT",
      ]);
    }
    expect(loaded({ SHOP_BODY_LIMIT: "2048" }).shop.bodyLimit).toBe(2048);
    expect(failing({ SHOP_BODY_LIMIT: "1023" })).toEqual(["SHOP_BODY_LIMIT"]);
  });

  it("reads SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS in decimal milliseconds, and leaves the worker's default when unset", () => {
    expect(loaded({}).shop.webhookCircuitCoolDownMs).toBeUndefined();
    expect(loaded({ SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS: "1500" }).shop.webhookCircuitCoolDownMs).toBe(1500);
    for (const value of ["", "0", "1e3", "-5", "1.5", "soon"])
      expect(failing({ SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS: value }), JSON.stringify(value)).toEqual([
        "SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS",
      ]);
  });

  it("generates SHOP_API_KEY and SHOP_JWT_SECRET in development when unset, and says so", () => {
    const first = loaded({});
    expect(first.generated.sort()).toEqual(["SHOP_API_KEY", "SHOP_JWT_SECRET"]);
    expect(first.shop.apiKey).toMatch(/^sk_dev_[A-Za-z0-9_-]{32}$/);
    expect(first.shop.jwtSecret.length).toBeGreaterThanOrEqual(32);
    // Fresh for each start, never a fixed default.
    expect(loaded({}).shop.apiKey).not.toBe(first.shop.apiKey);
    const given = loaded(SECRETS);
    expect(given.generated).toEqual([]);
    expect(given.shop.apiKey).toBe(SECRETS.SHOP_API_KEY);
    expect(given.shop.jwtSecret).toBe(SECRETS.SHOP_JWT_SECRET);
  });

  it("refuses to start in production without both secrets, or with insecure webhook URLs", () => {
    expect(failing({ NODE_ENV: "production" }).sort()).toEqual(["SHOP_API_KEY", "SHOP_JWT_SECRET"]);
    expect(failing({ NODE_ENV: "production", SHOP_API_KEY: SECRETS.SHOP_API_KEY })).toEqual(["SHOP_JWT_SECRET"]);
    expect(failing({ NODE_ENV: "production", ...SECRETS, WEBHOOKS_ALLOW_INSECURE_URLS: "1" })).toEqual([
      "WEBHOOKS_ALLOW_INSECURE_URLS",
    ]);
    expect(loaded({ NODE_ENV: "production", ...SECRETS }).generated).toEqual([]);
  });

  it("refuses secrets too short to be secrets", () => {
    expect(failing({ SHOP_JWT_SECRET: "short" })).toEqual(["SHOP_JWT_SECRET"]);
    expect(failing({ SHOP_API_KEY: "short" })).toEqual(["SHOP_API_KEY"]);
    // One no Authorization: Bearer field can carry, as read from a file with its line feed (RFC 6750 §2.1).
    expect(failing({ SHOP_API_KEY: `${SECRETS.SHOP_API_KEY}\n` })).toEqual(["SHOP_API_KEY"]);
    expect(failing({ SHOP_API_KEY: "sk test 0123456789abcdef" })).toEqual(["SHOP_API_KEY"]);
  });

  it("turns WEBHOOKS_ALLOW_INSECURE_URLS on only for 1, true or yes", () => {
    for (const on of ["1", "true", "yes"]) {
      expect(loaded({ WEBHOOKS_ALLOW_INSECURE_URLS: on }).shop.allowInsecureWebhookUrls).toBe(true);
    }
    for (const off of [undefined, "", "0", "false", "no"]) {
      expect(loaded({ WEBHOOKS_ALLOW_INSECURE_URLS: off }).shop.allowInsecureWebhookUrls).toBe(false);
    }
    expect(failing({ WEBHOOKS_ALLOW_INSECURE_URLS: "maybe" })).toEqual(["WEBHOOKS_ALLOW_INSECURE_URLS"]);
  });

  it("keeps the ephemeral memory mode with SHOP_STORAGE=memory, and reads SHOP_DATA_DIR", () => {
    expect(loaded({ SHOP_STORAGE: "memory" }).shop.storage).toEqual({ kind: "memory" });
    expect(loaded({ SHOP_STORAGE: "memory", DATABASE_URL: "postgres://u@db/x" }).shop.storage).toEqual({
      kind: "memory",
    });
    expect(loaded({ SHOP_DATA_DIR: "/var/lib/shop" }).shop.storage).toMatchObject({
      kind: "pglite",
      dataDir: "/var/lib/shop",
    });
    expect(failing({ SHOP_STORAGE: "postgres" })).toEqual(["DATABASE_URL"]);
    expect(failing({ SHOP_STORAGE: "sqlite" })).toEqual(["SHOP_STORAGE"]);
  });

  it("uses PostgreSQL when DATABASE_URL is set, in SHOP_DB_SCHEMA", () => {
    const { shop } = loaded({ DATABASE_URL: "postgres://u@db.example:5432/shop", SHOP_DB_SCHEMA: "store" });
    expect(shop.storage).toEqual({ kind: "postgres", url: "postgres://u@db.example:5432/shop", schema: "store" });
    expect(failing({ DATABASE_URL: "mysql://u@db.example/shop" })).toEqual(["DATABASE_URL"]);
  });
});

describe("WEBHOOKS_ALLOW_INSECURE_URLS", () => {
  let running: { shop: Shop; server: Listening } | undefined;
  afterEach(async () => {
    await running?.server.close();
    await running?.shop.close();
    running = undefined;
  });

  async function start(env: Record<string, string>): Promise<{ apiKey: string; url: string }> {
    const config: ShopConfig = { ...loaded({ ...SECRETS, SHOP_STORAGE: "memory", ...env }).shop, deliver: false };
    const shop = await createShop(config);
    const server = await listen(shop.handler, { port: 0, host: "127.0.0.1", bodyLimit: config.bodyLimit });
    running = { shop, server };
    return { apiKey: config.apiKey, url: server.url };
  }

  const register = (url: string, apiKey: string, target: string) =>
    client(url, apiKey)("POST", "/v1/webhook_endpoints", {
      body: `url=${encodeURIComponent(target)}&enabled_events[]=order.*`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });

  const refused: [string, string][] = [
    ["http://hooks.example.com/in", "insecure_scheme"],
    ["https://127.0.0.1:4000/webhooks", "forbidden_address"],
    ["https://localhost:4000/webhooks", "forbidden_address"],
    ["https://[::1]:4000/webhooks", "forbidden_address"],
  ];

  it("unset: http:// and loopback consumer URLs are refused with a 422 problem", async () => {
    const { apiKey, url } = await start({});
    for (const [target, code] of refused) {
      const reply = await register(url, apiKey, target);
      expect(reply.status, target).toBe(422);
      expect(reply.headers.get("content-type"), target).toBe("application/problem+json");
      expect(reply.json().code, target).toBe(code);
    }
    // A public HTTPS address is accepted (an IP literal: no DNS needed).
    expect((await register(url, apiKey, "https://1.1.1.1/webhooks")).status).toBe(201);
  });

  it("set to 1: a local consumer on http://127.0.0.1 can be registered", async () => {
    const { apiKey, url } = await start({ WEBHOOKS_ALLOW_INSECURE_URLS: "1" });
    expect((await register(url, apiKey, "http://127.0.0.1:4000/webhooks")).status).toBe(201);
    expect((await register(url, apiKey, "http://localhost:4000/webhooks")).status).toBe(201);
  });
});

// Concurrent: each start is a process of its own, on a port of its own; the three that exit early overlap the one
// that initialises PGlite twice.
describe.concurrent("npm start (examples/shop/main.ts)", () => {
  // `npm start`'s entry bundled once for the five starts below (bundled-script.ts), not compiled by tsx per start.
  const main = bundledOnce(fileURLToPath(new URL("../../examples/shop/main.ts", import.meta.url)));
  const children: ChildProcess[] = [];
  // After all, not each: the tests run side by side, and each one's children live until it ends.
  afterAll(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  });

  async function run(env: Record<string, string>) {
    const base = { ...process.env };
    for (const name of Object.keys(base)) {
      if (/^(SHOP_|DATABASE_URL$|NODE_ENV$|PORT$|HOST$|WEBHOOKS_)/.test(name)) delete base[name];
    }
    const started = spawn(process.execPath, [await main()], {
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(started);
    const output = { stdout: "", stderr: "" };
    started.stdout?.on("data", (chunk: Buffer) => {
      output.stdout += chunk.toString();
    });
    started.stderr?.on("data", (chunk: Buffer) => {
      output.stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => started.on("exit", resolve));
    return { started, output, exited };
  }

  it("prints the generated API key and an admin token in development, and both work; the data survives a restart", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "shop-start-")), "data");
    const { started, output, exited } = await run({ PORT: "0", SHOP_DATA_DIR: dataDir });
    const url = await eventually(
      "the shop to listen",
      () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output.stdout)?.[1],
      90_000, // the first start initialises PGlite: seconds on a quiet machine, more on a busy one
    );
    const apiKey = await eventually(
      "the generated API key",
      () => /SHOP_API_KEY was not set; generated for this run: (sk_dev_\S+)/.exec(output.stdout)?.[1],
      90_000,
    );
    const token = await eventually(
      "the admin token",
      () => /An admin token for it \(1 h\):\n\s+(\S+)/.exec(output.stdout)?.[1],
      90_000,
    );
    expect((await client(url, apiKey)("GET", "/v1/webhook_endpoints")).status).toBe(200);
    const created = await client(url, token)("POST", "/users", { body: { name: "Started", tier: "basic" } });
    expect(created.status).toBe(201);
    expect(output.stdout).toContain(`initialising a new PGlite data directory at ${dataDir}`);
    expect(output.stdout).toContain(`(storage: pglite, data in ${dataDir})`);
    started.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(output.stdout).toContain("SIGTERM, shutting down");
    // The same directory again: no initialisation, and the user is still there (with a new secret: a new token).
    const again = await run({ PORT: "0", SHOP_DATA_DIR: dataDir, SHOP_JWT_SECRET: "j".repeat(32) });
    const url2 = await eventually(
      "the shop to listen again",
      () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(again.output.stdout)?.[1],
      90_000,
    );
    expect(again.output.stdout).not.toContain("initialising");
    const admin = await issueToken("j".repeat(32), { sub: "admin", admin: true });
    const id = created.json<{ id: string }>().id;
    expect((await client(url2, admin)("GET", `/users/${id}`)).status).toBe(200);
    again.started.kill("SIGTERM");
    expect(await again.exited).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  }, 240_000);

  it("on a busy port, says so and how to pick another, with no stack trace, and exits 1", async () => {
    const busy = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => busy.once("listening", resolve));
    try {
      const port = String((busy.address() as AddressInfo).port);
      const { output, exited } = await run({ PORT: port, SHOP_STORAGE: "memory" });
      expect(await exited).toBe(1);
      expect(output.stderr).toContain(`shop: 127.0.0.1:${port} is already in use`);
      expect(output.stderr).toContain("PORT=0 picks a free one");
      expect(output.stderr).not.toMatch(/\n\s+at /); // no stack
    } finally {
      busy.close();
    }
  }, 60_000);

  it("when the storage cannot be opened, says which and why in one line, without the password, and exits 1", async () => {
    // A port nothing listens on: the PostgreSQL server refuses the connection (regression: a stack trace).
    const closed = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => closed.once("listening", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { output, exited } = await run({ PORT: "0", DATABASE_URL: `postgres://shop:s3cret@127.0.0.1:${port}/shop` });
    expect(await exited).toBe(1);
    expect(output.stderr).toContain(`shop: cannot open the storage (postgres at 127.0.0.1:${port}/shop, schema shop)`);
    expect(output.stderr).toContain("ECONNREFUSED");
    expect(output.stderr).not.toContain("s3cret");
    expect(output.stderr).not.toMatch(/\n\s+at /); // no stack
    expect(output.stdout).not.toContain("listening on");
  }, 60_000);

  it("exits with status 1 and names the missing secrets in production", async () => {
    const { output, exited } = await run({ NODE_ENV: "production", PORT: "0" });
    expect(await exited).toBe(1);
    expect(output.stderr).toContain("shop: invalid configuration");
    expect(output.stderr).toContain("SHOP_API_KEY");
    expect(output.stderr).toContain("SHOP_JWT_SECRET");
    expect(output.stdout).not.toContain("listening on");
  }, 60_000);
});
