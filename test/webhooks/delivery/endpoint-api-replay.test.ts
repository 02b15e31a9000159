import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpRequest, HttpResponse } from "../../../src/http/message";
import { migrate } from "../../../src/postgres/index";
import { createRouter } from "../../../src/routing/index";
import type { DeliveryListOptions, DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import { createEndpointAdmin, MAX_REPLAY_BATCH } from "../../../src/webhooks/delivery/endpoint-admin";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import type { EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  deliveryMigrations,
} from "../../../src/webhooks/delivery/postgres/index";
import { defaultDeliveryConfig, transition } from "../../../src/webhooks/delivery/state-machine";
import { databases, type OpenDatabase } from "../../support/databases";
import { uniqueName } from "../../support/services";
import { answered } from "./delivery-stores";

// Regression: replay and re-enabling walked every failed delivery of the endpoint inside one request, so 100,000 of
// them made one request do 100,000 writes (time-outs, memory). Now each request reads and queues one bounded batch.

const T0 = 1_700_000_000_000;
const KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";
const enc = new TextEncoder();

function req(method: string, path: string, body?: string | object): HttpRequest {
  const [p, search = ""] = path.split("?");
  const isForm = typeof body === "string";
  return {
    method,
    path: p as string,
    search,
    query: Object.fromEntries(new URLSearchParams(search)),
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body === undefined
        ? {}
        : { "content-type": isForm ? "application/x-www-form-urlencoded" : "application/json" }),
    },
    body: body === undefined ? new Uint8Array(0) : enc.encode(isForm ? body : JSON.stringify(body)),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON documents.
const parse = (res: HttpResponse) => JSON.parse(String(res.body)) as Record<string, any>;

// The memory queue, counting what each request asks of it: the rows it reads and the writes it makes.
function counted(queue: DeliveryQueue) {
  const work = { rows: 0, updates: 0 };
  const spy: DeliveryQueue = {
    ...queue,
    async list(endpointId: string, options?: DeliveryListOptions) {
      const page = await queue.list(endpointId, options);
      work.rows += page.length;
      return page;
    },
    async update(...args: Parameters<DeliveryQueue["update"]>) {
      work.updates++;
      return queue.update(...args);
    },
  };
  const reset = () => {
    const seen = { ...work };
    work.rows = 0;
    work.updates = 0;
    return seen;
  };
  return { spy, reset };
}

interface Stores {
  endpoints: EndpointStore;
  queue: DeliveryQueue;
}

const memoryStores = (): Stores => {
  const endpoints = createMemoryEndpointStore();
  return { endpoints, queue: createMemoryDeliveryQueue({ endpoints, now: () => T0 }) };
};

// `failures` deliveries out of attempts: after a failed attempt each ("failed"), or parked while the endpoint was
// disabled ("parked").
const setup = (failures: number, kind: "failed" | "parked" = "failed", stores: Stores = memoryStores()) =>
  kind === "parked" ? parkedBehind(failures, 0, stores) : parkedBehind(0, failures, stores);

// `parked` deliveries parked while the endpoint was disabled (the oldest), then `exhausted` newer ones out of attempts:
// what an endpoint that failed for a while after it was re-enabled holds.
async function parkedBehind(parked: number, exhausted: number, stores: Stores = memoryStores()) {
  const { endpoints, queue } = stores;
  const { spy, reset } = counted(queue);
  const options = { endpoints, queue: spy, resolve: false as const, now: () => T0, apiKeys: [KEY] };
  const admin = createEndpointAdmin(options);
  const created = await admin.create({ url: "https://hooks.example.com/in", enabled_events: ["*"] });
  if (!created.ok) throw new Error(created.code);
  const id = created.value.id;
  const total = parked + exhausted;
  // All at once, the outcomes too: on PostgreSQL the publishes share commits and the outcomes are stored a batch a
  // statement, where one at a time each paid a statement and a commit of its own. Each event has its creation time,
  // so the deliveries the requests find are the same.
  await Promise.all(
    Array.from({ length: total }, (_, i) =>
      queue.publish(createEvent({ id: `evt_${i}`, type: "order.created", data: { i } }), { now: T0 - total + i }),
    ),
  );
  const noRetry = { ...defaultDeliveryConfig, retry: () => undefined };
  const failed = { type: "attempt", result: { kind: "response", status: 500, durationMs: 1 } } as const;
  const claims = await queue.claim({ limit: total, now: T0, leaseMs: 60_000 });
  expect(claims).toHaveLength(total);
  const parkedIds = new Set<string>();
  const stored = await Promise.all(
    claims.map((claim) => {
      const isParked = claim.createdAt < T0 - exhausted;
      if (isParked) parkedIds.add(claim.id);
      const event = isParked ? ({ type: "endpoint_disabled" } as const) : failed;
      return queue.complete(claim, transition(claim.state, event, T0, noRetry).state);
    }),
  );
  expect(stored.every(Boolean)).toBe(true);
  const router = createRouter();
  declareEndpointApi(router, options);
  // The deliveries parked while disabled that are pending again, and the others queued again (none, if right).
  const queued = async () => {
    const pending = await queue.list(id, { status: ["pending"], limit: 1_000_000 });
    const back = pending.filter((d) => parkedIds.has(d.id)).length;
    return { parked: back, others: pending.length - back };
  };
  return { id, queue, admin, handler: answered(router.handler()), reset, endpoints, queued };
}

const statusCount = async (queue: DeliveryQueue, id: string, status: "pending" | "failed" | "exhausted") =>
  (await queue.list(id, { status: [status], limit: 1_000_000 })).length;

describe("replay, one bounded batch per request", () => {
  it("100,000 failed deliveries: each request reads and queues at most one batch; repeating with next_starting_after queues them all, once", async () => {
    const total = 100_000;
    const { id, queue, handler, reset } = await setup(total);
    reset();
    let replayed = 0;
    let requests = 0;
    let after: string | undefined;
    for (;;) {
      const body = after === undefined ? { since: 0 } : { since: 0, starting_after: after };
      const res = await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, body));
      expect(res.status).toBe(202);
      const work = reset();
      expect(work.rows).toBeLessThanOrEqual(MAX_REPLAY_BATCH + 1);
      expect(work.updates).toBeLessThanOrEqual(MAX_REPLAY_BATCH);
      const answer = parse(res);
      replayed += answer.replayed;
      requests++;
      if (!answer.has_more) {
        expect(answer.next_starting_after).toBeNull();
        break;
      }
      after = answer.next_starting_after;
    }
    expect(replayed).toBe(total);
    expect(requests).toBe(total / MAX_REPLAY_BATCH);
    expect(await statusCount(queue, id, "pending")).toBe(total);
    // Safe to repeat: what was queued again is pending, which no replay matches.
    const again = parse(await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, { since: 0 })));
    expect(again).toEqual({ object: "replay", replayed: 0, has_more: false, next_starting_after: null });
  }, 120_000);

  it("takes limit and starting_after in the query or the body (JSON or form), newest first", async () => {
    const { id, queue, handler } = await setup(5);
    const first = parse(await handler(req("POST", `/v1/webhook_endpoints/${id}/replay?since=0&limit=2`)));
    expect(first).toMatchObject({ replayed: 2, has_more: true });
    const newest = await queue.list(id, { limit: 2 });
    expect(newest.every((d) => d.state.status === "pending")).toBe(true);
    expect(first.next_starting_after).toBe(newest[1]?.id);
    const second = parse(
      await handler(
        req(
          "POST",
          `/v1/webhook_endpoints/${id}/replay`,
          `since=0&limit=2&starting_after=${first.next_starting_after}`,
        ),
      ),
    );
    expect(second).toMatchObject({ replayed: 2, has_more: true });
    const third = parse(
      await handler(
        req("POST", `/v1/webhook_endpoints/${id}/replay`, {
          since: 0,
          limit: 2,
          starting_after: second.next_starting_after,
        }),
      ),
    );
    expect(third).toEqual({ object: "replay", replayed: 1, has_more: false, next_starting_after: null });
    expect(await statusCount(queue, id, "pending")).toBe(5);
  });

  it("a batch of deliveries leased by a worker does not stall the walk: the cursor passes them", async () => {
    const { id, queue, handler } = await setup(4);
    // The two newest are claimed again (a worker's lease): replay passes over them.
    const newest = await queue.list(id, { limit: 2 });
    for (const d of newest)
      await queue.update(d.id, ["exhausted"], { ...d.state, status: "failed", nextAttemptAt: T0 }, T0);
    await queue.claim({ limit: 2, now: T0, leaseMs: 60_000 });
    const first = parse(await handler(req("POST", `/v1/webhook_endpoints/${id}/replay?since=0&limit=2`)));
    expect(first).toMatchObject({ replayed: 0, has_more: true });
    const second = parse(
      await handler(
        req("POST", `/v1/webhook_endpoints/${id}/replay?since=0&limit=2&starting_after=${first.next_starting_after}`),
      ),
    );
    expect(second).toMatchObject({ replayed: 2, has_more: false });
  });

  it.each([["0"], ["1001"], ["1.5"], ["x"]])("refuses limit=%s with 400, queuing nothing", async (limit) => {
    const { id, queue, handler } = await setup(2);
    const res = await handler(req("POST", `/v1/webhook_endpoints/${id}/replay?since=0&limit=${limit}`));
    expect(res.status).toBe(400);
    expect(await statusCount(queue, id, "pending")).toBe(0);
  });

  it.each([[0], [1001], [1.5], ["5"]])("refuses a JSON limit of %j with 422 at /limit", async (limit) => {
    const { id, queue, handler } = await setup(2);
    const res = await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, { since: 0, limit }));
    expect(res.status).toBe(422);
    expect(parse(res).errors[0].pointer).toBe("/limit");
    expect(await statusCount(queue, id, "pending")).toBe(0);
  });

  it("answers 400 invalid_cursor for a starting_after that names no delivery of the endpoint", async () => {
    const { id, handler } = await setup(2);
    for (const after of ["dl_nope", "bad id"]) {
      const res = await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, { since: 0, starting_after: after }));
      expect(res.status).toBe(400);
      expect(parse(res).code).toBe("invalid_cursor");
    }
  });

  it("the admin refuses a limit outside 1 to 1000 with a TypeError, queuing nothing", async () => {
    const { id, queue, admin } = await setup(2);
    for (const limit of [0, 1001, 1.5, Number.NaN]) {
      await expect(admin.replay(id, 0, { limit })).rejects.toThrow(/EndpointAdmin.replay: limit must be/);
    }
    expect(await statusCount(queue, id, "pending")).toBe(0);
  });
});

describe("re-enabling, one bounded batch", () => {
  it("queues at most one batch of the deliveries parked while disabled; a replay reaches the rest", async () => {
    const total = 2_500;
    const { id, queue, handler, reset, endpoints } = await setup(total, "parked");
    await endpoints.update(id, { status: "disabled", disabledReason: "manual", disabledAt: T0 });
    reset();
    const res = await handler(req("POST", `/v1/webhook_endpoints/${id}`, { status: "enabled" }));
    expect(res.status).toBe(200);
    const work = reset();
    expect(work.rows).toBeLessThanOrEqual(MAX_REPLAY_BATCH + 1);
    expect(work.updates).toBeLessThanOrEqual(MAX_REPLAY_BATCH);
    expect(await statusCount(queue, id, "pending")).toBe(MAX_REPLAY_BATCH);
    let after: string | undefined;
    for (;;) {
      const answer = parse(
        await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, { since: 0, starting_after: after })),
      );
      if (!answer.has_more) break;
      after = answer.next_starting_after;
    }
    expect(await statusCount(queue, id, "pending")).toBe(total);
  });
});

describe("replay status: failed, exhausted or parked, with the same batches and cursor", () => {
  // 3 plain failures (oldest), 3 exhausted by their attempts, then 3 parked while disabled (newest).
  async function mixed() {
    const stores = memoryStores();
    const { endpoints, queue } = stores;
    const options = { endpoints, queue, resolve: false as const, now: () => T0, apiKeys: [KEY] };
    const admin = createEndpointAdmin(options);
    const created = await admin.create({ url: "https://hooks.example.com/in", enabled_events: ["*"] });
    if (!created.ok) throw new Error(created.code);
    const id = created.value.id;
    const noRetry = { ...defaultDeliveryConfig, retry: () => undefined };
    const failed = { kind: "response", status: 500, durationMs: 1 } as const;
    const kinds = ["failed", "failed", "failed", "exhausted", "exhausted", "exhausted", "parked", "parked", "parked"];
    const byEvent = new Map<string, string>();
    for (const [i, kind] of kinds.entries()) {
      await queue.publish(createEvent({ id: `evt_${i}`, type: "order.created", data: { i } }), { now: T0 - 100 + i });
      byEvent.set(`evt_${i}`, kind);
    }
    for (const claim of await queue.claim({ limit: 100, now: T0, leaseMs: 60_000 })) {
      const kind = byEvent.get(claim.eventId);
      const event =
        kind === "parked" ? ({ type: "endpoint_disabled" } as const) : ({ type: "attempt", result: failed } as const);
      const config = kind === "failed" ? defaultDeliveryConfig : noRetry;
      await queue.complete(claim, transition(claim.state, event, T0, config).state);
    }
    const router = createRouter();
    declareEndpointApi(router, options);
    const events = async (status: "pending" | "failed" | "exhausted") =>
      (await queue.list(id, { status: [status], limit: 100 })).map((d) => byEvent.get(d.eventId)).sort();
    return { id, admin, endpoints, handler: answered(router.handler()), events };
  }

  async function replayAll(handler: ReturnType<typeof answered>, id: string, status: string, limit: number) {
    let replayed = 0;
    let after: string | undefined;
    for (;;) {
      const body = { since: 0, status, limit, ...(after === undefined ? {} : { starting_after: after }) };
      const res = await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, body));
      expect(res.status).toBe(202);
      const answer = parse(res);
      replayed += answer.replayed;
      if (!answer.has_more) return replayed;
      after = answer.next_starting_after;
    }
  }

  it("status=parked queues again only the deliveries parked while disabled, paging with starting_after", async () => {
    const { id, handler, events } = await mixed();
    expect(await replayAll(handler, id, "parked", 2)).toBe(3);
    expect(await events("pending")).toEqual(["parked", "parked", "parked"]);
    expect(await events("exhausted")).toEqual(["exhausted", "exhausted", "exhausted"]);
    expect(await events("failed")).toEqual(["failed", "failed", "failed"]);
  });

  it.each([["failed"], ["exhausted"]])("status=%s queues again only those", async (status) => {
    const { id, handler, events } = await mixed();
    const expected = status === "failed" ? 3 : 6;
    expect(await replayAll(handler, id, status, 2)).toBe(expected);
    expect((await events("pending")).length).toBe(expected);
    expect(await events(status as "failed" | "exhausted")).toEqual([]);
  });

  it("takes status in the query too; the default is failed and exhausted, as before", async () => {
    const one = await mixed();
    const res = await one.handler(req("POST", `/v1/webhook_endpoints/${one.id}/replay?since=0&status=parked`));
    expect(parse(res)).toMatchObject({ replayed: 3, has_more: false });
    const all = await mixed();
    expect(await replayAll(all.handler, all.id, undefined as unknown as string, 1000)).toBe(9);
  });

  it("refuses another status with 400 (query) or 422 at /status (body), queuing nothing; the admin with a TypeError", async () => {
    const { id, handler, admin, events } = await mixed();
    expect((await handler(req("POST", `/v1/webhook_endpoints/${id}/replay?since=0&status=pending`))).status).toBe(400);
    const res = await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, { since: 0, status: "delivered" }));
    expect(res.status).toBe(422);
    expect(parse(res).errors[0].pointer).toBe("/status");
    await expect(admin.replay(id, 0, { status: "pending" as never })).rejects.toThrow(
      /EndpointAdmin.replay: status must be/,
    );
    expect(await events("pending")).toEqual([]);
  });

  it("status=parked queues the parked deliveries behind 30 newer exhausted ones on its first page of 10 (regression: replayed 0, has_more true, page after page)", async () => {
    const { id, admin, queued, reset } = await parkedBehind(5, 30);
    reset();
    const first = await admin.replay(id, 0, { status: "parked", limit: 10 });
    expect(first).toEqual({ ok: true, value: { replayed: 5, hasMore: false } });
    expect(reset().rows).toBeLessThanOrEqual(6);
    expect(await queued()).toEqual({ parked: 5, others: 0 });
    // Through the API, on a fresh endpoint: the same first page.
    const api = await parkedBehind(5, 30);
    const res = await api.handler(req("POST", `/v1/webhook_endpoints/${api.id}/replay?since=0&status=parked&limit=10`));
    expect(parse(res)).toEqual({ object: "replay", replayed: 5, has_more: false, next_starting_after: null });
    expect(await api.queued()).toEqual({ parked: 5, others: 0 });
  });

  it("status=parked pages parked deliveries only: limit 2 of 5 behind newer exhausted ones gives 2, 2, 1", async () => {
    const { id, admin, queued } = await parkedBehind(5, 30);
    const pages: { replayed: number; hasMore: boolean }[] = [];
    let next: string | undefined;
    do {
      const page = await admin.replay(id, 0, { status: "parked", limit: 2, startingAfter: next });
      if (!page.ok) throw new Error(page.code);
      pages.push({ replayed: page.value.replayed, hasMore: page.value.hasMore });
      next = page.value.next;
    } while (pages.at(-1)?.hasMore);
    expect(pages.map((page) => page.replayed)).toEqual([2, 2, 1]);
    expect(await queued()).toEqual({ parked: 5, others: 0 });
  });

  it("re-enabling queues the deliveries parked behind more than MAX_REPLAY_BATCH newer exhausted ones (regression: only the parked among the newest 1000 exhausted)", async () => {
    const { id, handler, endpoints, queued, reset } = await parkedBehind(5, MAX_REPLAY_BATCH + 20);
    await endpoints.update(id, { status: "disabled", disabledReason: "manual", disabledAt: T0 });
    reset();
    const res = await handler(req("POST", `/v1/webhook_endpoints/${id}`, { status: "enabled" }));
    expect(res.status).toBe(200);
    expect(reset().rows).toBeLessThanOrEqual(6);
    expect(await queued()).toEqual({ parked: 5, others: 0 });
  });

  it("after re-enabling, status=parked reaches the parked deliveries the re-enabling batch did not", async () => {
    const total = MAX_REPLAY_BATCH + 7;
    const { id, queue, handler, endpoints } = await setup(total, "parked");
    await endpoints.update(id, { status: "disabled", disabledReason: "manual", disabledAt: T0 });
    await handler(req("POST", `/v1/webhook_endpoints/${id}`, { status: "enabled" }));
    expect(await statusCount(queue, id, "pending")).toBe(MAX_REPLAY_BATCH);
    expect(await replayAll(handler, id, "parked", MAX_REPLAY_BATCH)).toBe(7);
    expect(await statusCount(queue, id, "pending")).toBe(total);
  });

  it("the OpenAPI document declares status on replay, in the query and the body", () => {
    const router = declareEndpointApi(createRouter(), {
      endpoints: createMemoryEndpointStore(),
      queue: createMemoryDeliveryQueue({ endpoints: createMemoryEndpointStore() }),
      apiKeys: [KEY],
      resolve: false,
    });
    // biome-ignore lint/suspicious/noExplicitAny: the test reads the generated document as arbitrary JSON.
    const document = router.openapi({ title: "t", version: "1" }) as Record<string, any>;
    const operation = document.paths["/v1/webhook_endpoints/{endpoint_id}/replay"].post;
    const inQuery = operation.parameters.find((p: { name: string }) => p.name === "status");
    expect(inQuery.schema.enum).toEqual(["failed", "exhausted", "parked"]);
    const body = operation.requestBody.content["application/json"].schema;
    const resolved = body.$ref === undefined ? body : document.components.schemas[body.$ref.split("/").at(-1)];
    expect(JSON.stringify(resolved)).toContain("parked");
  });
});

describe.each(databases())("replay on PostgreSQL ($name): the same bounded batches", (backend) => {
  let open: OpenDatabase;
  let schema: string;
  beforeAll(async () => {
    open = await backend.open({ max: 4 });
    schema = uniqueName("whreplay").toLowerCase();
    await migrate(open.db, deliveryMigrations({ schema }));
  });
  afterAll(async () => {
    await open.db.query(`DROP SCHEMA "${schema}" CASCADE`);
    await open.close();
  });

  it("1,200 failed deliveries: two requests of at most 1,000, each reading one batch; a repeat queues nothing", async () => {
    const total = 1_200;
    const endpoints = createPostgresEndpointStore({ client: open.db, schema });
    const stores = { endpoints, queue: createPostgresDeliveryQueue({ client: open.db, schema, now: () => T0 }) };
    const { id, queue, handler, reset } = await setup(total, "failed", stores);
    reset();
    const answers: Record<string, unknown>[] = [];
    let after: string | undefined;
    do {
      const res = await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, { since: 0, starting_after: after }));
      expect(res.status).toBe(202);
      const work = reset();
      expect(work.rows).toBeLessThanOrEqual(MAX_REPLAY_BATCH + 1);
      expect(work.updates).toBeLessThanOrEqual(MAX_REPLAY_BATCH);
      answers.push(parse(res));
      after = answers.at(-1)?.["next_starting_after"] as string | undefined;
    } while (answers.at(-1)?.["has_more"] === true);
    expect(answers.map((answer) => answer["replayed"])).toEqual([1000, 200]);
    expect(await statusCount(queue, id, "pending")).toBe(total);
    const again = parse(await handler(req("POST", `/v1/webhook_endpoints/${id}/replay`, { since: 0 })));
    expect(again).toEqual({ object: "replay", replayed: 0, has_more: false, next_starting_after: null });
  }, 120_000);

  it("re-enabling and status=parked queue the deliveries parked behind 1,020 newer exhausted ones, reading only those", async () => {
    // A schema of its own: the case before left deliveries due that a claim here would take.
    const own = uniqueName("whparked").toLowerCase();
    await migrate(open.db, deliveryMigrations({ schema: own }));
    try {
      const endpoints = createPostgresEndpointStore({ client: open.db, schema: own });
      const stores = { endpoints, queue: createPostgresDeliveryQueue({ client: open.db, schema: own, now: () => T0 }) };
      const { id, handler, queued, reset } = await parkedBehind(5, MAX_REPLAY_BATCH + 20, stores);
      reset();
      const first = parse(
        await handler(req("POST", `/v1/webhook_endpoints/${id}/replay?since=0&status=parked&limit=2`)),
      );
      expect(first).toMatchObject({ replayed: 2, has_more: true });
      expect(reset().rows).toBe(3);
      await endpoints.update(id, { status: "disabled", disabledReason: "manual", disabledAt: T0 });
      reset();
      const res = await handler(req("POST", `/v1/webhook_endpoints/${id}`, { status: "enabled" }));
      expect(res.status).toBe(200);
      expect(reset().rows).toBe(3);
      expect(await queued()).toEqual({ parked: 5, others: 0 });
    } finally {
      await open.db.query(`DROP SCHEMA "${own}" CASCADE`);
    }
  }, 60_000);
});
