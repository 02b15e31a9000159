import pg from "pg";
import { idempotencyMigrations, PostgresIdempotencyStore } from "rest-webhooks/idempotency/postgres";
import {
  epochMsOf,
  migrate,
  requestTransaction,
  type SqlClient,
  type SqlDatabase,
  timestampOf,
  transaction,
  transactionOf,
} from "rest-webhooks/postgres";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "rest-webhooks/webhooks/delivery/postgres";
import { z } from "zod";
import { ORDER_STATUSES } from "../order-status";
import { shopMigrations, shopTables } from "./postgres-schema";
import type { OrderRecord, ShopReads, ShopStorage, ShopTransaction, UserRecord } from "./types";

/** Options of {@link createPostgresStorage}. */
export interface PostgresStorageOptions {
  /** A connection string, or a pool (or PGlite) to share: it is then not closed by `close`. */
  connection: string | SqlDatabase;
  /** Run by `close` after the storage's own pool (if any) is closed: e.g. close the PGlite you passed. */
  close?: () => Promise<void>;
  /** The schema holding every table (created if missing). @default "shop" */
  schema?: string;
}

// Times are read as epoch ms (float8, a number); bigint columns (seq, total) arrive as strings: coerce them.
const epoch = z.number();
const bigint = z.coerce.number().int();

const USER_COLUMNS = `id, name, tier, version, ${epochMsOf("created_at")} AS created_at,
  ${epochMsOf("updated_at")} AS updated_at, ${epochMsOf("orders_changed_at")} AS orders_changed_at`;
const ORDER_COLUMNS = `id, seq, user_id, status, items, total, version, ${epochMsOf("created_at")} AS created_at,
  ${epochMsOf("updated_at")} AS updated_at`;

const userRow = z.object({
  id: z.string(),
  name: z.string(),
  tier: z.string(),
  version: z.number().int(),
  created_at: epoch,
  updated_at: epoch,
  orders_changed_at: epoch,
});

const orderRow = z.object({
  id: z.string(),
  seq: bigint,
  user_id: z.string(),
  status: z.enum(ORDER_STATUSES),
  items: z.array(z.object({ sku: z.string(), quantity: z.number().int(), unit_price: z.number().int() })),
  total: bigint,
  version: z.number().int(),
  created_at: epoch,
  updated_at: epoch,
});

function toUser(row: unknown): UserRecord {
  const r = userRow.parse(row);
  return {
    id: r.id,
    name: r.name,
    tier: r.tier,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ordersChangedAt: r.orders_changed_at,
  };
}

function toOrder(row: unknown): OrderRecord {
  const r = orderRow.parse(row);
  return {
    id: r.id,
    userId: r.user_id,
    status: r.status,
    items: r.items,
    total: r.total,
    version: r.version,
    seq: r.seq,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * The PostgreSQL storage: users, orders, idempotency keys, webhook endpoints and the delivery queue in one
 * schema, every store on the one client (`rest-webhooks/postgres`). A transaction holds one connection: the order
 * rows it reads are locked (`FOR UPDATE`) and the events it publishes are inserted into the delivery queue on the
 * same connection (`queue.withClient(tx)`), so an order change and its event commit together (the transactional
 * outbox).
 * @example const storage = await createPostgresStorage({ connection: process.env.DATABASE_URL!, schema: "shop" });
 */
export async function createPostgresStorage(options: PostgresStorageOptions): Promise<ShopStorage> {
  const owned =
    typeof options.connection === "string" ? new pg.Pool({ connectionString: options.connection, max: 10 }) : undefined;
  const pool: SqlDatabase = owned ?? (options.connection as SqlDatabase);
  const schema = options.schema ?? "shop";
  const tables = shopTables(schema);
  await migrate(pool, [
    ...shopMigrations(tables),
    ...idempotencyMigrations({ schema }),
    ...deliveryMigrations({ schema }),
  ]);
  const endpoints = createPostgresEndpointStore({ client: pool, schema });
  const queue = createPostgresDeliveryQueue({ client: pool, schema });
  const { users: U, orders: O } = tables;
  const idempotency = new PostgresIdempotencyStore(pool, { schema });

  function reads(client: SqlClient, lock: boolean): ShopReads {
    const forUpdate = lock ? " FOR UPDATE" : "";
    return {
      async getUser(id) {
        const { rows } = await client.query(`SELECT ${USER_COLUMNS} FROM ${U} WHERE id = $1${forUpdate}`, [id]);
        return rows[0] === undefined ? undefined : toUser(rows[0]);
      },
      async getOrder(userId, orderId) {
        const { rows } = await client.query(
          `SELECT ${ORDER_COLUMNS} FROM ${O} WHERE id = $1 AND user_id = $2${forUpdate}`,
          [orderId, userId],
        );
        return rows[0] === undefined ? undefined : toOrder(rows[0]);
      },
      async listOrders(userId, query) {
        const { rows } = await client.query(
          `SELECT ${ORDER_COLUMNS} FROM ${O} WHERE user_id = $1 AND seq > $2 AND ($3::text IS NULL OR status = $3)
           ORDER BY seq LIMIT $4`,
          [userId, query.afterSeq ?? 0, query.status ?? null, query.limit],
        );
        return rows.map(toOrder);
      },
    };
  }

  function writes(client: SqlClient): ShopTransaction {
    const outbox = queue.withClient(client);
    return {
      ...reads(client, true),
      async putUser(user) {
        await client.query(
          `INSERT INTO ${U} (id, name, tier, version, created_at, updated_at, orders_changed_at)
           VALUES ($1, $2, $3, $4, ${timestampOf("$5")}, ${timestampOf("$6")}, ${timestampOf("$7")})
           ON CONFLICT (id) DO UPDATE SET name = excluded.name, tier = excluded.tier, version = excluded.version,
             updated_at = excluded.updated_at`,
          [user.id, user.name, user.tier, user.version, user.createdAt, user.updatedAt, user.ordersChangedAt],
        );
      },
      async placeOrder(order) {
        // Marking the list changed locks the user's row, as reading it FOR UPDATE did; no user, no row, no order.
        const { rows } = await client.query(
          `WITH touched AS (
             UPDATE ${U} SET orders_changed_at = greatest(orders_changed_at, ${timestampOf("$7")}) WHERE id = $2 RETURNING id
           )
           INSERT INTO ${O} (id, user_id, status, items, total, version, created_at, updated_at)
           SELECT $1, touched.id, $3, $4::jsonb, $5, $6, ${timestampOf("$7")}, ${timestampOf("$8")} FROM touched
           RETURNING ${ORDER_COLUMNS}`,
          [
            order.id,
            order.userId,
            order.status,
            JSON.stringify(order.items),
            order.total,
            order.version,
            order.createdAt,
            order.updatedAt,
          ],
        );
        return rows[0] === undefined ? undefined : toOrder(rows[0]);
      },
      async updateOrder(order) {
        await client.query(
          `UPDATE ${O} SET status = $3, items = $4::jsonb, total = $5, version = $6, updated_at = ${timestampOf("$7")}
           WHERE id = $1 AND user_id = $2`,
          [
            order.id,
            order.userId,
            order.status,
            JSON.stringify(order.items),
            order.total,
            order.version,
            order.updatedAt,
          ],
        );
      },
      async deleteOrder(userId, orderId) {
        await client.query(`DELETE FROM ${O} WHERE id = $1 AND user_id = $2`, [orderId, userId]);
      },
      async touchOrders(userId, at) {
        await client.query(
          `UPDATE ${U} SET orders_changed_at = greatest(orders_changed_at, ${timestampOf("$2")}) WHERE id = $1`,
          [userId, at],
        );
      },
      async publish(event) {
        await outbox.publish(event);
      },
    };
  }

  return {
    kind: "postgres",
    ...reads(pool, false),
    // Served by the unique index on seq, or by orders_status_seq with a status.
    async listAllOrders(query) {
      const { rows } = await pool.query(
        `SELECT ${ORDER_COLUMNS} FROM ${O} WHERE seq > $1 AND ($2::text IS NULL OR status = $2) ORDER BY seq LIMIT $3`,
        [query.afterSeq ?? 0, query.status ?? null, query.limit],
      );
      return rows.map(toOrder);
    },
    // One probe of the users_orders_changed_at index.
    async lastOrderChange() {
      const { rows } = await pool.query(`SELECT ${epochMsOf("max(orders_changed_at)")} AS at FROM ${U}`);
      const at = (rows[0] as { at?: unknown } | undefined)?.at;
      return at == null ? undefined : epoch.parse(at);
    },
    transaction(work, request) {
      // Inside the request's transaction, `transaction` nests in a SAVEPOINT: a thrown error (a 409 or 412 problem
      // too) undoes `work`'s writes even when `idempotency()` records that problem and the request commits.
      const outer = request === undefined ? undefined : transactionOf(request);
      return transaction(outer ?? pool, (client) => work(writes(client)));
    },
    // The key's record, the order and its event in one transaction: a crash leaves all of them or none.
    requestScope: (onCommit) => requestTransaction(pool, { onCommit }),
    idempotency: (request) => idempotency.withClient(transactionOf(request) ?? pool),
    endpoints,
    queue,
    async close() {
      await owned?.end();
      await options.close?.();
    },
  };
}
