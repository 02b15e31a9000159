import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, type SqlDatabase, type SqlPool } from "../../../../src/postgres/index";
import { createWebhookProcessor, runProcessorLoop, scheduleBackoff } from "../../../../src/webhooks/consumer/index";
import {
  createPostgresInbox,
  inboxMigrations,
  type PostgresInbox,
  type PostgresInboxContext,
} from "../../../../src/webhooks/consumer/postgres/index";
import { databases, type OpenDatabase } from "../../../support/databases";
import { uniqueName } from "../../../support/services";
import { event, inboxContract } from "../inbox-contract";

describe.each(databases())("the PostgreSQL inbox on $name", (backend) => {
  let open: OpenDatabase;
  let pool: SqlDatabase;
  const schema = uniqueName("wh_inbox_test");
  const schemas: string[] = [];
  beforeAll(async () => {
    open = await backend.open({ max: 8 });
    pool = open.db;
    await pool.query(`CREATE SCHEMA "${schema}"`);
  });
  afterAll(async () => {
    for (const own of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await open.close();
  });

  // Every inbox in a schema of its own (the table name is fixed), dropped after the suite.
  async function freshInbox(): Promise<PostgresInbox> {
    return (await freshTable()).inbox;
  }
  async function freshTable(): Promise<{ inbox: PostgresInbox; table: string }> {
    const own = uniqueName("wh_inbox").toLowerCase();
    schemas.push(own);
    await migrate(pool, inboxMigrations({ schema: own }));
    return { inbox: createPostgresInbox({ client: pool, schema: own }), table: `"${own}".webhook_inbox` };
  }

  inboxContract(
    "postgres",
    async () => {
      const { inbox, table } = await freshTable();
      const side = table.replace("webhook_inbox", "side_effects");
      await pool.query(`CREATE TABLE ${side} (tag text NOT NULL)`);
      return {
        inbox,
        write: (context, tag) =>
          (context as PostgresInboxContext).client.query(`INSERT INTO ${side} VALUES ($1)`, [tag]),
        written: async () =>
          (await pool.query(`SELECT tag FROM ${side} ORDER BY tag`)).rows.map((row) => (row as { tag: string }).tag),
        // A session of this test waiting for a lock on the inbox's table (PGlite: one connection, none to wait for).
        settlementWaiting: backend.concurrent ? () => lockWaitOn(table.slice(0, table.indexOf("."))) : undefined,
        // A received_at of infinity: no epoch ms, so the row does not decode.
        addUnreadable: async (id, receivedAt) => {
          await inbox.add(event(id, { receivedAt }));
          await pool.query(`UPDATE ${table} SET received_at = 'infinity' WHERE id = $1`, [id]);
        },
      };
    },
    { concurrent: backend.concurrent },
  );

  /**
   * Resolves once a session waits for a lock in a statement naming `schema` (each test's schema is its own, so another
   * file's sessions are not counted); polls by round trips, no timer.
   */
  async function lockWaitOn(schema: string): Promise<void> {
    for (let polls = 0; polls < 2_000; polls++) {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0`,
        [schema],
      );
      if ((rows[0] as { n: number }).n > 0) return;
    }
    throw new Error(`no session waited for a lock in ${schema}`);
  }

  /** `count` events `old1`, `old2`…, done at 1,000 ms. */
  async function insertOldDone(table: string, count: number): Promise<void> {
    await pool.query(
      `INSERT INTO ${table} (id, type, payload, scheme, received_at, state, done_at, updated_at)
       SELECT 'old' || g, 'order.created', '{}', 'standard-webhooks', now(), 'done', to_timestamp(1000), now()
       FROM generate_series(1, $1::int) g`,
      [count],
    );
  }

  it("purges more done events than one statement deletes, and only done ones older than the time", async () => {
    const { inbox, table } = await freshTable();
    // 10,000 a statement (PURGE_BATCH): 20,005 old done events take three; the newer and the open ones stay.
    await insertOldDone(table, 20_005);
    await pool.query(
      `INSERT INTO ${table} (id, type, payload, scheme, received_at, state, done_at, available_at, updated_at)
       VALUES ('new', 't', '{}', 's', now(), 'done', to_timestamp(3000), NULL, now()),
              ('open', 't', '{}', 's', now(), 'pending', NULL, to_timestamp(1000), now())`,
    );
    expect(await inbox.purgeDone(2_000_000)).toBe(20_005);
    const { rows } = await pool.query(`SELECT id FROM ${table} ORDER BY id`);
    expect(rows).toEqual([{ id: "new" }, { id: "open" }]);
    expect(await inbox.purgeDone(2_000_000)).toBe(0);
  });

  // Regression: two purgers took the same rows; the one that lost them to the other deleted fewer than a batch and
  // stopped, and when both did, done events were left behind. Each purge now takes rows no other holds.
  if (backend.concurrent)
    it("purges past done events another purge holds, without waiting for them, which that one deletes", async () => {
      const { inbox, table } = await freshTable();
      await insertOldDone(table, 12_000);
      const other = await (pool as SqlPool).connect();
      try {
        await other.query("BEGIN");
        await other.query(`SELECT id FROM ${table} WHERE id IN ('old1', 'old2', 'old3') FOR UPDATE`);
        expect(await inbox.purgeDone(2_000_000)).toBe(11_997);
        await other.query("COMMIT");
      } finally {
        other.release();
      }
      expect(await inbox.purgeDone(2_000_000)).toBe(3);
    });

  // Only on a server: PGlite runs statements on the JavaScript thread, so a statement that sleeps would block the test.
  if (backend.concurrent)
    it("ends a handler stuck in a statement at the processor's time-out: the step finishes, the event is retried", async () => {
      const { inbox, table } = await freshTable();
      let expire!: () => void;
      const processor = createWebhookProcessor({
        inbox,
        retainDoneMs: false,
        retry: scheduleBackoff([0, 0], 0),
        deadline: () => {
          const controller = new AbortController();
          expire = () => controller.abort();
          return controller.signal;
        },
      });
      let attempts = 0;
      processor.on("*", async ({ client }) => {
        attempts++;
        // The first attempt writes, then waits on a statement that would run a minute.
        if (attempts === 1) await client.query("SELECT pg_sleep(60), 'inbox-timeout-probe'");
      });
      await inbox.add(event("stuck"));
      const step = processor.processDue();
      for (;;) {
        const { rows } = await pool.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%inbox-timeout-probe%' AND state = 'active' AND pid <> pg_backend_pid()",
        );
        if ((rows[0] as { n: number }).n > 0) break;
      }
      expire();
      expect(await step).toMatchObject({ claimed: 1, retried: 1, errors: 0 });
      expect(await inbox.get("stuck")).toMatchObject({ state: "failed", lastError: { code: "handler_timeout" } });
      // Its row lock went with the ended backend: the retry claims it and finishes.
      expect(await processor.processDue()).toMatchObject({ claimed: 1, done: 1 });
      expect((await pool.query(`SELECT state FROM ${table} WHERE id = 'stuck'`)).rows).toEqual([{ state: "done" }]);
    });

  // Only on a server: the slow handler holds a transaction open while the others run on connections of their own.
  if (backend.concurrent)
    it("runs every other event around a handler that holds its row lock, through the runner's slots", async () => {
      const { inbox, table } = await freshTable();
      let release = () => {};
      const processor = createWebhookProcessor({ inbox, batchSize: 2, retainDoneMs: false })
        .on("order.slow", () => new Promise<void>((resolve) => (release = resolve)))
        .on("order.shipped", async ({ client }) => void (await client.query("SELECT 1")));
      await inbox.add({ ...event("slow"), type: "order.slow" });
      for (let i = 0; i < 12; i++) await inbox.add(event(`e${i}`));
      const controller = new AbortController();
      const loop = runProcessorLoop({
        processor,
        sleep: () => new Promise((resolve) => setImmediate(resolve)),
        signal: controller.signal,
      });
      const states = async () =>
        (await pool.query(`SELECT state, count(*)::int AS n FROM ${table} GROUP BY state ORDER BY state`)).rows as {
          state: string;
          n: number;
        }[];
      // Committed, not only handled: a batch waiting for all its handlers would never get past the slow one's.
      while ((await states()).find((row) => row.state === "done")?.n !== 12);
      expect(await states()).toEqual([
        { state: "done", n: 12 },
        { state: "processing", n: 1 },
      ]);
      controller.abort();
      release();
      await loop;
      expect(await states()).toEqual([{ state: "done", n: 13 }]);
    });

  it("finds the done events a purge deletes by the done_at index", async () => {
    const { table } = await freshTable();
    await pool.query(
      `INSERT INTO ${table} (id, type, payload, scheme, received_at, state, done_at, available_at, updated_at)
       SELECT 'e' || g, 't', '{}', 's', now(), CASE WHEN g % 100 = 0 THEN 'done' ELSE 'pending' END,
              CASE WHEN g % 100 = 0 THEN to_timestamp(g) END, CASE WHEN g % 100 = 0 THEN NULL ELSE now() END, now()
       FROM generate_series(1, 5000) g`,
    );
    await pool.query(`ANALYZE ${table}`);
    const { rows } = await pool.query(
      `EXPLAIN SELECT id FROM ${table} WHERE state = 'done' AND done_at < to_timestamp(100) LIMIT 10000`,
    );
    expect(rows.map((row) => String((row as { "QUERY PLAN": unknown })["QUERY PLAN"])).join("\n")).toContain(
      "webhook_inbox_done",
    );
  });

  it("rejects a schema name that is not an identifier, a client that cannot query, and no writes in flight", () => {
    expect(() => createPostgresInbox({ client: pool, schema: 'inbox"; DROP TABLE x; --' })).toThrow(TypeError);
    expect(() => createPostgresInbox({ client: pool, schema: "a.b" })).toThrow(TypeError);
    expect(() => createPostgresInbox({ client: {} as never })).toThrow(TypeError);
    for (const maxConcurrentWrites of [0, -1, 1.5, Number.NaN]) {
      expect(() => createPostgresInbox({ client: pool, maxConcurrentWrites })).toThrow(/maxConcurrentWrites/);
    }
  });

  // Regression: on a single connection the handler's transaction took in the consumer's inserts, acknowledged with a
  // 202 and then rolled back with the handler's failure: the event was gone.
  if (backend.concurrent)
    it("refuses a single connection (a pg PoolClient or Client), where a handler's transaction would take in the adds", async () => {
      const connection = await (pool as SqlPool).connect();
      try {
        expect(() => createPostgresInbox({ client: connection })).toThrow(TypeError);
      } finally {
        connection.release();
      }
    });

  it("writes concurrent adds together, reports a duplicate in a batch, and fails only a row the database refuses", async () => {
    const inbox = await freshInbox();
    const results = await Promise.allSettled([
      ...Array.from({ length: 50 }, (_, i) => inbox.add(event(`g${i}`))),
      inbox.add(event("g49")),
      inbox.add(event("bad", { type: "nul\u0000" })), // text cannot hold NUL
    ]);
    expect(results.slice(0, 50).every((r) => r.status === "fulfilled" && !r.value.duplicate)).toBe(true);
    expect(results[50]).toEqual({ status: "fulfilled", value: { duplicate: true } });
    expect(results[51]?.status).toBe("rejected");
    expect(await inbox.get("g49")).toBeDefined();
    expect(await inbox.get("bad")).toBeUndefined();
  });

  // Regression: a row over a program limit (SQLSTATE class 54) failed its whole batch, honest neighbours included.
  it("fails alone a row over a program limit: an id over the B-tree entry size", async () => {
    const inbox = await freshInbox();
    // Random hex: TOAST cannot compress it under the 2,704-byte B-tree limit (54000).
    const longId = Array.from({ length: 8000 }, () => Math.floor(Math.random() * 16).toString(16)).join("");
    const rows: [string, Promise<unknown>][] = [["first", inbox.add(event("first"))]];
    rows.push(["long", inbox.add(event(longId))], ["honest-1", inbox.add(event("honest-1"))]);
    rows.push(["honest-2", inbox.add(event("honest-2"))]);
    const results = await Promise.allSettled(rows.map(([, added]) => added));
    const statuses = Object.fromEntries(rows.map(([name], i) => [name, results[i]?.status]));
    expect(statuses).toEqual({
      first: "fulfilled",
      long: "rejected",
      "honest-1": "fulfilled",
      "honest-2": "fulfilled",
    });
    for (const id of ["first", "honest-1", "honest-2"]) expect(await inbox.get(id), id).toBeDefined();
  });

  describe("close (shutdown)", () => {
    it("writes the adds taken before it, then refuses one after it with store_closed, writing nothing", async () => {
      const inbox = await freshInbox();
      const taken = ["a", "b", "c"].map((id) => inbox.add(event(id)));
      const closing = inbox.close();
      const refused = inbox.add(event("late"));
      await expect(refused).rejects.toMatchObject({ code: "store_closed", name: "StoreClosedError" });
      expect(inbox.close()).toBe(closing);
      await closing;
      // Written by the time close resolved, before their callers are looked at.
      for (const id of ["a", "b", "c"]) expect(await inbox.get(id), id).toBeDefined();
      expect(await Promise.all(taken)).toEqual([{ duplicate: false }, { duplicate: false }, { duplicate: false }]);
      expect(await inbox.get("late")).toBeUndefined();
      await expect(inbox.add(event("later"))).rejects.toMatchObject({ code: "store_closed" });
    });

    // Regression: an add whose body text PostgreSQL refuses (54001, see below) is written again as its payload
    // serialised; close() closed the writer between the two, so the add taken before it was refused after all.
    it("still writes an add taken before it whose body text had to be written again serialised", async () => {
      const inbox = await freshInbox();
      const body = `{"type":"order.shipped","data":${"[".repeat(20_000)}${"]".repeat(20_000)},"data":{"order":"o_1"}}`;
      const payload = JSON.parse(body) as unknown;
      const added = inbox.add(event("deep", { payload }), { json: new TextEncoder().encode(body) });
      await inbox.close();
      expect((await inbox.get("deep"))?.payload).toEqual({ type: "order.shipped", data: { order: "o_1" } });
      expect(await added).toEqual({ duplicate: false });
    });
  });

  // Regression: a verified body whose deep first member is replaced by a later one of the same name passed the
  // consumer's depth check (JSON.parse keeps the last), and its text overflowed PostgreSQL's json parser: 503 on every
  // redelivery on a server (54001); on PGlite, whose json input runs out of its WASM stack without an error, nothing
  // was inserted and the add answered duplicate (a 202 for an event lost).
  it("stores a body whose text nests past the stack but whose payload does not (a repeated member name) serialised", async () => {
    const inbox = await freshInbox();
    const body = `{"type":"order.shipped","data":${"[".repeat(20_000)}${"]".repeat(20_000)},"data":{"order":"o_1"}}`;
    const payload = JSON.parse(body) as unknown;
    const rows = [
      inbox.add(event("honest-1")),
      inbox.add(event("deep", { payload }), { json: new TextEncoder().encode(body) }),
      inbox.add(event("honest-2")),
    ];
    expect(await Promise.all(rows)).toEqual([{ duplicate: false }, { duplicate: false }, { duplicate: false }]);
    expect((await inbox.get("deep"))?.payload).toEqual({ type: "order.shipped", data: { order: "o_1" } });
    // A redelivery is a duplicate, like any other.
    expect(await inbox.add(event("deep", { payload }), { json: new TextEncoder().encode(body) })).toEqual({
      duplicate: true,
    });
    // Other refusals of the database are still answered as they were.
    const longId = Array.from({ length: 8000 }, () => Math.floor(Math.random() * 16).toString(16)).join("");
    await expect(inbox.add(event(longId), { json: new TextEncoder().encode("{}") })).rejects.toMatchObject({
      code: "54000",
    });
  });

  // Regression: each instance wrote a batch's rows in arrival order. Two instances adding the same ids in opposite
  // orders (a provider's redeliveries spread over them) each waited on the unique index for a row the other had
  // written: PostgreSQL broke the deadlock (40P01) by failing one whole batch, every event in it answered 503.
  if (backend.concurrent)
    it("writes the same ids arriving in opposite orders on two instances without a deadlock, each id once", async () => {
      const { table } = await freshTable();
      const schemaOf = table.slice(1, table.indexOf('"', 1));
      const [first, second] = [
        createPostgresInbox({ client: pool, schema: schemaOf }),
        createPostgresInbox({ client: pool, schema: schemaOf }),
      ];
      // An uncommitted insert of the middle id holds both batches at it once each has written its first row.
      const blocker = await (pool as SqlPool).connect();
      await blocker.query("BEGIN");
      await blocker.query(
        `INSERT INTO ${table} (id, type, scheme, received_at, state, updated_at) VALUES ('dl-2', 't', 's', now(), 'pending', now())`,
      );
      // The first add of each goes alone; the three after it wait and go together in the next statement.
      const added = [
        first.add(event("dl-first")),
        second.add(event("dl-second")),
        ...["dl-1", "dl-2", "dl-3"].map((id) => first.add(event(id))),
        ...["dl-3", "dl-2", "dl-1"].map((id) => second.add(event(id))),
      ];
      for (;;) {
        const { rows } = await pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO %' AND query LIKE '%${schemaOf}%'`,
        );
        if ((rows[0] as { n: number }).n >= 2) break;
      }
      await blocker.query("ROLLBACK");
      blocker.release();
      const results = await Promise.allSettled(added);
      expect(results.filter((result) => result.status === "rejected")).toEqual([]);
      const duplicates = results.map(
        (result) => (result as PromiseFulfilledResult<{ duplicate: boolean }>).value.duplicate,
      );
      expect(duplicates.slice(0, 2)).toEqual([false, false]);
      // Each id stored once, by one of its two adds.
      for (const i of [2, 3, 4]) expect([duplicates[i], duplicates[9 - i]].sort()).toEqual([false, true]);
      const { rows } = await pool.query(`SELECT id FROM ${table} ORDER BY id`);
      expect(rows).toEqual(["dl-1", "dl-2", "dl-3", "dl-first", "dl-second"].map((id) => ({ id })));
    });

  it("writes a burst larger than one statement's batch (256 events) as full batches, every event once", async () => {
    const inbox = await freshInbox();
    const results = await Promise.all(Array.from({ length: 600 }, (_, i) => inbox.add(event(`burst${i}`))));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(600);
    const again = await Promise.all(Array.from({ length: 300 }, (_, i) => inbox.add(event(`burst${i * 2}`))));
    expect(again.every((r) => r.duplicate)).toBe(true);
    expect((await inbox.get("burst599"))?.payload).toEqual(event("burst599").payload);
  });

  it("keeps the verified body's text as the payload when the consumer passes it, and reads back the same value", async () => {
    const own = uniqueName("wh_inbox").toLowerCase();
    schemas.push(own);
    await migrate(pool, inboxMigrations({ schema: own }));
    const inbox = createPostgresInbox({ client: pool, schema: own });
    const body = '{ "order" : "o_1",\n "lines": [1, 2.50, 1e2], "note": "\\u00e9 \\u0000", "order": "o_2" }';
    const payload = JSON.parse(body) as unknown;
    await inbox.add(event("as-sent", { payload }), { json: new TextEncoder().encode(body) });
    // An empty body has no payload: stored as null, as without a source.
    await inbox.add(event("empty", { payload: null }), { json: new Uint8Array(0) });
    const stored = await pool.query(`SELECT id, payload::text AS text FROM "${own}".webhook_inbox ORDER BY id`);
    expect(stored.rows).toEqual([
      { id: "as-sent", text: body },
      { id: "empty", text: "null" },
    ]);
    expect((await inbox.get("as-sent"))?.payload).toEqual(payload);
    expect((await inbox.get("empty"))?.payload).toBeNull();
  });

  it("stores a body PostgreSQL would read otherwise as the text verify read: a byte order mark, bytes that are not UTF-8", async () => {
    const own = uniqueName("wh_inbox").toLowerCase();
    schemas.push(own);
    await migrate(pool, inboxMigrations({ schema: own }));
    const inbox = createPostgresInbox({ client: pool, schema: own });
    const utf8 = (text: string) => [...new TextEncoder().encode(text)];
    const bodies: Record<string, Uint8Array> = {
      bom: Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8('{"a":1}')]),
      latin1: Uint8Array.from([...utf8('{"name":"'), 0xe9, ...utf8('"}')]),
      utf8: Uint8Array.from(utf8('{"é":[1, 2.50], "note": "\\u0000"}')),
    };
    for (const [id, body] of Object.entries(bodies)) {
      // What verify parsed: the body decoded as TextDecoder does (a BOM dropped, a bad sequence replaced), then JSON.
      const text = new TextDecoder().decode(body);
      await inbox.add(event(id, { payload: JSON.parse(text) }), { json: body });
      expect((await inbox.get(id))?.payload).toEqual(JSON.parse(text));
      const { rows } = await pool.query(`SELECT payload::text AS text FROM "${own}".webhook_inbox WHERE id = $1`, [id]);
      expect(rows).toEqual([{ text }]);
    }
  });

  it("compresses payloads with lz4 where the server has it, and migrates where it has not", async () => {
    const own = uniqueName("wh_inbox").toLowerCase();
    schemas.push(own);
    expect(await migrate(pool, inboxMigrations({ schema: own }))).toEqual([
      `${own}:inbox@1`,
      `${own}:inbox@2`,
      `${own}:inbox@3`,
      `${own}:inbox@4`,
    ]);
    const { rows } = await pool.query(
      `SELECT attcompression::text AS method FROM pg_attribute WHERE attrelid = '"${own}".webhook_inbox'::regclass AND attname = 'payload'`,
    );
    // PGlite is built without lz4: its column keeps the default ('' = default_toast_compression).
    expect(rows).toEqual([{ method: backend.name === "postgres" ? "l" : "" }]);
    const inbox = createPostgresInbox({ client: pool, schema: own });
    const large = { note: "é".repeat(20_000) };
    await inbox.add(event("large", { payload: large }));
    expect((await inbox.get("large"))?.payload).toEqual(large);
  });

  it("reads back the same payload whether it was stored from the body's text or serialised (property)", async () => {
    const inbox = await freshInbox();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.constantFrom(0, 2), async (value, indent) => {
        // What verify parsed: the body's text, through JSON (so -0 and the like read as JSON reads them).
        const body = JSON.stringify(value, null, indent);
        const payload = JSON.parse(body) as unknown;
        const id = `p${n++}`;
        await inbox.add(event(`${id}-text`, { payload }), { json: new TextEncoder().encode(body) });
        await inbox.add(event(`${id}-value`, { payload }));
        const [fromText, fromValue] = await Promise.all([inbox.get(`${id}-text`), inbox.get(`${id}-value`)]);
        expect(fromText?.payload).toEqual(payload);
        expect(fromValue?.payload).toEqual(fromText?.payload);
      }),
      { numRuns: 40 },
    );
  });

  it("commits the handler's writes with the done mark, and rolls them back with a failure", async () => {
    const inbox = await freshInbox();
    const effects = `${schema}.${uniqueName("effects")}`;
    await pool.query(`CREATE TABLE ${effects} (event_id text PRIMARY KEY)`);
    let now = 1_700_000_000_000;
    const processor = createWebhookProcessor({
      inbox,
      now: () => now,
      retry: scheduleBackoff([0, ...Array(7).fill(1_000)], 0),
    });
    let fail = true;
    processor.on("order.*", async ({ event, client }) => {
      await client.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, [event.id]);
      if (fail) throw new Error("after the write");
    });
    await inbox.add(event("a", { receivedAt: now }));
    expect(await processor.processDue()).toMatchObject({ claimed: 1, retried: 1 });
    expect(((await pool.query(`SELECT count(*)::int AS n FROM ${effects}`)).rows[0] as { n: number }).n).toBe(0);
    fail = false;
    now += 1_000;
    expect(await processor.processDue()).toMatchObject({ claimed: 1, done: 1 });
    expect((await pool.query(`SELECT event_id FROM ${effects}`)).rows).toEqual([{ event_id: "a" }]);
    expect((await inbox.get("a"))?.state).toBe("done");
  });

  // Regression: claim decoded every column of the rows it took, and threw on a last_error it could not read (a code of
  // a later version, during a rolling deploy, or a hand edit) after the UPDATE had taken the leases: no event claimed
  // with that row was run, and at each lease's end the same batch was taken and dropped again, for ever.
  it("runs an event whose last_error this version cannot read, and the events claimed beside it", async () => {
    const { inbox, table } = await freshTable();
    await inbox.add(event("a", { receivedAt: 1_700_000_000_000 }));
    await inbox.add(event("b", { receivedAt: 1_700_000_000_001 }));
    await pool.query(`UPDATE ${table} SET state = 'failed', last_error = $1::jsonb WHERE id = 'a'`, [
      JSON.stringify({ code: "some_later_code", message: "written by a later version" }),
    ]);
    const handled: string[] = [];
    const processor = createWebhookProcessor({ inbox, now: () => 1_700_000_100_000, retainDoneMs: false });
    processor.on("*", async ({ event }) => void handled.push(event.id));
    expect(await processor.processDue()).toMatchObject({ claimed: 2, done: 2 });
    expect(handled.sort()).toEqual(["a", "b"]);
    expect(await inbox.get("b")).toMatchObject({ state: "done" });
  });

  // Regression: one row a claim could not decode (here a received_at of infinity, no epoch ms) threw from claim after
  // the UPDATE had taken the leases of its whole batch: no event of the batch ran, and at each lease's end the same
  // batch was taken and dropped again, so a poison row stalled the inbox.
  it("dead-letters a claimed row it cannot decode (row_invalid), tells onError, and runs the events beside it", async () => {
    const { inbox, table } = await freshTable();
    for (const id of ["a", "b", "c"]) await inbox.add(event(id, { receivedAt: 1_700_000_000_000 }));
    await pool.query(`UPDATE ${table} SET received_at = 'infinity' WHERE id = 'b'`);
    const handled: string[] = [];
    const errors: unknown[] = [];
    const processor = createWebhookProcessor({
      inbox,
      now: () => 1_700_000_100_000,
      retainDoneMs: false,
      onError: (error) => void errors.push(error),
    });
    processor.on("*", async ({ event }) => void handled.push(event.id));
    expect(await processor.processDue()).toMatchObject({ claimed: 2, done: 2 });
    expect(handled.sort()).toEqual(["a", "c"]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: "WebhookConsumerError", code: "row_invalid" });
    const { rows } = await pool.query(`SELECT state, last_error FROM ${table} WHERE id = 'b'`);
    expect(rows).toEqual([{ state: "dead", last_error: { code: "row_invalid", message: expect.any(String) } }]);
    // Dead, it is claimed no more: the next step finds nothing.
    expect(await processor.processDue()).toMatchObject({ claimed: 0 });
    // Mended by hand, it goes back with retryDeadLetter and runs.
    await pool.query(`UPDATE ${table} SET received_at = now() WHERE id = 'b'`);
    expect(await inbox.get("b")).toMatchObject({ state: "dead", lastError: { code: "row_invalid" } });
    expect(await inbox.retryDeadLetter("b", 1_700_000_100_000)).toBe(true);
    expect(await processor.processDue()).toMatchObject({ claimed: 1, done: 1 });
  });

  // Regression: get and deadLetters threw row_invalid for one row they could not decode, so during a rolling deploy a
  // dead letter written by a later version (a last_error code this one does not know) made every listing fail.
  it("lists a dead row whose last_error a later version wrote, with every other column as stored", async () => {
    const { inbox, table } = await freshTable();
    await inbox.add(event("later", { receivedAt: 1_700_000_000_000 }));
    await inbox.add(event("known", { receivedAt: 1_700_000_000_001 }));
    const stored = { code: "some_later_code", message: "written by a later version" };
    await pool.query(
      `UPDATE ${table} SET state = 'dead', available_at = NULL, attempts = 3, updated_at = to_timestamp(1), last_error = $1::jsonb WHERE id = 'later'`,
      [JSON.stringify(stored)],
    );
    const [known] = await inbox.claim({ now: 1_700_000_000_001, leaseMs: 1_000, limit: 10, owner: "p1" });
    const error = { code: "handler_failed" as const, message: "nope" };
    expect(await inbox.fail(known!, { dead: true, error }, 1_700_000_000_002)).toBe(true);
    const letters = await inbox.deadLetters();
    expect(letters.map((letter) => letter.id)).toEqual(["later", "known"]);
    const later = letters[0];
    expect(later).toMatchObject({
      ...event("later", { receivedAt: 1_700_000_000_000 }),
      state: "dead",
      attempts: 3,
      availableAt: undefined,
      doneAt: undefined,
      lastError: { code: "row_invalid" },
    });
    // The message names the row, the column, and keeps what was stored.
    expect(later?.lastError?.message).toContain('"later"');
    expect(later?.lastError?.message).toContain("last_error");
    expect(later?.lastError?.message).toContain("some_later_code");
    expect(letters[1]).toMatchObject({ id: "known", lastError: error });
    expect(await inbox.get("later")).toEqual(later);
  });

  it("processes every event once across four concurrent processors", async () => {
    const inbox = await freshInbox();
    const effects = `${schema}.${uniqueName("effects")}`;
    await pool.query(`CREATE TABLE ${effects} (event_id text PRIMARY KEY, runs int NOT NULL DEFAULT 1)`);
    for (let i = 0; i < 60; i++) await inbox.add(event(`e${i}`, { receivedAt: 1_700_000_000_000 + i }));
    const processors = [1, 2, 3, 4].map((n) => {
      const p = createWebhookProcessor({ inbox, batchSize: 5, owner: `p${n}`, now: () => 1_700_000_100_000 });
      // ON CONFLICT counts a second run instead of failing it, so a double run would show.
      return p.on("*", async ({ event, client }) => {
        await client.query(
          `INSERT INTO ${effects} (event_id) VALUES ($1) ON CONFLICT (event_id) DO UPDATE SET runs = ${effects}.runs + 1`,
          [event.id],
        );
      });
    });
    for (let round = 0; round < 20; round++) {
      const reports = await Promise.all(processors.map((p) => p.processDue()));
      if (reports.every((r) => r.claimed === 0)) break;
    }
    const rows = (await pool.query(`SELECT event_id, runs FROM ${effects}`)).rows as { runs: number }[];
    expect(rows).toHaveLength(60);
    expect(rows.every((row) => row.runs === 1)).toBe(true);
  });
});
