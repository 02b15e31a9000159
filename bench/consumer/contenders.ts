/** The servers under load: a bare node:http verify-only handler, and the consumer with each inbox. */
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { createServer } from "../../src/node/index";
import { migrate } from "../../src/postgres/index";
import { createWebhookConsumer } from "../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
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

/** What a hand-written endpoint does at least: read the raw body, verify it with the same `verify`, answer. */
export async function bareVerifyOnly(secret: string): Promise<Contender> {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const result = verify({
        body: Buffer.concat(chunks),
        headers: req.headers,
        secrets: secret,
        toleranceSeconds: TOLERANCE,
      });
      res.writeHead(result.ok ? 202 : 400);
      res.end();
    });
  });
  await listening(server);
  return { name: "bare verify-only node:http", server, stored: async () => false, close: () => closeServer(server) };
}

export async function consumerMemory(secret: string): Promise<Contender> {
  const inbox = createMemoryInbox();
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
