import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { DEFAULT_JSON_MAX_DEPTH, scanJsonText } from "../../../http/json-limits";
import { nonNegativeInteger, positiveInteger } from "../../../options/number-option";
import { GroupWriter } from "../../../postgres/group-writer";
import { schemaName } from "../../../postgres/identifier";
import {
  assertSqlClient,
  isPglite,
  isPool,
  type SqlClient,
  type SqlDatabase,
  takesQueryConfig,
} from "../../../postgres/sql-client";
import {
  affected,
  isDataError,
  run,
  type Statement,
  statementNames,
  statementVariants,
} from "../../../postgres/statement";
import { StoreClosedError } from "../../../postgres/store-closed-error";
import { transaction } from "../../../postgres/transaction";
import { type ConsumerErrorRecord, STORED_ERROR_CODES, WebhookConsumerError } from "../errors";
import type { InboxEvent, InboxRecord } from "../event";
import type {
  Inbox,
  InboxAddResult,
  InboxAddSource,
  InboxClaim,
  InboxClaimRequest,
  InboxCompleteOptions,
  InboxCompleteResult,
  InboxFailOutcome,
} from "../inbox";
import { checkInboxAdd, checkInboxClaim, checkInboxFail, checkInboxNow, checkInboxPurge } from "../inbox-arguments";
import { ADD_PARAMS, addStatement, type InboxTableOptions, inboxStatements, PURGE_BATCH } from "./inbox-sql";

/** What PostgreSQL event handlers receive besides the event: the client of the transaction that marks it done. */
export interface PostgresInboxContext {
  /** Queries on it commit together with the event's done mark, or roll back with a failure. */
  client: SqlClient;
}

/** Options of {@link createPostgresInbox}. */
export interface PostgresInboxOptions extends InboxTableOptions {
  /**
   * A `pg` Pool, or PGlite (see `SqlDatabase` in `rest-webhooks/postgres`): each running handler holds one
   * connection for its transaction. A single `pg` Client or PoolClient is a TypeError: the consumer's inserts would
   * run inside a handler's transaction there, and roll back with its failure after they were acknowledged.
   */
  client: SqlDatabase;
  /**
   * Concurrent insert statements; adds arriving meanwhile are written together in the next one (group commit), up
   * to 256 rows a statement. One statement in flight makes the batches largest: the most acknowledgements per second
   * for the database's work, and under load the shortest waits too (bench/consumer). Raise it for a database far
   * away, where overlapping round trips may matter more than the size of each batch. @default 1
   */
  maxConcurrentWrites?: number;
  /** Makes the random part of claim tokens; inject it for deterministic tests. @default crypto.randomUUID */
  randomId?: () => string;
  /** Use named prepared statements on `pg` connections (turn off behind a transaction-pooling proxy). @default true */
  prepare?: boolean;
}

const errorRecord = z.object({
  code: z.enum(STORED_ERROR_CODES),
  message: z.string(),
  errors: z
    .array(
      z.object({
        pointer: z.string(),
        in: z.enum(["body", "query", "params", "headers"]),
        code: z.string(),
        message: z.string(),
      }),
    )
    .optional(),
});

const rowSchema = z.object({
  id: z.string(),
  type: z.string(),
  payload: z.unknown(),
  // pg reads bytea as a Buffer, PGlite as a Uint8Array.
  payload_bytes: z.instanceof(Uint8Array).nullable(),
  scheme: z.string(),
  webhook_timestamp: z.number().nullable(),
  received_at: z.number(),
  state: z.enum(["pending", "processing", "done", "failed", "dead"]),
  attempts: z.number().int(),
  available_at: z.number().nullable(),
  last_error: errorRecord.nullable(),
  done_at: z.number().nullable(),
});

type Row = z.output<typeof rowSchema>;

/**
 * What a claim reads of a row: the event, its attempts and due time. Not `last_error`, which a claim does not need
 * and a later version may write with a code this one does not know: decoded, it made the claim throw after its UPDATE
 * had taken the leases, so no event of the batch ran, and the same batch was taken and dropped again at each lease's
 * end.
 */
const claimSchema = rowSchema.pick({
  id: true,
  type: true,
  payload: true,
  payload_bytes: true,
  scheme: true,
  webhook_timestamp: true,
  received_at: true,
  attempts: true,
  available_at: true,
});

type EventRow = z.output<typeof claimSchema>;

function toEvent(row: EventRow): InboxEvent {
  return {
    id: row.id,
    type: row.type,
    // A copy: a Buffer pg parsed may be a view of a pool shared with other buffers.
    payload: row.payload_bytes === null ? (row.payload ?? null) : new Uint8Array(row.payload_bytes),
    scheme: row.scheme,
    timestamp: row.webhook_timestamp ?? undefined,
    receivedAt: row.received_at,
  };
}

function toRecord(row: Row): InboxRecord {
  return {
    ...toEvent(row),
    state: row.state,
    attempts: row.attempts,
    availableAt: row.available_at ?? undefined,
    lastError: (row.last_error as ConsumerErrorRecord | null) ?? undefined,
    doneAt: row.done_at ?? undefined,
  };
}

/**
 * The record of a row as `get` and `deadLetters` give it. A row that does not decode (a column written by hand or by
 * another version) is still given, so that one such row does not make the whole dead-letter listing throw: each column
 * that reads is given as read, one that does not is left out (`undefined`; `NaN` for a number, `""` for a text, as
 * the types require), and `lastError` is a `row_invalid` record naming the row, the columns and the stored
 * `last_error`.
 */
function readRecord(row: unknown): InboxRecord {
  const parsed = rowSchema.safeParse(row);
  if (parsed.success) return toRecord(parsed.data);
  const columns = (typeof row === "object" && row !== null ? row : {}) as Record<string, unknown>;
  const unread: string[] = [];
  const read = <K extends keyof Row>(column: K, otherwise: Row[K]): Row[K] => {
    const value = rowSchema.shape[column].safeParse(columns[column]);
    if (value.success) return value.data as Row[K];
    unread.push(column);
    return otherwise;
  };
  const id = read("id", String(columns.id));
  const event = toEvent({
    id,
    type: read("type", ""),
    payload: read("payload", undefined),
    payload_bytes: read("payload_bytes", null),
    scheme: read("scheme", ""),
    webhook_timestamp: read("webhook_timestamp", null),
    received_at: read("received_at", Number.NaN),
    attempts: 0,
    available_at: null,
  });
  const record = {
    ...event,
    // A payload column unread leaves the payload unknown, not null.
    payload: unread.includes("payload") || unread.includes("payload_bytes") ? undefined : event.payload,
    // Unreachable through the table's CHECK; the column's own value otherwise.
    state: read("state", "dead"),
    attempts: read("attempts", Number.NaN),
    availableAt: read("available_at", null) ?? undefined,
    doneAt: read("done_at", null) ?? undefined,
  };
  read("last_error", null);
  const stored = columns.last_error;
  const error = new WebhookConsumerError(
    "row_invalid",
    `The webhook_inbox row ${JSON.stringify(id)} cannot be decoded (written by another version, or by hand); unreadable: ${unread.join(", ")}.` +
      (stored === null || stored === undefined ? "" : ` Its last_error as stored: ${JSON.stringify(stored)}`),
    { cause: parsed.error },
  );
  return { ...record, lastError: error.toRecord() };
}

/**
 * An event on its way into the table, with the JSON text its payload column gets (as a string, or as its bytes), or
 * the raw body its payload_bytes column gets when the payload is that body (the consumer's parse: "none").
 */
interface Addition {
  event: InboxEvent;
  payload: string | Buffer | null;
  bytes: Uint8Array | null;
  /** Whether `payload` is the body's own JSON text, which may nest deeper than the payload (see `asSerialised`). */
  fromBody: boolean;
}

/**
 * An add's second form when PostgreSQL refused its payload text (54001, stack depth limit exceeded): the payload
 * serialised, which is the value a handler reads either way. The body's text can nest deeper than its payload: of two
 * members with one name JSON.parse keeps the last (RFC 8259 §4 leaves it open), so a deep first one passes the
 * consumer's depth check, made on the payload, and would overflow PostgreSQL's json parser on every redelivery.
 */
function asSerialised(addition: Addition, error: unknown): Addition | undefined {
  if (!addition.fromBody || (error as { code?: unknown } | null)?.code !== STACK_DEPTH_EXCEEDED) return undefined;
  return {
    event: addition.event,
    payload: JSON.stringify(addition.event.payload ?? null),
    bytes: null,
    fromBody: false,
  };
}

const decoder = new TextDecoder();

// What TextDecoder drops from the start of a body, as verify's reading of it did.
const hasBom = (bytes: Uint8Array) => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;

/**
 * The payload column's text: the verified body when the consumer says the payload is its JSON parse (the same
 * decoding `verify` parsed, so the same value), else the payload serialised. With `asBytes` (a `pg` client) a body
 * PostgreSQL reads exactly as `verify` read it (UTF-8, no byte order mark) goes as its bytes: `pg` sends a `Buffer`
 * in binary format, which the `json` type receives as the same text, sparing a decode here and an encode in the
 * driver (bench/consumer, "consumer postgres inbox (16 KiB)"). Other bytes go as the text `verify` read (invalid
 * sequences replaced), which PostgreSQL accepts. PGlite would store a `Buffer` as `{"type":"Buffer",…}`: text there.
 */
function payloadValue(event: InboxEvent, source: InboxAddSource | undefined, asBytes: boolean): string | Buffer {
  const json = source?.json;
  if (json !== undefined && json.byteLength > 0) {
    if (asBytes && !hasBom(json) && isUtf8(json)) return Buffer.from(json.buffer, json.byteOffset, json.byteLength);
    const text = decoder.decode(json);
    // PGlite's json input runs out of its WASM stack on deep text without an error, inserting nothing and returning no
    // row (a duplicate, acknowledged and lost). The consumer refused a payload deeper than this: a deeper text hides a
    // subtree behind a repeated member name, and its payload serialised is the value a handler reads either way.
    if (!asBytes && scanJsonText(text, DEFAULT_JSON_MAX_DEPTH).tooDeep) return JSON.stringify(event.payload ?? null);
    return text;
  }
  return JSON.stringify(event.payload ?? null);
}

const byId = (a: Addition, b: Addition) => (a.event.id < b.event.id ? -1 : a.event.id > b.event.id ? 1 : 0);

/**
 * A connection that runs every statement it is given in whatever transaction it has open: a `pg` Client or PoolClient
 * (not a Pool, PGlite, whose statements wait for its transaction to end, or a client with a `transaction` of its own).
 */
function isSingleConnection(client: SqlDatabase): boolean {
  return (
    !isPool(client) && !isPglite(client) && typeof (client as { transaction?: unknown }).transaction !== "function"
  );
}

/** SQLSTATE 54001 (statement_too_complex): what PostgreSQL's json input answers for text nested past its stack. */
const STACK_DEPTH_EXCEEDED = "54001";

/** Events a single INSERT writes at most (7 parameters each, far below PostgreSQL's 65,535). */
const MAX_BATCH = 256;

type Statements = Record<keyof ReturnType<typeof inboxStatements>, Statement>;

/**
 * The PostgreSQL inbox: durable and shared by any number of processors. Claims use `FOR UPDATE SKIP LOCKED` with a
 * lease; a handler runs inside the transaction that marks its event done, holding the row lock, so its database
 * writes happen exactly once. Create its table with `migrate(pool, inboxMigrations())`.
 */
export class PostgresInbox implements Inbox<PostgresInboxContext> {
  readonly #client: SqlDatabase;
  readonly #sql: Statements;
  /** The INSERT of n events: one prepared statement per batch size, rw_inbox<rows>_add_<schema tag>. */
  readonly #addOf: (rows: number) => Statement;
  readonly #prepare: boolean;
  readonly #writer: GroupWriter<Addition, InboxAddResult>;
  readonly #randomId: () => string;
  /** Whether the client is `pg`, which sends a `Buffer` parameter as its bytes. */
  readonly #payloadAsBytes: boolean;
  /** Set by `close()`. */
  #closing: Promise<void> | undefined;

  constructor(options: PostgresInboxOptions) {
    assertSqlClient(options?.client, "createPostgresInbox");
    if (isSingleConnection(options.client)) {
      throw new TypeError(
        "createPostgresInbox: client must be a pg Pool or PGlite, not a single connection (a pg Client or PoolClient): " +
          "a handler's transaction on it would take in the consumer's inserts, and roll back events already acknowledged.",
      );
    }
    const schema = schemaName(options.schema, "createPostgresInbox");
    this.#client = options.client;
    this.#randomId = options.randomId ?? randomUUID;
    this.#prepare = options.prepare ?? true;
    this.#payloadAsBytes = takesQueryConfig(options.client);
    this.#sql = statementNames("rw_inbox", schema, inboxStatements(schema));
    this.#addOf = statementVariants("rw_inbox", "add", schema, (rows: number) => addStatement(schema, rows));
    // Zero statements in flight would never write: every add would wait forever.
    const writes = positiveInteger("createPostgresInbox", "maxConcurrentWrites", options.maxConcurrentWrites ?? 1);
    this.#writer = new GroupWriter((events) => this.#insert(events), MAX_BATCH, writes, isDataError, asSerialised);
  }

  #run(client: SqlClient, name: keyof Statements, values: unknown[]) {
    return run(client, this.#sql[name], values, this.#prepare);
  }

  add(event: InboxEvent, source?: InboxAddSource): Promise<InboxAddResult> {
    if (this.#closing !== undefined) return Promise.reject(new StoreClosedError());
    try {
      checkInboxAdd(event);
    } catch (error) {
      // A rejection, like every other method's refusal: add answers with a promise.
      return Promise.reject(error);
    }
    return this.#add(event, source);
  }

  /**
   * Stops taking events and resolves once every add taken before has settled: those are still written (in batches,
   * as before) and each caller learns its own outcome, so no add is dropped after it was taken, and none acknowledged
   * is lost. Later `add` calls reject with a `StoreClosedError` (`code` `store_closed`) and write nothing. Claims,
   * completions and the other methods are single statements on the pool, which `pool.end()` lets finish; stop the
   * processor first, then close the inbox, then end the pool. Every call returns the same promise.
   * @example
   * // SIGTERM, once the HTTP server stopped taking requests (no more adds):
   * await runner.stop(); // no more claims
   * await inbox.close(); // the adds taken are written
   * await pool.end();
   */
  close(): Promise<void> {
    this.#closing ??= this.#writer.close();
    return this.#closing;
  }

  #add(event: InboxEvent, source: InboxAddSource | undefined): Promise<InboxAddResult> {
    const { payload } = event;
    if (payload instanceof Uint8Array) {
      // As a Buffer, which pg sends as the bytes (PGlite takes either); a view, not a copy.
      const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
      return this.#writer.submit({ event, payload: null, bytes, fromBody: false });
    }
    return this.#writer.submit({
      event,
      payload: payloadValue(event, source, this.#payloadAsBytes),
      bytes: null,
      fromBody: source?.json !== undefined && source.json.byteLength > 0,
    });
  }

  async #insert(additions: Addition[]): Promise<InboxAddResult[]> {
    const values: unknown[] = new Array(additions.length * ADD_PARAMS);
    let i = 0;
    // Rows go in id order, as every instance writes them: each row waits on the unique index for a concurrent
    // insert of its id, and two batches taking two ids in opposite orders would each wait for the other (a deadlock,
    // 40P01, failing a whole batch). The sort is stable, so of two adds of one id the first is still written first.
    for (const { event, payload, bytes } of [...additions].sort(byId)) {
      values[i++] = event.id;
      values[i++] = event.type;
      values[i++] = payload;
      values[i++] = event.scheme;
      values[i++] = event.timestamp ?? null;
      values[i++] = event.receivedAt;
      values[i++] = bytes;
    }
    const result = await run(this.#client, this.#addOf(additions.length), values, this.#prepare);
    const inserted = new Set(result.rows.map((row) => String((row as { id: unknown }).id)));
    // The first add of an id in the batch is the one that inserted it; later ones are duplicates.
    return additions.map(({ event }) => ({ duplicate: !inserted.delete(event.id) }));
  }

  async claim(request: InboxClaimRequest): Promise<InboxClaim[]> {
    checkInboxClaim(request);
    const token = `${request.owner}:${this.#randomId()}`;
    const result = await this.#run(this.#client, "claim", [
      request.now,
      request.limit,
      request.owner,
      token,
      request.leaseMs,
    ]);
    const rows: EventRow[] = [];
    for (const row of result.rows) {
      const parsed = claimSchema.safeParse(row);
      if (parsed.success) rows.push(parsed.data);
      else await this.#quarantine(row, parsed.error, token, request);
    }
    return rows
      .sort((a, b) => (a.available_at ?? 0) - (b.available_at ?? 0))
      .map((row) => ({ event: toEvent(row), attempts: row.attempts, token }));
  }

  /**
   * Dead-letters a row the claim took but cannot read, under the claim's own lease. Thrown, it failed the whole batch
   * after the UPDATE had taken every lease, and the same batch again at each lease's end: one such row stalled the inbox.
   */
  async #quarantine(row: unknown, cause: unknown, token: string, request: InboxClaimRequest): Promise<void> {
    const id = (row as { id?: unknown } | null)?.id;
    // The id is the primary key (text, never null): without one there is no row to settle, and it comes back at its
    // lease's end, told again.
    const named = typeof id === "string";
    const error = new WebhookConsumerError(
      "row_invalid",
      `The webhook_inbox row ${named ? JSON.stringify(id) : "claimed"} cannot be decoded (written by another version, or by hand)${named ? "; it was dead-lettered" : ""}.`,
      { cause },
    );
    if (named)
      await this.#run(this.#client, "fail", [id, token, "dead", null, JSON.stringify(error.toRecord()), request.now]);
    request.onInvalid?.(error);
  }

  async complete(
    claim: InboxClaim,
    work: (context: PostgresInboxContext) => Promise<void>,
    now: number,
    options: InboxCompleteOptions = {},
  ): Promise<InboxCompleteResult> {
    checkInboxNow("complete", now);
    const { signal } = options;
    let failure: { error: unknown } | undefined;
    const outcome = await transaction(
      this.#client,
      async (tx): Promise<InboxCompleteResult> => {
        const held = await this.#run(tx, "hold", [claim.event.id, claim.token]);
        if (held.rows.length === 0) return { outcome: "lost" };
        try {
          await work({ client: tx });
        } catch (error) {
          failure = { error };
          // Rolls the handler's writes back; the processor then settles the failure outside this transaction.
          throw error;
        }
        await this.#run(tx, "done", [claim.event.id, now]);
        return { outcome: "done" };
      },
      // Abandoned at the signal: the transaction ends at once (on a pool, with its connection), done mark and all.
      { signal },
    ).catch((error: unknown) => {
      if (failure !== undefined) return { outcome: "failed", error: failure.error } as const;
      if (signal?.aborted) return { outcome: "failed", error: signal.reason } as const;
      throw error;
    });
    return outcome;
  }

  async fail(claim: InboxClaim, outcome: InboxFailOutcome, now: number): Promise<boolean> {
    checkInboxFail(outcome, now);
    const dead = "dead" in outcome;
    const result = await this.#run(this.#client, "fail", [
      claim.event.id,
      claim.token,
      dead ? "dead" : "failed",
      dead ? null : outcome.retryAt,
      JSON.stringify(outcome.error),
      now,
    ]);
    return affected(result) > 0;
  }

  async get(id: string): Promise<InboxRecord | undefined> {
    const result = await this.#run(this.#client, "get", [id]);
    return result.rows[0] === undefined ? undefined : readRecord(result.rows[0]);
  }

  async deadLetters(options: { limit?: number } = {}): Promise<InboxRecord[]> {
    const limit = nonNegativeInteger("Inbox.deadLetters", "limit", options.limit ?? 100);
    const result = await this.#run(this.#client, "dead", [limit]);
    return result.rows.map(readRecord);
  }

  async retryDeadLetter(id: string, now: number): Promise<boolean> {
    checkInboxNow("retryDeadLetter", now);
    return affected(await this.#run(this.#client, "retryDead", [id, now])) > 0;
  }

  async purgeDone(before: number): Promise<number> {
    checkInboxPurge(before);
    let purged = 0;
    for (;;) {
      const deleted = affected(await this.#run(this.#client, "purgeDone", [before, PURGE_BATCH]));
      purged += deleted;
      if (deleted < PURGE_BATCH) return purged;
    }
  }
}

/**
 * Creates a PostgreSQL {@link Inbox}; create its table once with `migrate(pool, inboxMigrations())`.
 * @param options the pool (or PGlite), the schema, the group-commit width and the id generator.
 * @see docs/webhooks-consumers.md, "The PostgreSQL inbox"
 * @example
 * const pool = new pg.Pool({ connectionString });
 * await migrate(pool, inboxMigrations());
 * const inbox = createPostgresInbox({ client: pool });
 */
export function createPostgresInbox(options: PostgresInboxOptions): PostgresInbox {
  return new PostgresInbox(options);
}
