import type { Migration } from "rest-webhooks/postgres";

/** Quoted names of the shop's tables inside one PostgreSQL schema. */
export interface ShopTables {
  schema: string;
  users: string;
  orders: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** The table names in `schema`; throws TypeError on an unsafe identifier (it is interpolated into SQL). */
export function shopTables(schema: string): ShopTables {
  if (!IDENTIFIER.test(schema)) throw new TypeError(`Schema "${schema}" is not a lower-case SQL identifier.`);
  return {
    schema,
    users: `"${schema}"."users"`,
    orders: `"${schema}"."orders"`,
  };
}

/**
 * The migrations of the users and orders tables, applied with the library's `migrate`; times are `timestamptz`, as
 * in every table of the library (written and read as epoch ms with `timestampOf` / `epochMsOf`).
 */
export function shopMigrations(tables: ShopTables): Migration[] {
  return [
    {
      id: "shop@1",
      schema: tables.schema,
      statements: [
        `CREATE TABLE IF NOT EXISTS ${tables.users} (
  id text PRIMARY KEY,
  name text NOT NULL,
  tier text NOT NULL,
  version integer NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  orders_changed_at timestamptz NOT NULL
)`,
        `CREATE TABLE IF NOT EXISTS ${tables.orders} (
  id text PRIMARY KEY,
  seq bigserial NOT NULL UNIQUE,
  user_id text NOT NULL REFERENCES ${tables.users} (id),
  status text NOT NULL CHECK (status IN ('pending', 'paid', 'shipped', 'delivered', 'cancelled')),
  items jsonb NOT NULL,
  total bigint NOT NULL,
  version integer NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
)`,
        `CREATE INDEX IF NOT EXISTS orders_user_seq ON ${tables.orders} (user_id, seq)`,
      ],
    },
    {
      id: "shop@2",
      schema: tables.schema,
      statements: [
        // Every user's orders with one status, by seq: an admin's GET /orders?status=.
        `CREATE INDEX IF NOT EXISTS orders_status_seq ON ${tables.orders} (status, seq)`,
        // The latest change to any user's orders: the Last-Modified of an admin's GET /orders.
        `CREATE INDEX IF NOT EXISTS users_orders_changed_at ON ${tables.users} (orders_changed_at)`,
      ],
    },
  ];
}
