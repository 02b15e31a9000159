import { createHash, randomUUID } from "node:crypto";
import type { Pool, PoolClient, QueryConfig } from "pg";
import type { ConsumerErrorRecord } from "../../consumer/errors";
import type { InboxEvent, InboxRecord, InboxState } from "../../consumer/event";
import type {
  Inbox,
  InboxAddResult,
  InboxClaim,
  InboxClaimRequest,
  InboxCompleteResult,
  InboxFailOutcome,
} from "../../consumer/inbox";
import { GroupWriter } from "./group-writer";
import { inboxStatements } from "./inbox-sql";

/** What PostgreSQL event handlers receive besides the event: the client of the transaction that marks it done. */
export interface PostgresInboxContext {
  /** Queries on it commit together with the event's done mark, or roll back with a failure. */
  client: PoolClient;
}

/** Options of {@link createPostgresInbox}. */
export interface PostgresInboxOptions {
  /** A `pg` pool; each running handler holds one connection for its transaction. */
  pool: Pick<Pool, "query" | "connect">;
  /** The table, optionally schema-qualified. @default "webhook_inbox" */
  table?: string;
  /**
   * Concurrent insert statements; adds arriving meanwhile are written together in the next one
   * (group commit), up to 256 rows a statement. @default 4
   */
  maxConcurrentWrites?: number;
  /** Makes the random part of claim tokens; inject it for deterministic tests. @default crypto.randomUUID */
  randomId?: () => string;
}

interface Row {
  id: string;
  type: string;
  payload: unknown;
  scheme: string;
  webhook_timestamp: string | number | null;
  received_at: number;
  state: InboxState;
  attempts: number;
  available_at: number | null;
  last_error: ConsumerErrorRecord | null;
  done_at: number | null;
}

// SQLSTATE classes 22 (data exception) and 23 (integrity constraint violation): the row, not the server.
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

const optional = (value: number | null) => (value === null ? undefined : Math.round(value));

function toEvent(row: Row): InboxEvent {
  return {
    id: row.id,
    type: row.type,
    payload: row.payload,
    scheme: row.scheme,
    timestamp: row.webhook_timestamp === null ? undefined : Number(row.webhook_timestamp),
    receivedAt: Math.round(row.received_at),
  };
}

function toRecord(row: Row): InboxRecord {
  return {
    ...toEvent(row),
    state: row.state,
    attempts: row.attempts,
    availableAt: optional(row.available_at),
    lastError: row.last_error ?? undefined,
    doneAt: optional(row.done_at),
  };
}

/**
 * The PostgreSQL inbox: durable and shared by any number of processors. Claims use
 * `FOR UPDATE SKIP LOCKED` with a lease; a handler runs inside the transaction that marks its
 * event done, holding the row lock, so its database writes happen exactly once.
 */
export class PostgresInbox implements Inbox<PostgresInboxContext> {
  readonly #pool: Pick<Pool, "query" | "connect">;
  readonly #sql: ReturnType<typeof inboxStatements>;
  readonly #prefix: string;
  readonly #writer: GroupWriter<InboxEvent, InboxAddResult>;
  readonly #randomId: () => string;

  constructor(options: PostgresInboxOptions) {
    if (typeof options?.pool?.query !== "function") throw new TypeError("createPostgresInbox: pool is required.");
    const table = options.table ?? "webhook_inbox";
    this.#pool = options.pool;
    this.#randomId = options.randomId ?? randomUUID;
    this.#sql = inboxStatements(table);
    // Prepared-statement names are per connection and at most 63 bytes: derive them from the table.
    this.#prefix = `rw_inbox_${createHash("sha256").update(table).digest("hex").slice(0, 12)}`;
    this.#writer = new GroupWriter(
      (events) => this.#insert(events),
      256,
      options.maxConcurrentWrites ?? 4,
      isDataError,
    );
  }

  /** The CREATE TABLE / CREATE INDEX statements, for your own migrations. */
  get schemaSql(): readonly string[] {
    return this.#sql.schema;
  }

  /** Creates the table and its indexes if they do not exist. */
  async migrate(): Promise<void> {
    for (const statement of this.#sql.schema) await this.#pool.query(statement);
  }

  #query(name: keyof Omit<ReturnType<typeof inboxStatements>, "schema">, values: unknown[]): QueryConfig {
    return { name: `${this.#prefix}_${name}`, text: this.#sql[name], values };
  }

  add(event: InboxEvent): Promise<InboxAddResult> {
    return this.#writer.submit(event);
  }

  async #insert(events: InboxEvent[]): Promise<InboxAddResult[]> {
    const result = await this.#pool.query<{ id: string }>(
      this.#query("add", [
        events.map((event) => event.id),
        events.map((event) => event.type),
        events.map((event) => JSON.stringify(event.payload ?? null)),
        events.map((event) => event.scheme),
        events.map((event) => event.timestamp ?? null),
        events.map((event) => event.receivedAt),
      ]),
    );
    const inserted = new Set(result.rows.map((row) => row.id));
    // The first add of an id in the batch is the one that inserted it; later ones are duplicates.
    return events.map((event) => ({ duplicate: !inserted.delete(event.id) }));
  }

  async claim(request: InboxClaimRequest): Promise<InboxClaim[]> {
    const token = `${request.owner}:${this.#randomId()}`;
    const result = await this.#pool.query<Row>(
      this.#query("claim", [request.now, request.limit, request.owner, token, request.leaseMs]),
    );
    return result.rows
      .sort((a, b) => (a.available_at ?? 0) - (b.available_at ?? 0))
      .map((row) => ({ event: toEvent(row), attempts: row.attempts, token }));
  }

  async complete(
    claim: InboxClaim,
    work: (context: PostgresInboxContext) => Promise<void>,
    now: number,
  ): Promise<InboxCompleteResult> {
    const client = await this.#pool.connect();
    let broken: unknown;
    try {
      await client.query("BEGIN");
      const held = await client.query(this.#query("hold", [claim.event.id, claim.token]));
      if (held.rowCount === 0) {
        await client.query("ROLLBACK");
        return { outcome: "lost" };
      }
      try {
        await work({ client });
      } catch (error) {
        await client.query("ROLLBACK").catch((rollback: unknown) => {
          broken = rollback;
        });
        return { outcome: "failed", error };
      }
      await client.query(this.#query("done", [claim.event.id, now]));
      await client.query("COMMIT");
      return { outcome: "done" };
    } catch (error) {
      broken = error;
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      // A connection that failed mid-transaction is not returned to the pool.
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async fail(claim: InboxClaim, outcome: InboxFailOutcome, now: number): Promise<boolean> {
    const dead = "dead" in outcome;
    const result = await this.#pool.query(
      this.#query("fail", [
        claim.event.id,
        claim.token,
        dead ? "dead" : "failed",
        dead ? null : outcome.retryAt,
        JSON.stringify(outcome.error),
        now,
      ]),
    );
    return (result.rowCount ?? 0) > 0;
  }

  async get(id: string): Promise<InboxRecord | undefined> {
    const result = await this.#pool.query<Row>(this.#query("get", [id]));
    const row = result.rows[0];
    return row === undefined ? undefined : toRecord(row);
  }

  async deadLetters(options: { limit?: number } = {}): Promise<InboxRecord[]> {
    const result = await this.#pool.query<Row>(this.#query("dead", [options.limit ?? 100]));
    return result.rows.map(toRecord);
  }

  async retryDeadLetter(id: string, now: number): Promise<boolean> {
    const result = await this.#pool.query(this.#query("retryDead", [id, now]));
    return (result.rowCount ?? 0) > 0;
  }

  async purgeDone(before: number): Promise<number> {
    const result = await this.#pool.query(this.#query("purgeDone", [before]));
    return result.rowCount ?? 0;
  }
}

/**
 * Creates a PostgreSQL {@link Inbox}; call `migrate()` once (or run `schemaSql` in your migrations).
 * @param options the `pg` pool, the table name, the group-commit width and the id generator.
 * @see docs/webhooks-consumers.md, "The PostgreSQL inbox"
 * @example
 * const inbox = createPostgresInbox({ pool: new pg.Pool({ connectionString }) });
 * await inbox.migrate();
 */
export function createPostgresInbox(options: PostgresInboxOptions): PostgresInbox {
  return new PostgresInbox(options);
}
