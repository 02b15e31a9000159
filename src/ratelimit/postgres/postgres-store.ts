import { createHash } from "node:crypto";
import { schemaName, tableIn } from "../../postgres/identifier";
import { assertSqlClient, type SqlDatabase } from "../../postgres/sql-client";
import { transaction } from "../../postgres/transaction";
import { carryState } from "../carry-state";
import { type GcraOutcome, gcraCheck } from "../gcra";
import type { PolicySet } from "../policy";
import type { RateLimitStore } from "../store";
import { assertStoreKey, assertStoreNow } from "../store-key";
import { RATE_LIMIT_TABLE, type RateLimitTableOptions } from "./rate-limit-tables";

/** Options of {@link createPostgresRateLimitStore}. */
export interface PostgresRateLimitStoreOptions extends RateLimitTableOptions {
  /** A `pg` Pool (a client is checked out per check), or PGlite: see `SqlDatabase` in `rest-webhooks/postgres`. */
  client: SqlDatabase;
}

// Every this many checks, a few rows whose state expired are deleted, so keys never seen again do not pile up.
const PURGE_EVERY = 256;
const PURGE_ROWS = 64;

// A row is keyed by its key's SHA-256 (base64url, 43 characters): any key then fits the primary key's btree, whose
// entries stop at ~2.7 KB, and a NUL, which a text column refuses, is only hashed. UTF-8 is lossless: keys are
// well-formed (assertStoreKey).
function rowKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("base64url");
}

interface StateRow {
  set_id: string;
  state: number[] | null;
}

/**
 * The PostgreSQL store for `rest-webhooks/ratelimit`: the same GCRA as the memory store (`gcraCheck`), applied under
 * a row lock in one transaction, so every process on one database shares each key's allowance — the delivery
 * worker's per-endpoint rate limit across worker processes, for example. Create its table with
 * `migrate(pool, rateLimitMigrations())`. Runs on the caller's clock (`nowMs`).
 * @example
 * await migrate(pool, rateLimitMigrations());
 * const rateLimiter = createEndpointRateLimiter({ store: createPostgresRateLimitStore({ client: pool }) });
 */
export function createPostgresRateLimitStore(options: PostgresRateLimitStoreOptions): RateLimitStore {
  const client = options?.client;
  assertSqlClient(client, "createPostgresRateLimitStore");
  const t = tableIn(schemaName(options.schema, "createPostgresRateLimitStore"), RATE_LIMIT_TABLE);
  let checks = 0;

  async function purge(nowMs: number): Promise<void> {
    await client.query(
      `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE expires_ms <= $1 LIMIT ${PURGE_ROWS} FOR UPDATE SKIP LOCKED)`,
      [nowMs],
    );
  }

  return {
    async check(key: string, set: PolicySet, nowMs: number): Promise<GcraOutcome> {
      assertStoreKey(key);
      assertStoreNow(nowMs);
      const id = rowKey(key);
      const outcome = await transaction(client, async (tx) => {
        // The row exists before it is locked, so concurrent first requests for a key queue on one lock. A purge may
        // delete an expired row between the two statements (DO NOTHING locks nothing): then insert it again, or the
        // UPDATE below would write nothing and the admission would go unrecorded.
        let row: StateRow | undefined;
        while (row === undefined) {
          await tx.query(
            `INSERT INTO ${t} (key, set_id, state, expires_ms) VALUES ($1, '', NULL, 0) ON CONFLICT (key) DO NOTHING`,
            [id],
          );
          const { rows } = await tx.query(`SELECT set_id, state FROM ${t} WHERE key = $1 FOR UPDATE`, [id]);
          row = rows[0] as StateRow | undefined;
        }
        // State written for another policy set carries over (carryState), as in the other stores.
        const state = row.state === null ? undefined : carryState(row.set_id, row.state, set.id, set.limits, nowMs);
        const step = gcraCheck(set.limits, state, nowMs);
        if (step.allowed) {
          await tx.query(`UPDATE ${t} SET set_id = $2, state = $3, expires_ms = $4 WHERE key = $1`, [
            id,
            set.id,
            step.state,
            step.expiresAtMs,
          ]);
        }
        return { allowed: step.allowed, remaining: step.remaining, resetMs: step.resetMs };
      });
      // Housekeeping after the commit: its failure (a lock or statement timeout) must not turn the decision into an
      // error; a later check purges again.
      if (++checks % PURGE_EVERY === 0) await purge(nowMs).catch(() => undefined);
      return outcome;
    },
  };
}
