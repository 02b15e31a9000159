/**
 * The servers under load: a bare node:http verify-only handler (alone, and keeping each body it verified), the consumer
 * with each inbox, and the durable consumer written by hand (verify with node:crypto, INSERT with pg).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { createServer } from "../../src/node/index";
import { migrate } from "../../src/postgres/index";
import { createWebhookConsumer, createWebhookProcessor } from "../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
import { startWebhookProcessor } from "../../src/webhooks/consumer/node/index";
import { createPostgresInbox, inboxMigrations } from "../../src/webhooks/consumer/postgres/index";
import { verify } from "../../src/webhooks/signing/index";

export const TOLERANCE = 3_600;

export interface Contender {
  name: string;
  server: Server;
  /** Events stored so far (for the correctness check), or undefined for the bare handler. */
  stored: (id: string) => Promise<boolean>;
  close: () => Promise<void>;
}

async function listening(server: Server): Promise<Server> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

export function urlOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/**
 * A node:http server that reads the raw body, verifies it with the same `verify`, and answers; with `kept`, it also
 * keeps each verified body there by its `webhook-id` (a duplicate keeps the first).
 */
function verifyingServer(secret: string, kept: Map<string, Buffer> | undefined): Server {
  return createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const result = verify({ body, headers: req.headers, secrets: secret, toleranceSeconds: TOLERANCE });
      // Nothing more for the verify-only server (no `kept`): its path stays what it was.
      if (kept !== undefined && result.ok && result.id !== undefined && !kept.has(result.id)) kept.set(result.id, body);
      res.writeHead(result.ok ? 202 : 400);
      res.end();
    });
  });
}

/** What a hand-written endpoint does at least: read the raw body, verify it with the same `verify`, answer. */
export async function bareVerifyOnly(secret: string): Promise<Contender> {
  const server = await listening(verifyingServer(secret, undefined));
  return { name: "bare verify-only node:http", server, stored: async () => false, close: () => closeServer(server) };
}

/**
 * The least an inbox that holds its events in memory must do beyond verifying: keep each verified body, found by its
 * `webhook-id`, for as long as the process lives. The floor of the memory inbox without a processor, which keeps every
 * event it acknowledged: what keeping costs the process (its heap growing for the whole run, fresh pages from the
 * system), the inbox pays too, and this server pays nothing else. The body is kept as received, not copied, so this
 * floor is lower than any copy's.
 */
export async function bareVerifyKeeping(secret: string): Promise<Contender> {
  const kept = new Map<string, Buffer>();
  const server = await listening(verifyingServer(secret, kept));
  return {
    name: "bare verify-only keeping each body",
    server,
    stored: async (id) => kept.has(id),
    close: () => closeServer(server),
  };
}

export async function consumerMemory(secret: string): Promise<Contender> {
  // No processor runs here, so every event acknowledged stays held: no bound, or the default 64 MiB would answer
  // 503 inbox_full within a round (the 16 KiB case holds ~650 MB by a run's end).
  const inbox = createMemoryInbox({ maxBytes: Number.POSITIVE_INFINITY });
  const server = await listening(
    createServer(createWebhookConsumer({ inbox, secrets: secret, toleranceSeconds: TOLERANCE })),
  );
  return {
    name: "consumer memory inbox",
    server,
    stored: async (id) => (await inbox.get(id)) !== undefined,
    close: () => closeServer(server),
  };
}

/**
 * The memory inbox as a consumer runs it (docs/webhooks-consumers.md): its default bounds (the last 10,000 done events,
 * 64 MiB), and a processor in the same process marking each event done with a handler that does nothing, woken by
 * each 202. What it keeps is then what a consumer in production keeps, where the case above keeps every event.
 */
export async function consumerMemoryProcessed(secret: string): Promise<Contender> {
  const inbox = createMemoryInbox();
  const runner = startWebhookProcessor(createWebhookProcessor({ inbox }).on("*", () => {}));
  const server = await listening(
    createServer(
      createWebhookConsumer({ inbox, secrets: secret, toleranceSeconds: TOLERANCE, onStored: () => runner.wake() }),
    ),
  );
  return {
    name: "consumer memory inbox + processor",
    server,
    stored: async (id) => (await inbox.get(id)) !== undefined,
    close: async () => {
      await closeServer(server);
      await runner.stop();
    },
  };
}

export async function consumerPostgres(secret: string, databaseUrl: string): Promise<Contender> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 16 });
  const schema = `bench_consumer_${process.pid}_${Date.now().toString(36)}`;
  await migrate(pool, inboxMigrations({ schema }));
  const inbox = createPostgresInbox({ client: pool, schema });
  const server = await listening(
    createServer(createWebhookConsumer({ inbox, secrets: secret, toleranceSeconds: TOLERANCE })),
  );
  return {
    name: "consumer postgres inbox",
    server,
    stored: async (id) => (await inbox.get(id)) !== undefined,
    close: async () => {
      await closeServer(server);
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/**
 * The durable consumer people write by hand, the fair peer of the PostgreSQL inbox: read the raw body, verify the
 * Standard Webhooks signature with node:crypto (HMAC-SHA256 over `id.timestamp.body`, a timestamp within the
 * tolerance, a constant-time compare), `INSERT` the event with `pg` (one pooled query per request, a duplicate id
 * ignored), then answer 202. Its table keeps what the inbox keeps for a new event: id, type, the body as `json`,
 * when it arrived.
 */
export async function handWrittenDurable(secret: string, databaseUrl: string): Promise<Contender> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 16 });
  const schema = `bench_handwritten_${process.pid}_${Date.now().toString(36)}`;
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await pool.query(
    `CREATE TABLE "${schema}".events (id text PRIMARY KEY, type text NOT NULL, payload json NOT NULL, received_at timestamptz NOT NULL)`,
  );
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const insert = `INSERT INTO "${schema}".events (id, type, payload, received_at) VALUES ($1, $2, $3, now()) ON CONFLICT (id) DO NOTHING`;
  const valid = (id: string, timestamp: string, signatures: string, body: Buffer): boolean => {
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE) return false;
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
    return signatures.split(" ").some((entry) => {
      const [version, signature] = entry.split(",");
      const given = Buffer.from(signature ?? "", "base64");
      return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
  };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const id = req.headers["webhook-id"];
      const timestamp = req.headers["webhook-timestamp"];
      const signatures = req.headers["webhook-signature"];
      if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") {
        return res.writeHead(400).end();
      }
      if (!valid(id, timestamp, signatures, body)) return res.writeHead(400).end();
      let type: unknown;
      try {
        type = (JSON.parse(body.toString("utf8")) as { type?: unknown }).type;
      } catch {
        return res.writeHead(400).end();
      }
      if (typeof type !== "string") return res.writeHead(400).end();
      pool.query(insert, [id, type, body.toString("utf8")]).then(
        () => res.writeHead(202).end(),
        () => res.writeHead(500).end(),
      );
    });
  });
  await listening(server);
  return {
    name: "hand-written verify + INSERT",
    server,
    stored: async (id) => (await pool.query(`SELECT 1 FROM "${schema}".events WHERE id = $1`, [id])).rowCount === 1,
    close: async () => {
      await closeServer(server);
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
