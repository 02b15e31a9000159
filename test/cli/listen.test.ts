/**
 * `rest-webhooks listen`, spawned: the example shop delivers an order.created event to it, it verifies and
 * prints the event and forwards it to a receiver that verifies with the `standardwebhooks` package; an
 * unsigned request is refused with the library's diagnosis.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { generateSecret, sign, signWith, stripe } from "../../src/webhooks/signing/index";
import { client, type Receiver, type RunningShop, startReceiver, startShop } from "../examples/shop-harness";
import { freePort } from "../support/free-port";
import { cliEntry, type RunningCli, root, runCli, startCli } from "./run-cli";

describe("rest-webhooks listen", () => {
  let shop: RunningShop;
  let receiver: Receiver;
  let listening: RunningCli;
  let url: string;

  beforeAll(async () => {
    shop = await startShop(createMemoryStorage(), { deliver: true, retryScheduleMs: [0, 25, 25] });
    receiver = await startReceiver();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const endpoint = await client(shop.server.url, shop.config.apiKey)("POST", "/v1/webhook_endpoints", {
      body: { url: `${url}/webhooks`, enabled_events: ["order.created"] },
    });
    expect(endpoint.status).toBe(201);
    const secret = endpoint.json<{ secret: string }>().secret;
    receiver.secret = secret;
    listening = await startCli([
      "listen",
      "--port",
      String(port),
      "--secret",
      secret,
      "--forward-to",
      receiver.url,
      "--json",
    ]);
    await listening.line(/"listening"/);
  });
  afterAll(async () => {
    await listening?.stop();
    await receiver?.close();
    await shop?.close();
  });

  it("verifies a delivery from the shop, prints it and forwards it", async () => {
    const user = await shop.api("POST", "/users", { body: { name: "Ada", tier: "gold" } });
    const order = await shop.api("POST", `/users/${user.json<{ id: string }>().id}/orders`, {
      body: { items: [{ sku: "TEA-1", quantity: 1, unit_price: 450 }] },
    });
    expect(order.status).toBe(201);
    const line = JSON.parse(await listening.line(/"type":"order\.created"/)) as Record<string, unknown>;
    expect(line).toMatchObject({ verified: true, type: "order.created", forwardStatus: 204 });
    expect(line.id).toMatch(/^evt_|^msg_/);
    expect(receiver.received.map((r) => r.type)).toContain("order.created");
    expect(receiver.received.find((r) => r.type === "order.created")?.data).toMatchObject({
      id: order.json<{ id: string }>().id,
    });
  });

  it("refuses an unsigned request with 400 and prints why", async () => {
    const response = await fetch(`${url}/webhooks`, { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const line = JSON.parse(await listening.line(/"verified":false/)) as Record<string, unknown>;
    expect(line).toMatchObject({ verified: false, code: "missing_header", path: "/webhooks" });
  });
});

/** `listen --scheme stripe` on a free port, forwarding to `to`: the running CLI and the URL it listens at. */
async function listenForwardingTo(to: string, secret: string): Promise<{ listening: RunningCli; url: string }> {
  const listening = await startCli([
    "listen",
    "--port",
    "0",
    "--scheme",
    "stripe",
    "--secret",
    secret,
    "--forward-to",
    to,
    "--json",
  ]);
  const url = (JSON.parse(await listening.line(/"listening"/)) as { listening: string }).listening;
  return { listening, url };
}

describe("rest-webhooks listen --scheme stripe --forward-to a URL that redirects", () => {
  const secret = "whsec_test_listen";
  const forwarded: string[] = [];
  const redirecting = createServer((req, res) => {
    forwarded.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => res.writeHead(302, { location: "/elsewhere" }).end());
  });
  let listening: RunningCli;
  let url: string;

  beforeAll(async () => {
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    const to = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hooks?token=s3cr3t-T0KEN`;
    ({ listening, url } = await listenForwardingTo(to, secret));
  });
  afterAll(async () => {
    await listening?.stop();
    redirecting.close();
    redirecting.closeAllConnections();
  });

  async function deliver(id: string): Promise<{ status: number; line: Record<string, unknown> }> {
    const body = JSON.stringify({ id, object: "event", type: "invoice.paid", data: {} });
    const headers = signWith(stripe, { id, timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
    const response = await fetch(`${url}/webhooks`, { method: "POST", headers, body });
    const line = JSON.parse(await listening.line(new RegExp(`"id":"${id}"`))) as Record<string, unknown>;
    return { status: response.status, line };
  }

  it("prints Stripe's payload id, as the consumer module derives it (regression: a sha256: id)", async () => {
    const { line } = await deliver("evt_listen_1");
    expect(line).toMatchObject({ verified: true, type: "invoice.paid", id: "evt_listen_1" });
  });

  it("answers the redirect's status and does not follow it (regression: the POST became a GET)", async () => {
    forwarded.length = 0;
    const { status, line } = await deliver("evt_listen_2");
    expect(status).toBe(302);
    expect(line).toMatchObject({ forwardStatus: 302 });
    expect(forwarded).toEqual(["POST /hooks?token=s3cr3t-T0KEN"]);
  });

  // Regression: the listening line and every forward's line printed a token in the --forward-to query.
  it("prints the --forward-to query's names only, never its values, and forwards the whole URL", async () => {
    forwarded.length = 0;
    const { line } = await deliver("evt_listen_3");
    expect(line).toMatchObject({ forwardedTo: expect.stringMatching(/\/hooks\?token=…$/) });
    expect(forwarded).toEqual(["POST /hooks?token=s3cr3t-T0KEN"]);
    expect(listening.output()).toMatch(/"forwardTo":"http:\/\/127\.0\.0\.1:\d+\/hooks\?token=…"/);
    expect(listening.output()).not.toContain("s3cr3t");
  });
});

describe("rest-webhooks listen --forward-to a URL that never answers", () => {
  const secret = "whsec_test_listen";
  const waiting: (() => void)[] = [];
  const arrived = new Promise<void>((resolve) => waiting.push(resolve));
  // Reads the forwarded request and never answers, as a target stuck in a debugger does.
  const hanging = createServer((req) => {
    req.resume();
    req.on("end", () => waiting.shift()?.());
  });
  let listening: RunningCli;
  let url: string;

  beforeAll(async () => {
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const to = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks`;
    ({ listening, url } = await listenForwardingTo(to, secret));
  });
  afterAll(() => {
    hanging.close();
    hanging.closeAllConnections();
  });

  it("stops on SIGTERM at once, the forward aborted (regression: it waited out the 30 s forward timeout)", async () => {
    const body = JSON.stringify({ id: "evt_hang", object: "event", type: "invoice.paid", data: {} });
    const headers = signWith(stripe, {
      id: "evt_hang",
      timestamp: Math.floor(Date.now() / 1000),
      body,
      secrets: secret,
    });
    const delivery = fetch(`${url}/webhooks`, { method: "POST", headers, body }).catch(() => undefined);
    await arrived;
    expect(await listening.stop()).toBe(0);
    await delivery;
  }, 10_000); // far below the forward's own 30 s timeout, which the process waited out
});

describe("rest-webhooks listen --forward-to without a scheme", () => {
  it("is misuse: exit 2 (regression: accepted, every forward answered 502 'unknown scheme')", async () => {
    const run = await runCli([
      "listen",
      "--port",
      "0",
      "--scheme",
      "stripe",
      "--secret",
      "whsec_test_listen",
      "--forward-to",
      "localhost:3000",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--forward-to is not an http:// or https:// URL: localhost:3000");
  }, 10_000); // it used to start listening, and never end
});

describe("rest-webhooks listen, a delivery over 1 MiB", () => {
  // Regression: the adapter's default body limit (1 MiB) answered 413 before verifying, and printed no line, where
  // GitHub sends payloads up to 25 MB (a push of many commits).
  it("is verified and printed like any other", async () => {
    const secret = generateSecret();
    const listening = await startCli(["listen", "--port", "0", "--secret", secret, "--json"]);
    try {
      const url = (JSON.parse(await listening.line(/"listening"/)) as { listening: string }).listening;
      const body = JSON.stringify({ type: "push", data: { pad: "x".repeat(2 * 1024 * 1024) } });
      const headers = sign({ id: "msg_big", timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
      const response = await fetch(`${url}/webhooks`, { method: "POST", headers, body });
      expect(response.status).toBe(202);
      const line = JSON.parse(await listening.line(/"id":"msg_big"/)) as Record<string, unknown>;
      expect(line).toMatchObject({ verified: true, type: "push" });
    } finally {
      await listening.stop();
    }
  });
});

describe("rest-webhooks listen, a delivery over its 25 MiB limit", () => {
  /** Declares a body over the limit: the adapter answers 413 at once, before listen's handler runs. */
  const oversized = (url: string) =>
    new Promise<number | undefined>((resolve, reject) => {
      const sent = request(`${url}/webhooks`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(26 * 1024 * 1024) },
      });
      sent.on("response", (response) => {
        response.resume();
        resolve(response.statusCode);
        sent.destroy();
      });
      sent.on("error", reject);
      sent.flushHeaders();
    });

  // Regression: the 413 went out with no line printed, so whoever watched the terminal saw nothing of the delivery.
  it("prints a line saying the delivery was refused, and why (JSON Lines)", async () => {
    const listening = await startCli(["listen", "--port", "0", "--secret", generateSecret(), "--json"]);
    try {
      const url = (JSON.parse(await listening.line(/"listening"/)) as { listening: string }).listening;
      expect(await oversized(url)).toBe(413);
      const line = JSON.parse(await listening.line(/"refused"/)) as Record<string, unknown>;
      expect(line).toMatchObject({ method: "POST", path: "/webhooks", verified: false, refused: 413 });
      expect(line.code).toBe("body_too_large");
      expect(line.time).toMatch(/Z$/);
    } finally {
      await listening.stop();
    }
  });

  it("prints it as text too, its time marked UTC (Z)", async () => {
    const listening = await startCli(["listen", "--port", "0", "--secret", generateSecret()]);
    try {
      const url = /(http:\/\/[^ ]+)/.exec(await listening.line(/listening on/))?.[1] ?? "";
      expect(await oversized(url)).toBe(413);
      const line = await listening.line(/refused/);
      expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3}Z {2}/);
      expect(line).toContain("POST /webhooks");
      expect(line).toContain("25 MiB");
    } finally {
      await listening.stop();
    }
  });
});

describe("rest-webhooks listen | head (stdout closed by its reader)", () => {
  const secret = generateSecret();
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  delete env.WEBHOOK_SECRET;
  let child: ChildProcessWithoutNullStreams;
  let closed: Promise<number | null>;
  beforeAll(async () => {
    child = spawn(process.execPath, [...(await cliEntry()), "listen", "--port", "0", "--secret", secret, "--json"], {
      cwd: root,
      env,
    });
    closed = new Promise((resolve) => child.on("close", resolve));
  });
  afterAll(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  // Regression: the EPIPE was ignored and listen went on answering 202 to nobody, so `listen --json | head -n 1`, a
  // script waiting for an event, never ended.
  it("stops at its next line, exit 0, as on Ctrl-C", async () => {
    const first = await new Promise<string>((resolve) =>
      child.stdout.once("data", (chunk: Buffer) => resolve(`${chunk}`)),
    );
    const url = (JSON.parse(first) as { listening: string }).listening;
    // The reader is gone, as head's after its line.
    child.stdout.destroy();
    const body = '{"type":"ping","data":{}}';
    const headers = sign({ id: "msg_head", timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
    await fetch(`${url}/webhooks`, { method: "POST", headers, body }).catch(() => undefined);
    expect(await closed).toBe(0);
  }, 10_000); // it used to run until killed
});
