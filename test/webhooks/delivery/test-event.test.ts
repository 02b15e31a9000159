/**
 * The test event (`POST /{endpoint_id}/test`, `EndpointAdmin.sendTest`): an endpoint's owner asks for one and gets
 * exactly one signed delivery of `webhook_endpoint.test` at that endpoint alone, whatever its enabled_events, on the
 * memory stores and on PostgreSQL, through the real delivery worker.
 */
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Handler, HttpRequest, HttpResponse } from "../../../src/http/message";
import { MemoryIdempotencyStore } from "../../../src/idempotency/memory/index";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi, type EndpointApiOptions } from "../../../src/webhooks/delivery/endpoint-api";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { defineEvents, TEST_EVENT_TYPE, testEventDataSchema } from "../../../src/webhooks/delivery/index";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { OPERATOR } from "../../../src/webhooks/delivery/tenant";
import { type Backend, databases } from "../../support/databases";
import { answered, type DeliveryStores, deliverAll, postgresDeliveryStores } from "./delivery-stores";
import { localServer } from "./node/local-server";

const KEY = "sk_test_operator_9dK2mQ7xV4bN1cZ8";
const ACME_KEY = "sk_test_acme_3hT6yP0wL5rJ8sF2";
const BASE = "/v1/webhook_endpoints";
const urlPolicy = { allowHttp: true, allow: ["127.0.0.1"] };
const enc = new TextEncoder();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const postgresStores = (backend: Backend): Promise<DeliveryStores> =>
  postgresDeliveryStores(backend, cleanups, { prefix: "wh_test_event" });

function req(method: string, path: string, key: string, body?: object, headers: Record<string, string> = {}) {
  const request: HttpRequest = {
    method,
    path,
    search: "",
    query: {},
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? new Uint8Array(0) : enc.encode(JSON.stringify(body)),
  };
  return request;
}

function api(stores: DeliveryStores, options: Partial<EndpointApiOptions> = {}): Handler {
  const handler = declareEndpointApi(createRouter(), {
    ...stores,
    apiKeys: [KEY, ACME_KEY],
    resolve: false,
    urlPolicy,
    tenant: (request) => (request.headers.authorization === `Bearer ${ACME_KEY}` ? "acme" : OPERATOR),
    ...options,
  }).handler();
  return answered(handler);
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON documents.
const parse = (res: HttpResponse) => JSON.parse(text(res)) as Record<string, any>;
// A replayed answer's body is bytes, a first answer's a string.
const text = (res: HttpResponse) =>
  typeof res.body === "string" ? res.body : new TextDecoder().decode(res.body ?? new Uint8Array(0));

const backends: [string, () => Promise<DeliveryStores>][] = [
  [
    "memory",
    async () => {
      const endpoints = createMemoryEndpointStore();
      return { endpoints, queue: createMemoryDeliveryQueue({ endpoints }) };
    },
  ],
  ...databases().map((backend): [string, () => Promise<DeliveryStores>] => [
    backend.name,
    () => postgresStores(backend),
  ]),
];

describe.each(backends)("test events (%s)", (_name, makeStores) => {
  it("queue one webhook_endpoint.test for the endpoint alone, whatever it subscribes to; the worker delivers it signed with the endpoint's secret (one given at creation)", async () => {
    const stores = await makeStores();
    const handler = api(stores);
    const receiver = await localServer();
    cleanups.push(receiver.close);
    // A secret kept from another sender: the consumer verifies with the one it already has.
    const given = `whsec_${Buffer.alloc(32, 5).toString("base64")}`;
    const created = await handler(
      req("POST", BASE, ACME_KEY, {
        url: receiver.url,
        enabled_events: ["order.shipped"],
        secret: given,
        headers: { "X-Gateway-Key": "k_1" },
      }),
    );
    expect(created.status).toBe(201);
    const endpoint = parse(created);
    // Another endpoint of the same tenant subscribed to every type, and an operator's endpoint for every tenant: a
    // test event is for the one endpoint asked about.
    const other = await localServer();
    cleanups.push(other.close);
    await handler(req("POST", BASE, ACME_KEY, { url: other.url, enabled_events: ["*"] }));
    await handler(req("POST", BASE, KEY, { url: other.url, enabled_events: ["*"], all_tenants: true }));

    const sent = await handler(req("POST", `${BASE}/${endpoint.id}/test`, ACME_KEY));
    expect(sent.status).toBe(202);
    const delivery = parse(sent);
    expect(delivery).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event_type: TEST_EVENT_TYPE,
    });
    expect(delivery.status).toBe("pending");
    const again = parse(await handler(req("POST", `${BASE}/${endpoint.id}/test`, ACME_KEY)));
    // A new event each time: two requests, two deliveries.
    expect(again.id).not.toBe(delivery.id);
    expect(again.event_id).not.toBe(delivery.event_id);
    const listed = parse(await handler(req("GET", `${BASE}/${endpoint.id}/deliveries`, ACME_KEY)));
    expect(listed.data.map((d: { id: string }) => d.id).sort()).toEqual([delivery.id, again.id].sort());

    await deliverAll(stores, cleanups);
    expect(other.received).toEqual([]);
    const verifier = new Webhook(given);
    // The endpoint's own header field reaches its receiver on every request, unsigned, beside the signature.
    expect(receiver.received.map((r) => r.headers["x-gateway-key"])).toEqual(["k_1", "k_1"]);
    const events = receiver.received.map((r) => verifier.verify(r.body, r.headers as Record<string, string>));
    expect(events.map((e) => (e as { id: string }).id).sort()).toEqual([delivery.event_id, again.event_id].sort());
    for (const event of events) {
      expect(event).toMatchObject({ type: TEST_EVENT_TYPE, data: { endpoint_id: endpoint.id } });
    }
    for (const id of [delivery.id, again.id]) expect((await stores.queue.get(id))?.state.status).toBe("delivered");
    const log = parse(await handler(req("GET", `${BASE}/${endpoint.id}/attempts`, ACME_KEY)));
    expect(log.data).toHaveLength(2);
  });

  it("a disabled endpoint is 409 endpoint_disabled, one that does not exist or is another tenant's a 404, and nothing is queued", async () => {
    const stores = await makeStores();
    const handler = api(stores);
    const mine = parse(
      await handler(req("POST", BASE, ACME_KEY, { url: "http://127.0.0.1:9/h", enabled_events: ["*"] })),
    );
    const operators = parse(
      await handler(req("POST", BASE, KEY, { url: "http://127.0.0.1:9/h", enabled_events: ["*"] })),
    );
    await handler(req("POST", `${BASE}/${mine.id}`, ACME_KEY, { status: "disabled" }));
    const disabled = await handler(req("POST", `${BASE}/${mine.id}/test`, ACME_KEY));
    expect(disabled.status).toBe(409);
    expect(disabled.headers["content-type"]).toBe("application/problem+json");
    expect(parse(disabled).code).toBe("endpoint_disabled");
    const theirs = await handler(req("POST", `${BASE}/${operators.id}/test`, ACME_KEY));
    const missing = await handler(req("POST", `${BASE}/we_missing/test`, ACME_KEY));
    expect([theirs.status, missing.status]).toEqual([404, 404]);
    expect(text(theirs)).toBe(text(missing));
    expect(await stores.queue.claim({ limit: 10, now: Date.now() + 1_000, leaseMs: 1_000 })).toEqual([]);
    // The operator may send one to any endpoint: its own, and a tenant's once re-enabled.
    expect((await handler(req("POST", `${BASE}/${operators.id}/test`, KEY))).status).toBe(202);
    await handler(req("POST", `${BASE}/${mine.id}`, KEY, { status: "enabled" }));
    expect((await handler(req("POST", `${BASE}/${mine.id}/test`, KEY))).status).toBe(202);
    const queued = await stores.queue.claim({ limit: 10, now: Date.now() + 1_000, leaseMs: 1_000 });
    expect(queued.map((d) => d.endpointId).sort()).toEqual([mine.id, operators.id].sort());
  });
});

describe("test events through the API", () => {
  it("with Idempotency-Key, a retried request queues one test event", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const handler = api({ endpoints, queue }, { idempotency: { store: new MemoryIdempotencyStore() } });
    const e = parse(await handler(req("POST", BASE, KEY, { url: "http://127.0.0.1:9/h", enabled_events: ["*"] })));
    const key = { "idempotency-key": "test-1" };
    const first = await handler(req("POST", `${BASE}/${e.id}/test`, KEY, undefined, key));
    const retried = await handler(req("POST", `${BASE}/${e.id}/test`, KEY, undefined, key));
    expect(retried.headers["idempotent-replayed"]).toBe("true");
    expect(text(retried)).toBe(text(first));
    expect(await queue.list(e.id)).toHaveLength(1);
  });

  it("is declared in OpenAPI: 202 with the delivery, 409 for a disabled endpoint", () => {
    const endpoints = createMemoryEndpointStore();
    const router = declareEndpointApi(createRouter(), {
      endpoints,
      queue: createMemoryDeliveryQueue({ endpoints }),
      apiKeys: [KEY],
      resolve: false,
    });
    const doc = router.openapi({ title: "t", version: "1" }) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }>; summary?: string }>>;
    };
    const operation = doc.paths[`${BASE}/{endpoint_id}/test`]?.post;
    expect(operation?.summary).toBe("Send a test event");
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(["202", "404", "409"]));
    expect(operation?.responses["202"]?.content).toBeDefined();
  });

  it("testEventDataSchema in a catalog lists the event under OpenAPI's webhooks, and its envelope takes what sendTest sends", async () => {
    const events = defineEvents({
      "order.created": z.object({ id: z.string() }),
      [TEST_EVENT_TYPE]: testEventDataSchema,
    });
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const router = declareEndpointApi(createRouter(), { endpoints, queue, apiKeys: [KEY], resolve: false, events });
    const doc = router.openapi({ title: "t", version: "1" }, { webhooks: events });
    expect(Object.keys(doc.webhooks ?? {})).toContain(TEST_EVENT_TYPE);
    const handler = api({ endpoints, queue }, { events });
    const e = parse(
      await handler(req("POST", BASE, KEY, { url: "http://127.0.0.1:9/h", enabled_events: ["order.created"] })),
    );
    const sent = parse(await handler(req("POST", `${BASE}/${e.id}/test`, KEY)));
    const payload = JSON.parse((await queue.get(sent.id))?.payload ?? "null");
    expect(events.envelope(TEST_EVENT_TYPE).parse(payload).data).toEqual({ endpoint_id: e.id });
  });

  it("a test event published by hand is the same: createEvent of the type, to one endpoint", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const handler = api({ endpoints, queue });
    const e = parse(await handler(req("POST", BASE, KEY, { url: "http://127.0.0.1:9/h", enabled_events: ["a.b"] })));
    const event = createEvent({ type: TEST_EVENT_TYPE, data: { endpoint_id: e.id } });
    expect((await queue.publish(event)).deliveryIds).toEqual([]);
    expect((await queue.publish(event, { endpointId: e.id })).deliveryIds).toHaveLength(1);
  });
});
