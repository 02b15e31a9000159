import { migrate, type SqlDatabase } from "../../../../src/postgres/index";
import { deliveryMigrations, type ListenOptions } from "../../../../src/webhooks/delivery/postgres/index";
import type { Backend } from "../../../support/databases";
import { uniqueName } from "../../../support/services";

/**
 * Two handles on one migrated schema of its own, as two processes have: a server's are two pools (two sets of
 * connections); PGlite, one connection in one process, gives the same database twice. `cleanups` gets what drops the
 * schema and closes both.
 */
export async function twoProcesses(backend: Backend, cleanups: (() => Promise<void> | void)[], prefix: string) {
  const first = await backend.open({ max: 3 });
  const second = backend.name === "postgres" ? await backend.open({ max: 3 }) : first;
  const schema = uniqueName(prefix).toLowerCase();
  cleanups.push(async () => {
    await first.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    if (second !== first) await second.close();
    await first.close();
  });
  await migrate(first.db, deliveryMigrations({ schema }));
  return { schema, writerDb: first.db, watcherDb: second.db };
}

/**
 * The server's connections listening on `schema`'s channels: those whose last statement LISTENs (or UNLISTENs) on
 * one. A pool's one listening connection LISTENs on the endpoint store's channel and the delivery queue's, each in a
 * statement of its own or together in its first (an UNLISTEN when one of them is left).
 */
export async function channelListeners(db: SqlDatabase, schema: string): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT pid FROM pg_stat_activity
     WHERE query ~ '^(UN)?LISTEN ' AND strpos(query, $1) > 0 AND pid <> pg_backend_pid() AND state = 'idle'`,
    [`.${schema}"`],
  );
  return rows.map((row) => (row as { pid: number }).pid);
}

/**
 * Listen options that retry after 5 ms and whose `onError` records each error in `errors`, then throws: an operator's
 * failing callback, which must end nothing (the store or queue listens again all the same).
 */
export function throwingListen(errors: Error[]): ListenOptions {
  return {
    retryMs: 5,
    onError: (error) => {
      errors.push(error);
      throw new Error("the operator's onError failed");
    },
  };
}
