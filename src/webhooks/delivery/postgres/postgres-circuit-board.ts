import { assertSqlClient, type SqlClient } from "../../../postgres/sql-client";
import type { CircuitBoard } from "../circuit-board";
import { type DeliveryTablesOptions, deliveryTables } from "./delivery-tables";

/** Options of {@link createPostgresCircuitBoard}. */
export interface PostgresCircuitBoardOptions extends DeliveryTablesOptions {
  client: SqlClient;
}

/**
 * The PostgreSQL {@link CircuitBoard}: one row per endpoint whose circuit is open (`webhook_circuits`, migration
 * `delivery@5`), shared by every worker process on the database. The probe is a conditional UPDATE, so exactly one
 * caller wins it, and only its holder gives it back. The PostgreSQL queue's `sharedCircuits()` returns one.
 */
export function createPostgresCircuitBoard(options: PostgresCircuitBoardOptions): CircuitBoard {
  const { client } = options;
  assertSqlClient(client, "createPostgresCircuitBoard");
  const { circuits: C } = deliveryTables(options, "createPostgresCircuitBoard");
  return {
    async openUntil(endpointId) {
      const { rows } = await client.query(`SELECT open_until FROM ${C} WHERE endpoint_id = $1`, [endpointId]);
      const until = (rows[0] as { open_until?: unknown } | undefined)?.open_until;
      return typeof until === "number" ? until : undefined;
    },
    async open(endpointId, until) {
      await client.query(
        `INSERT INTO ${C} (endpoint_id, open_until, probe_until) VALUES ($1, $2, NULL)
         ON CONFLICT (endpoint_id) DO UPDATE SET open_until = EXCLUDED.open_until, probe_until = NULL`,
        [endpointId, until],
      );
    },
    async close(endpointId) {
      await client.query(`DELETE FROM ${C} WHERE endpoint_id = $1`, [endpointId]);
    },
    async takeProbe(endpointId, now, probeUntil) {
      const { rows } = await client.query(
        `UPDATE ${C} SET probe_until = $3
         WHERE endpoint_id = $1 AND open_until <= $2 AND (probe_until IS NULL OR probe_until <= $2)
         RETURNING 1 AS won`,
        [endpointId, now, probeUntil],
      );
      return rows.length > 0;
    },
    async releaseProbe(endpointId, probeUntil, until) {
      // The probe is known by its hold's end: a later probe's is later (it was taken once this one's had passed), and
      // open() and close() clear it.
      const { rows } = await client.query(
        `UPDATE ${C} SET open_until = $3, probe_until = NULL
         WHERE endpoint_id = $1 AND probe_until = $2
         RETURNING 1 AS released`,
        [endpointId, probeUntil, until],
      );
      return rows.length > 0;
    },
  };
}
