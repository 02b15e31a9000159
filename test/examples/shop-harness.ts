/**
 * Helpers of the shop's end-to-end tests: a shop on node:http (127.0.0.1, ephemeral port), a small HTTP
 * client, and a webhook receiver that verifies with the `standardwebhooks` package.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { createShop, type Shop } from "../../examples/shop/app";
import type { ShopConfig } from "../../examples/shop/config";
import { type Listening, listen } from "../../examples/shop/server";
import type { ShopStorage } from "../../examples/shop/storage/types";
import { issueToken } from "../../examples/shop/tokens";
import type { Handler } from "../../src/http/index";
import { routeOf } from "../../src/routing/index";

/** A shop configuration for tests: fresh secrets, memory storage, no delivery worker unless asked. */
export function testConfig(overrides: Partial<ShopConfig> = {}): ShopConfig {
  return {
    jwtSecret: randomBytes(32).toString("base64url"),
    apiKey: `sk_test_${randomBytes(16).toString("base64url")}`,
    storage: { kind: "memory" },
    allowInsecureWebhookUrls: true,
    bodyLimit: 16_384,
    deliver: false,
    ...overrides,
  };
}

/** A response, read whole. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON (throws when it is not). */
  json<T = Record<string, unknown>>(): T;
}

/** Options of one request of {@link Client}. */
export interface Send {
  token?: string | undefined;
  /** A value is sent as JSON; a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** An HTTP client bound to a base URL. */
export type Client = (method: string, path: string, options?: Send) => Promise<Reply>;

/** A client for `baseUrl` that sends JSON and the bearer token it is given. */
export function client(baseUrl: string, defaultToken?: string): Client {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = {};
    const token = "token" in options ? options.token : defaultToken;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    Object.assign(headers, options.headers);
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: <T>() => JSON.parse(text) as T,
    };
  };
}

/** A shop served on node:http for one test file. */
export interface RunningShop {
  shop: Shop;
  server: Listening;
  config: ShopConfig;
  adminToken: string;
  /** A client sending the admin token unless told otherwise. */
  api: Client;
  tokenFor(userId: string): Promise<string>;
  /**
   * Moves the shop's clock forward: unless the config names its own, the shop runs on real time plus every
   * advance, so a test can cross an HTTP-date second (Last-Modified) without waiting.
   */
  advanceClock(ms: number): void;
  /**
   * Every status the shop answered, by operation (`operationId`, i.e. the route's name) and method: for the contract
   * test that the OpenAPI document declares each of them.
   */
  readonly statuses: ReadonlyMap<string, ReadonlySet<number>>;
  /**
   * The header fields the shop sent, by operation and status (`"users.orders.create 201"`): for the contract test
   * that the OpenAPI document declares them.
   */
  readonly headersSent: ReadonlyMap<string, ReadonlySet<string>>;
  close(): Promise<void>;
}

/** Starts a shop on the given storage, listening on 127.0.0.1 with an ephemeral port. */
export async function startShop(storage: ShopStorage, overrides: Partial<ShopConfig> = {}): Promise<RunningShop> {
  let skew = 0;
  const config = testConfig({ now: () => Date.now() + skew, ...overrides });
  const shop = await createShop(config, { storage });
  const statuses = new Map<string, Set<number>>();
  const headersSent = new Map<string, Set<string>>();
  // Records the route each answer came from (the router attaches the match to the request).
  const recording: Handler = async (request) => {
    const response = await shop.handler(request);
    const name = routeOf(request)?.route.name;
    if (name !== undefined) {
      (statuses.get(name) ?? statuses.set(name, new Set()).get(name))?.add(response.status);
      const key = `${name} ${response.status}`;
      const sent = headersSent.get(key) ?? headersSent.set(key, new Set()).get(key);
      for (const field of Object.keys(response.headers)) sent?.add(field.toLowerCase());
    }
    return response;
  };
  const server = await listen(recording, { port: 0, host: "127.0.0.1", bodyLimit: config.bodyLimit });
  const adminToken = await issueToken(config.jwtSecret, { sub: "admin", admin: true });
  return {
    shop,
    server,
    config,
    adminToken,
    api: client(server.url, adminToken),
    tokenFor: (userId) => issueToken(config.jwtSecret, { sub: userId }),
    advanceClock(ms) {
      skew += ms;
    },
    statuses,
    headersSent,
    async close() {
      await server.close();
      await shop.close();
    },
  };
}

/** One webhook the receiver got, verified by the `standardwebhooks` package. */
export interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
  /** Which attempt this was for its event id (1 for the first). */
  attempt: number;
}

/** A webhook consumer on node:http that verifies every delivery with `standardwebhooks`. */
export interface Receiver {
  readonly url: string;
  /** Deliveries that verified and were acknowledged. */
  readonly received: Received[];
  /** Deliveries whose signature `standardwebhooks` refused. */
  readonly refused: number;
  /** The secret to verify with (set once the endpoint is registered). */
  secret: string | undefined;
  /** Answer this status (instead of 204) to deliveries of this event type. */
  failing: Map<string, number>;
  close(): Promise<void>;
}

function plainHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === "string") out[name] = value;
  return out;
}

/** Starts a {@link Receiver} on 127.0.0.1. */
export async function startReceiver(): Promise<Receiver> {
  const attempts = new Map<string, number>();
  const receiver = {
    url: "",
    received: [] as Received[],
    refused: 0,
    secret: undefined as string | undefined,
    failing: new Map<string, number>(),
    close: (): Promise<void> => Promise.resolve(),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let event: { id: string; type: string; data: Record<string, unknown> };
      try {
        event = new Webhook(receiver.secret ?? "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").verify(
          body,
          plainHeaders(req.headers),
        ) as typeof event;
      } catch {
        receiver.refused++;
        res.writeHead(400).end();
        return;
      }
      const attempt = (attempts.get(event.id) ?? 0) + 1;
      attempts.set(event.id, attempt);
      const failWith = receiver.failing.get(event.type);
      if (failWith !== undefined) {
        res.writeHead(failWith).end("not now");
        return;
      }
      receiver.received.push({ id: event.id, type: event.type, data: event.data, attempt });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}

/** Polls `check` every 10 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
