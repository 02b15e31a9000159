import { randomUUID } from "node:crypto";
import { nonNegativeInteger, nonNegativeNumber } from "../../../options/number-option";
import { GroupWriter } from "../../../postgres/group-writer";
import { assertSqlClient, type SqlClient } from "../../../postgres/sql-client";
import { epochMsOf, timestampOf } from "../../../postgres/sql-time";
import { isDataError, run, type Statement, statementNames, statementVariants } from "../../../postgres/statement";
import { StoreClosedError } from "../../../postgres/store-closed-error";
import { createPostgresRateLimitStore } from "../../../ratelimit/postgres/postgres-store";
import type { RateLimitStore } from "../../../ratelimit/store";
import { patternsMatching } from "../../event-pattern/event-pattern";
import { wholeMs } from "../../whole-ms";
import { attemptCursor } from "../attempt-cursor";
import type { CircuitBoard } from "../circuit-board";
import { DELIVERY_DEFAULTS } from "../defaults";
import type { ClaimedDelivery, DeliveryQueue } from "../delivery-queue";
import {
  checkAttempt,
  checkClaimOptions,
  checkLease,
  checkPublishOptions,
  checkState,
  eventPayload,
  listEventId,
  listLastErrorKind,
  listSince,
  listStartingAfter,
  maxPayloadBytes,
  publishDueAt,
  publishTracestate,
} from "../queue-arguments";
import { type DeliveryState, isDueBy, isScheduled } from "../state-machine";
import { type ListenOptions, listenOnChannel, listenOptions } from "./channel-listener";
import {
  type Completion,
  type CompletionReach,
  completeBatch,
  completionReach,
  completionStatement,
  lockedInIdOrder,
  TERMINAL,
} from "./completion-batch";
import { deliveryChannel, notifyingStatement } from "./delivery-notifications";
import { ATTEMPT_COLUMNS, deliveryColumns, toAttempt, toClaim, toDelivery } from "./delivery-rows";
import { type DeliveryTablesOptions, deliveryTables, ENDED, PARKED } from "./delivery-tables";
import { receivingFor } from "./owned-by";
import { createPostgresCircuitBoard } from "./postgres-circuit-board";
import { reachOf } from "./reach";

/** Options of {@link createPostgresDeliveryQueue}. */
export interface PostgresDeliveryQueueOptions extends DeliveryTablesOptions {
  /** A `pg` Pool (or Client), or PGlite: see `SqlClient` in `rest-webhooks/postgres`. */
  client: SqlClient;
  /**
   * Run the claim and the completion as named prepared statements on `pg` connections (planned once per connection,
   * not on every claim); turn off behind a transaction-pooling proxy. @default true
   */
  prepare?: boolean;
  /**
   * How long a delivered or exhausted delivery is kept after it ended, and an attempt log line after its attempt, ms.
   * Older ones are deleted as outcomes are stored (every 64 outcomes, the 256 deliveries and 256 log lines that expired
   * first), so the tables do not grow without end. `Infinity` keeps everything.
   * @default 604_800_000 (7 days, as the memory queue)
   */
  retainTerminalMs?: number;
  /**
   * The largest event `publish` takes, in bytes of its JSON; a larger one is refused (`WebhookDeliveryError`
   * `payload_too_large`) and nothing is inserted. A positive integer, or `Infinity`. @default 1_048_576 (1 MiB, the
   * consumer adapters' default body limit)
   */
  maxPayloadBytes?: number;
  /** The clock of the retention (when a delivery ended, what is old enough to delete), epoch ms. @default Date.now */
  now?: () => number;
  /**
   * Whether `subscribe` (the delivery worker subscribes while it runs) also hears what other processes make due: while
   * anything subscribes, the queue LISTENs on the channel `webhook_deliveries.<schema>` that every queue `notify`ing
   * writes to. A worker then claims a delivery published by another process (or another queue object) at its commit,
   * not at its next poll (`pollIntervalMs`). On a `pg` Pool that is the pool's one listening connection, opened with
   * its settings outside the pool (it takes none of the pool's clients, and never keeps the process alive) and shared
   * with the endpoint store's `listen` and every other store object on the pool; PGlite listens on itself; a single
   * `pg` Client is not listened on. A lost connection is reported to `onError` and opened again after `retryMs` (1 s,
   * doubling to 30 s), and the subscribers are told once it listens again; meanwhile workers poll. `false`: not
   * listened on, as before.
   * @default true
   */
  listen?: boolean | ListenOptions | undefined;
  /**
   * Whether `publish`, an `update` to a scheduled state and a delivery handed back due at once `NOTIFY` the queue's
   * channel (see `listen`), at their commit: one notification per transaction (PostgreSQL folds the rest), none for a
   * statement that wrote nothing or a transaction rolled back. `false` for a transaction you `PREPARE` (two-phase
   * commit), which PostgreSQL refuses after a `NOTIFY`; workers then find such deliveries at their next poll.
   * @default true
   */
  notify?: boolean;
  /**
   * The least time between two publishes that notify, from this queue object and the queues of its `withClient`, ms.
   * A transaction that notified takes a database-wide lock at its commit, held through the commit's flush, so commits
   * that notify cannot share a flush: notifying every publish halved the rate of 16 concurrent publishes
   * (docs/benchmarks.md). A publish within the window after one that notified does not: a worker woken by the first
   * claims what is due by then, and what commits after is claimed as its deliveries finish (or at its next poll, when
   * the one that notified rolled back). `0`: every publish notifies.
   * @default 10
   */
  notifyEveryMs?: number;
}

/** The PostgreSQL queue: a {@link DeliveryQueue} that can also act inside your transaction. */
export interface PostgresDeliveryQueue extends DeliveryQueue {
  /**
   * The same queue issuing its statements on `client`, e.g. the `tx` of your transaction: `publish` then inserts the
   * deliveries in it, so the business write and its event commit together (the transactional outbox). Outcomes stored
   * through it run no retention purge, which could fail and abort your transaction: the queue it came from purges.
   * @example await transaction(pool, async (tx) => { await saveOrder(tx); await queue.withClient(tx).publish(event); })
   */
  withClient(client: SqlClient): PostgresDeliveryQueue;
  /**
   * Stops taking outcomes and resolves once every outcome taken before (`complete`, written in groups) has settled:
   * those are still written and each caller learns its own result, so none reported stored is lost. Later `complete`
   * calls reject with a `StoreClosedError` (`code` `store_closed`) and write nothing. The other methods are single
   * statements on the client, which `pool.end()` lets finish. A queue of `withClient` has outcomes of its own: close
   * it too, or await its calls. Every call returns the same promise.
   * @example
   * await worker.stop(); // no more claims; the attempts in flight store their outcomes
   * await queue.close(); // the outcomes taken are written
   * await pool.end();
   */
  close(): Promise<void>;
}

// The most deliveries in flight nextDueAt looks at for the earliest lease end (64 workers at 64 concurrent each).
const IN_FLIGHT_SEEN = 4096;

// The latest time a JavaScript Date holds (epoch ms), as "no bound".
const LATEST_MS = 8.64e15;

// Retention: every PURGE_EVERY outcomes stored, the PURGE_ROWS deliveries and attempt log lines that expired first
// are deleted. Four times what the outcomes added, so a backlog shrinks as work goes on, and bounded, so a purge is
// one short statement however large the tables.
const PURGE_EVERY = 64;
const PURGE_ROWS = 256;

const msOf = (row: unknown): number | undefined => {
  const due = (row as { due?: unknown } | undefined)?.due;
  return typeof due === "number" ? due : undefined;
};

function stateValues(state: DeliveryState): unknown[] {
  return [
    state.status,
    state.attempts,
    state.nextAttemptAt,
    state.lastAttemptAt,
    state.lastStatus,
    state.lastErrorKind,
    state.deliveredAt,
  ];
}

/** Whether a publish now notifies: the first after `everyMs` since the last that did (a monotonic clock). */
function publishNotifier(everyMs: number): () => boolean {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const now = performance.now();
    if (now - last < everyMs) return false;
    last = now;
    return true;
  };
}

/**
 * The PostgreSQL {@link DeliveryQueue}: the transactional outbox. `publish` inserts the deliveries with one statement,
 * which runs in your transaction through `withClient(tx)`, so an order and its event commit together. Workers claim
 * with `FOR UPDATE SKIP LOCKED` and a lease (a leased delivery is due again at its lease end, so a crashed worker's
 * claims come back by themselves); several processes can share the tables. Create them with
 * `migrate(pool, deliveryMigrations())`.
 * @example
 * await migrate(pool, deliveryMigrations());
 * const queue = createPostgresDeliveryQueue({ client: pool });
 */
export function createPostgresDeliveryQueue(options: PostgresDeliveryQueueOptions): PostgresDeliveryQueue {
  const notifyEveryMs = nonNegativeNumber(
    "createPostgresDeliveryQueue",
    "notifyEveryMs",
    options.notifyEveryMs ?? 10,
    "milliseconds",
  );
  return queueOn(options, true, publishNotifier(notifyEveryMs));
}

// `purges`: whether outcomes stored through this queue run the retention. A queue of withClient runs in the caller's
// transaction (or on a client it lends for a while), where a failing purge would abort that transaction, the outcomes
// it reported stored rolled back with it, and a purge would hold its row locks until the caller commits: the queue
// it was made from purges instead.
function queueOn(
  options: PostgresDeliveryQueueOptions,
  purges: boolean,
  notifies: () => boolean,
): PostgresDeliveryQueue {
  const { client } = options;
  assertSqlClient(client, "createPostgresDeliveryQueue");
  const { schema, endpoints: E, deliveries: D, attempts: A } = deliveryTables(options, "createPostgresDeliveryQueue");
  const listen = listenOptions("createPostgresDeliveryQueue", options.listen);
  if (options.notify !== undefined && typeof options.notify !== "boolean") {
    throw new TypeError(`createPostgresDeliveryQueue: notify must be a boolean, got ${typeof options.notify}.`);
  }
  const notify = options.notify ?? true;
  const channel = deliveryChannel(schema);
  const SET_STATE = `status = $3, attempts = $4, next_attempt_at = ${timestampOf("$5")},
    last_attempt_at = ${timestampOf("$6")}, last_status = $7, last_error_kind = $8, delivered_at = ${timestampOf("$9")},
    lease_token = NULL, lease_until = NULL, ended_at = CASE WHEN $3 IN ${TERMINAL} THEN ${timestampOf("$11")} END`;
  const SCHEDULED = `status IN ('pending', 'failed')`;
  // A claim writes only the lease columns, which no index holds, so PostgreSQL can update the row on its own page (a
  // HOT update: no new entries in the five indexes, and one page in the WAL where there were six): a claim of 64 from
  // 1,000,000 pending deliveries wrote 317 KiB of WAL before, 34 KiB now. So a leased delivery keeps its due time, and
  // its lease alone keeps it from being claimed twice.
  const UNLEASED = `(lease_until IS NULL OR lease_until <= ${timestampOf("$1")})`;
  const DUE = `${SCHEDULED} AND next_attempt_at <= ${timestampOf("$1")} AND ${UNLEASED}`;
  // An endpoint's earliest scheduled delivery after `after` (in endpoint order), and whether it is due: one step of a
  // loose index scan over (endpoint_id, next_attempt_at), so a step costs one index probe however many deliveries an
  // endpoint has, due or not. It also gives that delivery's row address (head): an endpoint with room for one takes
  // its head by address when it is free, with no second probe of the index (see claimSql).
  const step = (after: string, upTo: string) =>
    `SELECT endpoint_id, next_attempt_at <= ${timestampOf("$1")} AS due, ctid AS head FROM ${D}
     WHERE ${SCHEDULED} AND endpoint_id > ${after}${upTo} ORDER BY endpoint_id, next_attempt_at LIMIT 1`;
  // Endpoints with due work take turns: the walk visits the endpoints after the cursor, then from the start (at most
  // $5 steps each way), each due one gives at most its room ($7/$8, else $6), oldest due first, locked with SKIP
  // LOCKED so workers never wait on each other. The walk is lazy: it stops as soon as the claim is full, so a claim
  // costs the endpoints it serves, not the size of the table.
  // $1 now, $2 lease token, $3 lease ms, $4 cursor, $5 steps, $6 per endpoint, $7/$8 rooms, $9 limit. The walk stops
  // at "reach" rows, the limit rounded up (see claimStatement); the first $9 of them in turn order are claimed.
  // A claim that comes back short walked every endpoint it could: when a leg of its walk stopped at $5 steps, the
  // endpoint it stopped at comes back as walk_end (on a row of its own when nothing was claimed), and the next claim
  // starts there, so an endpoint behind any number of endpoints waiting for a retry is reached within
  // (their number / $5 + 1) claims. Read only then, from the walk already made: a full claim pays nothing for it.
  // An endpoint with room for one (perEndpoint 1, or a room cut to 1 after failures) takes the head its step found,
  // by address, when that row is due, unleased and not locked by another claim; only otherwise does it look up its
  // oldest free due delivery in the index. The head is the endpoint's earliest scheduled delivery, so when it is free
  // it is the one the lookup would find. Against 1,000,000 pending deliveries the lookup was the part of a claim
  // that grew with the table (bench/delivery's claim latency, 1 per endpoint: 0.70 of the claim at 1,000 with the
  // lookup, 0.77-0.79 without). The price: each step reads the head's row, where an index-only step could skip an
  // all-visible page (a claim that walks 9,000 endpoints waiting for retries: 9-16 % slower).
  const claimSql = (reach: string) => `WITH RECURSIVE
    after_cursor(endpoint_id, due, head, n) AS (
      SELECT endpoint_id, due, head, 1 FROM (${step("$4", "")}) first
      UNION ALL
      SELECT x.endpoint_id, x.due, x.head, a.n + 1 FROM after_cursor a CROSS JOIN LATERAL (${step("a.endpoint_id", "")}) x
      WHERE a.n < $5
    ),
    from_start(endpoint_id, due, head, n) AS (
      SELECT endpoint_id, due, head, 1 FROM (${step("''", " AND endpoint_id <= $4")}) first
      UNION ALL
      SELECT x.endpoint_id, x.due, x.head, s.n + 1 FROM from_start s
        CROSS JOIN LATERAL (${step("s.endpoint_id", " AND endpoint_id <= $4")}) x
      WHERE s.n < $5
    ),
    walk AS MATERIALIZED (
      -- Each due endpoint's room once (materialized: the two branches below would each look it up again); none for
      -- the endpoints the walk only passes, which may be thousands.
      SELECT w.*, CASE WHEN w.due THEN coalesce(
        (SELECT r.room FROM unnest($7::text[], $8::int[]) AS r(id, room) WHERE r.id = w.endpoint_id), $6::int
      ) END AS room
      FROM (SELECT endpoint_id, due, head, n FROM after_cursor UNION ALL SELECT endpoint_id, due, head, n + $5 FROM from_start) w
    ),
    due AS (
      SELECT c.ctid AS row_ctid, c.id, t.n, c.next_attempt_at FROM walk t CROSS JOIN LATERAL (
        SELECT * FROM (
          SELECT ctid, id, next_attempt_at FROM ${D}
          WHERE ctid = t.head AND t.room = 1 AND endpoint_id = t.endpoint_id AND ${DUE}
          FOR UPDATE SKIP LOCKED
        ) h
        UNION ALL
        SELECT * FROM (
          SELECT ctid, id, next_attempt_at FROM ${D} WHERE endpoint_id = t.endpoint_id AND ${DUE}
          ORDER BY next_attempt_at LIMIT t.room
          FOR UPDATE SKIP LOCKED
        ) l
        -- Append runs the lookup only when the head gave nothing.
        LIMIT t.room
      ) c
      WHERE t.due
      LIMIT ${reach}
    ),
    -- By the locked row versions' addresses (a TID scan) rather than a second probe of the primary key: each row is
    -- locked above, so that version is the current one; were it not, the row would simply go unclaimed this time.
    -- As "ctid = ANY (array)" rather than a join with "due", which a plan expecting many rows made a hash join over
    -- the whole table (4.5 ms at 16,000 rows, growing with the table).
    claimed AS (
      UPDATE ${D} d SET lease_token = $2, lease_until = ${timestampOf("($1::float8 + $3::float8)")}
      WHERE d.ctid = ANY (ARRAY(SELECT row_ctid FROM due ORDER BY n, next_attempt_at LIMIT $9))
      RETURNING ${deliveryColumns("d")}
    ),
    walk_end AS (
      SELECT CASE WHEN (SELECT count(*) FROM due) < $9 THEN coalesce(
        (SELECT endpoint_id FROM after_cursor WHERE n = $5), (SELECT endpoint_id FROM from_start WHERE n = $5)
      ) END AS walk_end
    )
    SELECT r.*, w.walk_end FROM walk_end w
      LEFT JOIN (SELECT claimed.*, due.n AS turn_n FROM claimed JOIN due USING (id)) r ON true`;
  // The most endpoints a claim's walk visits each way (endpoints with scheduled deliveries, due or not): the walk stops
  // at a full claim, so this bounds only a claim that finds little due among many endpoints waiting for retries.
  const WALK_STEPS = 10_000;
  // The largest walk written into a statement of its own (see claimStatement).
  const PREPARED_REACH = 256;
  let rateLimits: RateLimitStore | undefined;
  let circuits: CircuitBoard | undefined;
  // Where the next claim's turn starts (per queue object: each worker keeps its own).
  const turn = { cursor: "" };
  // Group commit: outcomes stored while earlier ones are being written go together, one statement and one commit
  // for the lot, so the queue's throughput is not one WAL flush per attempt. Each caller still waits for its own
  // commit, and a batch the database refuses on its data is retried one by one.
  const prepare = options.prepare ?? true;
  const hot = statementNames("rw_dlv", schema, {
    claim: claimSql("$9"),
    complete: completionStatement({ deliveries: D, attempts: A }),
    // $1 the oldest end kept (ms, the queue's clock), $2 the oldest log line kept (ms, the clock the lines were written
    // with; null: none deleted). Each part takes the PURGE_ROWS rows that expired first, of any endpoint, from an index
    // ordered by when they expired (migration delivery@11), so it reads what it deletes and no more: however many
    // scheduled deliveries or lines dated ahead there are, none stands in front of what expired. A delivery changed
    // meanwhile (a manual retry) has another row version, so its address no longer matches.
    purge: `WITH gone AS (
      DELETE FROM ${D} WHERE status IN ${TERMINAL} AND ctid = ANY (ARRAY(
        SELECT ctid FROM ${D} WHERE status IN ${TERMINAL} AND ${ENDED} < ${timestampOf("$1")}
        ORDER BY ${ENDED} LIMIT ${PURGE_ROWS}
      ))
      RETURNING 1
    ), logged AS (
      DELETE FROM ${A} WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM ${A} WHERE started_at < ${timestampOf("$2")} ORDER BY started_at LIMIT ${PURGE_ROWS}
      ))
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM gone)::int AS deliveries, (SELECT count(*) FROM logged)::int AS attempts`,
  });
  // A prepared statement runs its generic plan (planned once per connection) only when PostgreSQL estimates it no
  // dearer than planning afresh, and it cannot tell how far an unknown "LIMIT $9" lets the walk go: with the limit
  // as a parameter, every claim at 1,000,000 pending deliveries was planned again (~1 ms) while claims at 1,000 ran
  // the generic plan. So the walk's reach is written into the statement, the limit rounded up to a power of two (a
  // handful of statements per connection, whatever room a worker asks for), and $9 trims the rows found to the
  // limit; the few found beyond it are locked for the statement only, and not claimed.
  const claimOfReach = statementVariants("rw_dlv", "claim", schema, (reach: number) => claimSql(String(reach)));
  function claimStatement(limit: number): Statement {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > PREPARED_REACH) return hot.claim;
    return claimOfReach(reachOf(limit));
  }
  // The completion statement of a batch's reach (completion-batch.ts): a few texts, each planned once per connection.
  const completeOfReach = statementVariants(
    "rw_dlv",
    "complete",
    schema,
    (reach: CompletionReach) => completionStatement({ deliveries: D, attempts: A }, reach),
    (reach) => `${reach.deliveries}_${reach.attempts}`,
  );
  const completeStatement = (batch: readonly Completion[]): Statement => {
    const reach = completionReach(batch);
    return reach === undefined ? hot.complete : completeOfReach(reach);
  };
  const retainMs = options.retainTerminalMs ?? DELIVERY_DEFAULTS.retainTerminalMs;
  if (typeof retainMs !== "number" || !(retainMs >= 0)) {
    throw new TypeError(`createPostgresDeliveryQueue: retainTerminalMs must be a non-negative number, got ${retainMs}`);
  }
  const clock = options.now ?? Date.now;
  const maxPayload = maxPayloadBytes("createPostgresDeliveryQueue", options.maxPayloadBytes);
  let storedSincePurge = 0;
  // After a batch is committed, every PURGE_EVERY outcomes: what expired first, of any endpoint. Deliveries ended on
  // the queue's clock (as in the memory queue); log lines are dated by the worker that wrote them, so their age is
  // counted back from the newest line of the batch, on that same clock, but never from past the queue's own: a line
  // dated ahead (a worker's clock years ahead) deleted every line within the retention.
  async function purgeAfter(batch: readonly Completion[]): Promise<void> {
    storedSincePurge += batch.length;
    if (!purges || storedSincePurge < PURGE_EVERY || retainMs === Number.POSITIVE_INFINITY) return;
    storedSincePurge = 0;
    const at = clock();
    let newestLine: number | null = null;
    for (const { attempt } of batch) {
      if (attempt !== undefined && (newestLine === null || attempt.startedAt > newestLine))
        newestLine = Math.min(attempt.startedAt, at);
    }
    try {
      await run(client, hot.purge, [at - retainMs, newestLine === null ? null : newestLine - retainMs], prepare);
    } catch {
      // The batch's outcomes are committed and must be reported so; a failed purge is tried again by the next one.
    }
  }
  // The last outcome taken of each lease whose outcomes are not all settled; `close()` once it was called.
  const inFlight = new Map<string, Promise<boolean>>();
  let closing: Promise<void> | undefined;
  const completions = new GroupWriter<Completion, boolean>(
    async (batch) => {
      const written = await completeBatch((values) => run(client, completeStatement(batch), values, prepare), batch);
      await purgeAfter(batch);
      return written;
    },
    256,
    2,
    isDataError,
  );

  // DeliveryQueue.subscribe, across processes: each notification of the channel (listen, notify) and each time the
  // connection listens again after a loss (what was notified meanwhile was not heard) wakes every subscriber.
  const subscribers = new Set<() => void>();
  let unlisten: (() => void) | undefined;
  const wake = () => {
    for (const subscriber of subscribers) {
      try {
        subscriber();
      } catch {
        // One subscriber's throw does not keep the others from being told.
      }
    }
  };

  return {
    withClient(other) {
      assertSqlClient(other, "PostgresDeliveryQueue.withClient");
      return queueOn({ ...options, client: other }, false, notifies);
    },
    sharedCircuits() {
      circuits ??= createPostgresCircuitBoard({ client, schema: options.schema });
      return circuits;
    },
    sharedRateLimits() {
      rateLimits ??= createPostgresRateLimitStore({ client, schema: options.schema });
      return rateLimits;
    },
    async publish(event, publishOptions = {}) {
      const now = publishOptions.now ?? Date.now();
      checkPublishOptions(publishOptions);
      const dueAt = publishDueAt(publishOptions, now);
      // DeliveryQueue.publish: the same event id in the same tenant's scope again is a no-op while any of its
      // deliveries is kept, as in the memory queue, so an endpoint that subscribed in between gets none. The scope is
      // `tenant`, '' for the operator's events; a row stored before delivery@14 has none (NULL) and, as then, holds
      // its id in every scope. One probe of the (event_id, tenant, endpoint_id) index (delivery@14): the id's few
      // entries, their tenant read from the index (an OR of the two tenants was two probes and a heap scan).
      // Two publishes of one id at once each keep a pair once (ON CONFLICT), inserting in endpoint id order whatever
      // their plans: each waits on the unique index for the other's uncommitted pair, and two taking the pairs in
      // opposite orders would each wait for the other (a deadlock, 40P01, failing one publish). ON CONFLICT names no
      // index: between delivery@14 and @15 the (event_id, endpoint_id) key of the release before still stands, and
      // a pair it holds is skipped as that release did, not a unique violation.
      const values: unknown[] = [
        event.id,
        event.type,
        eventPayload(event, maxPayload),
        now,
        dueAt,
        publishOptions.traceparent ?? null,
        publishTracestate(publishOptions) ?? null,
        publishOptions.tenant ?? "",
      ];
      // PublishOptions.endpointId: that endpoint alone, whatever it subscribes to (still enabled, still the tenant's).
      const only = publishOptions.endpointId;
      const reached =
        only === undefined
          ? `e.enabled_events && $${values.push(patternsMatching(event.type))}::text[]`
          : `e.id = $${values.push(only)}`;
      const insert = `INSERT INTO ${D} (id, event_id, event_type, endpoint_id, payload, created_at, status, attempts,
           next_attempt_at, traceparent, tracestate, tenant)
         SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, e.id, $3, ${timestampOf("$4")}, 'pending', 0,
           ${timestampOf("$5")}, $6, $7, $8
         FROM ${E} e WHERE e.status = 'enabled' AND ${reached}
           AND ${receivingFor(publishOptions.tenant ?? null, values, "e")}
           AND NOT EXISTS (SELECT 1 FROM ${D} WHERE event_id = $1 AND coalesce(tenant, $8) = $8)
         ORDER BY e.id
         ON CONFLICT DO NOTHING
         RETURNING id`;
      // Workers listening anywhere claim the new deliveries at this statement's commit (the caller's, in withClient).
      const { rows } = await client.query(
        notify && notifies() ? notifyingStatement(insert, `$${values.push(channel)}`) : insert,
        values,
      );
      return { deliveryIds: rows.map((row) => String((row as { id: unknown }).id)) };
    },
    async claim(claimOptions) {
      checkClaimOptions(claimOptions);
      const { limit, now, leaseMs, perEndpoint = limit, endpointLimits } = claimOptions;
      const token = randomUUID();
      const ids = endpointLimits === undefined ? [] : [...endpointLimits.keys()];
      const rooms = ids.map((id) => endpointLimits?.get(id) ?? 0);
      const values = [now, token, leaseMs, turn.cursor, WALK_STEPS, perEndpoint, ids, rooms, limit];
      const { rows } = await run(client, claimStatement(limit), values, prepare);
      const walkEnd = (rows[0] as { walk_end?: unknown } | undefined)?.walk_end;
      // Nothing claimed: one row, of the walk's end alone.
      const found = rows.filter((row) => (row as { id: unknown }).id !== null);
      // RETURNING keeps no order: put the claims back in turn order, oldest due first within an endpoint (a claim
      // leaves the due time as it was).
      const order = (row: unknown) => row as { turn_n: number; next_attempt_at: number };
      found.sort((x, y) => order(x).turn_n - order(y).turn_n || order(x).next_attempt_at - order(y).next_attempt_at);
      const claims = found.map((row): ClaimedDelivery => toClaim(row, token, wholeMs(now + leaseMs)));
      // Endpoints take turns across claims too: the next claim resumes after the last endpoint this one served, or
      // where its walk stopped short (see claimSql).
      const last = claims.at(-1);
      if (typeof walkEnd === "string") turn.cursor = walkEnd;
      else if (last !== undefined) turn.cursor = last.endpointId;
      return claims;
    },
    async renew(claims, now, leaseMs) {
      checkLease("DeliveryQueue.renew", now, leaseMs);
      if (claims.length === 0) return [];
      // Locked first, in the order every batch of outcomes locks (lockedInIdOrder), which may hold the same rows.
      const { rows } = await client.query(
        `WITH held AS (SELECT * FROM unnest($1::text[], $2::text[]) AS h(id, token)),
         ${lockedInIdOrder(D, "held")}
         UPDATE ${D} d SET lease_until = ${timestampOf("($3::float8 + $4::float8)")}
         FROM locked WHERE d.id = locked.id
         RETURNING d.id`,
        [claims.map((c) => c.id), claims.map((c) => c.leaseToken), now, leaseMs],
      );
      return rows.map((row) => String((row as { id: unknown }).id));
    },
    complete(claim, state, attempt) {
      try {
        checkState("DeliveryQueue.complete", state);
        checkAttempt("DeliveryQueue.complete", attempt);
      } catch (error) {
        return Promise.reject(error);
      }
      if (closing !== undefined) return Promise.reject(new StoreClosedError());
      const completion: Completion = { claim, state, attempt, at: clock() };
      // DeliveryQueue.complete: of two outcomes of one lease the first is stored. Two batches run at once on two
      // connections, and the second's could commit first: so an outcome whose lease has one in flight is written
      // after it (one batch already keeps the first of a lease, completeBatch).
      const lease = `${claim.id} ${claim.leaseToken}`;
      const before = inFlight.get(lease);
      const written =
        before === undefined
          ? completions.submit(completion)
          : before.then(
              () => completions.submit(completion),
              () => completions.submit(completion),
            );
      // A delivery handed back due at once (a worker stopping, or without room for its endpoint) is news to the other
      // workers, whose timers wait for its lease to end: told once it is written. Not from a queue of withClient, whose
      // client the caller may have released by then; a failed notification leaves it to their next poll.
      const wakes = notify && purges && attempt === undefined && isDueBy(state, completion.at);
      const stored = wakes
        ? written.then(async (done) => {
            if (done) await client.query("SELECT pg_notify($1, 'due')", [channel]).catch(() => {});
            return done;
          })
        : written;
      inFlight.set(lease, stored);
      const settled = () => {
        if (inFlight.get(lease) === stored) inFlight.delete(lease);
      };
      stored.then(settled, settled);
      return stored;
    },
    close() {
      // The outcomes taken and waiting for an earlier one of their lease are written before the writer closes.
      closing ??= Promise.allSettled([...inFlight.values()]).then(() => completions.close());
      return closing;
    },
    async update(id, from, state, now = clock()) {
      checkState("DeliveryQueue.update", state);
      // $10 the caller's `now` for the lease; $11 the queue's clock for the end, which the retention reads (as the
      // memory queue): an admin's clock behind it had the delivery purged by as much before its retention.
      const values = [id, [...from], ...stateValues(state), now, clock()];
      const write = `UPDATE ${D} SET ${SET_STATE}
         WHERE id = $1 AND status = ANY($2::text[]) AND (lease_token IS NULL OR lease_until <= ${timestampOf("$10")})
         RETURNING id`;
      // A manual retry is due at once, before any time a worker waits for: it wakes them.
      const wakes = notify && isScheduled(state);
      const { rows } = await client.query(
        wakes ? notifyingStatement(write, `$${values.push(channel)}`) : write,
        values,
      );
      return rows.length > 0;
    },
    subscribe(listener) {
      // One listening connection for all of this object's subscribers, while there are any.
      const own = () => listener();
      subscribers.add(own);
      if (subscribers.size === 1 && listen !== undefined) {
        const hooks = { retryMs: listen.retryMs, onError: listen.onError, onResumed: wake };
        unlisten = listenOnChannel(client, channel, wake, hooks);
      }
      return () => {
        if (!subscribers.delete(own) || subscribers.size > 0) return;
        unlisten?.();
        unlisten = undefined;
      };
    },
    async nextDueAt() {
      // The earlier of the first unleased delivery in due order and the lease ends of the leased ones due before it (a
      // leased delivery falls due at its lease end, never before its due time, so none due at or after it can be
      // earlier). Every delivery due before the first unleased one is leased, so both statements walk the due index
      // past the deliveries in flight only, whatever the size of the table; two statements, so the second is planned
      // with the first's answer. The walk is ordered and bounded, so stale statistics never turn it into a scan of the
      // table; past IN_FLIGHT_SEEN deliveries in flight an idle worker may wake later, by at most its poll interval.
      const first = await client.query(
        `SELECT ${epochMsOf("next_attempt_at")} AS due FROM ${D} WHERE ${SCHEDULED} AND lease_until IS NULL
         ORDER BY next_attempt_at LIMIT 1`,
      );
      const unleased = msOf(first.rows[0]);
      const leased = await client.query(
        `SELECT ${epochMsOf("min(greatest(next_attempt_at, lease_until))")} AS due FROM (
           SELECT next_attempt_at, lease_until FROM ${D} WHERE ${SCHEDULED} AND next_attempt_at < ${timestampOf("$1")}
           ORDER BY next_attempt_at LIMIT ${IN_FLIGHT_SEEN}
         ) ahead WHERE lease_until IS NOT NULL`,
        [unleased ?? LATEST_MS],
      );
      const inFlight = msOf(leased.rows[0]);
      if (unleased === undefined || inFlight === undefined) return unleased ?? inFlight;
      return Math.min(unleased, inFlight);
    },
    async get(id) {
      const { rows } = await client.query(`SELECT ${deliveryColumns()} FROM ${D} WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toDelivery(rows[0]);
    },
    async list(endpointId, listOptions = {}) {
      // Checked here, as the memory queue does: PostgreSQL would refuse a fraction or NaN with a syntax error.
      const limit = nonNegativeInteger("DeliveryQueue.list", "limit", listOptions.limit ?? 100);
      const since = listSince(listOptions) ?? null;
      const after = listStartingAfter(listOptions);
      const eventId = listEventId(listOptions);
      const kind = listLastErrorKind(listOptions);
      const statuses = listOptions.status;
      // The parked deliveries: the predicate of their index written out (migration delivery@13), so that every plan,
      // generic ones too, reads a page of them from it rather than every exhausted delivery of the endpoint.
      const parked =
        kind === "endpoint_disabled" &&
        statuses !== undefined &&
        statuses.length > 0 &&
        statuses.every((status) => status === "exhausted");
      const values: unknown[] = [
        endpointId,
        statuses === undefined || parked ? null : [...statuses],
        since,
        limit,
        after ?? null,
      ];
      // One event's deliveries (one per tenant that published the id) through the (event_id, tenant, endpoint_id)
      // index, in a statement of its own.
      const ofEvent = eventId === undefined ? "" : `AND event_id = $${values.push(eventId)}`;
      const ofKind = parked ? `AND ${PARKED}` : kind === undefined ? "" : `AND last_error_kind = $${values.push(kind)}`;
      // After the cursor in the list's order, (created_at, id) descending; a cursor that is not one of the
      // endpoint's deliveries matches no row, so the page is empty. Ordered by the table's columns, not the epoch ms
      // selected under the same name: so in an index's order, a page read from it stops at `limit` rows, where a sort
      // of the epoch ms read every matching row first.
      const { rows } = await client.query(
        `SELECT ${deliveryColumns()} FROM ${D} WHERE endpoint_id = $1 ${ofEvent} ${ofKind}
           AND ($2::text[] IS NULL OR status = ANY($2::text[]))
           AND ($3::float8 IS NULL OR created_at >= ${timestampOf("$3")})
           AND ($5::text IS NULL OR (created_at, id) < (SELECT c.created_at, c.id FROM ${D} c WHERE c.id = $5 AND c.endpoint_id = $1))
         ORDER BY ${D}.created_at DESC, ${D}.id DESC LIMIT $4`,
        values,
      );
      return rows.map(toDelivery);
    },
    async attempts(query) {
      const { endpointId, deliveryId, limit = 100 } = query;
      nonNegativeInteger("DeliveryQueue.attempts", "limit", limit);
      const after = attemptCursor(query);
      // Separate statements, so that each has a plan on its own index: one delivery's lines by the delivery index
      // (migration delivery@8), the endpoint's by the endpoint's; the cursor is a bound on `seq` in either, which
      // needs no row of its own (a purged line still places the page).
      const values: unknown[] = [endpointId, limit];
      let where = "endpoint_id = $1";
      if (deliveryId !== undefined) {
        values.push(deliveryId);
        where = `delivery_id = $${values.length} AND ${where}`;
      }
      if (after !== undefined) {
        // As text: a bigint past 2^53 would lose digits as a JavaScript number.
        values.push(after);
        where += ` AND seq < $${values.length}::bigint`;
      }
      const { rows } = await client.query(
        `SELECT ${ATTEMPT_COLUMNS} FROM ${A} WHERE ${where} ORDER BY seq DESC LIMIT $2`,
        values,
      );
      return rows.map(toAttempt);
    },
  };
}
