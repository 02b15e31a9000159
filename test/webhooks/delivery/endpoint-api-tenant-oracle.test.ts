/**
 * The endpoint API's promise to a tenant, on both stores: another tenant's id (or the operator's, `all_tenants`
 * included) answers exactly as an id that does not exist, whatever the conditional or Idempotency-Key header sent
 * with it, and whatever list it is the cursor or filter of; and such a request changes nothing, queues nothing. The
 * memory-only suites (endpoint-api.test.ts "tenants", endpoint-api-tenant.test.ts) send these ids without headers;
 * this matrix runs them with every precondition field against PostgreSQL too, where the cursors are SQL subqueries.
 */
import { afterEach, describe, expect, it } from "vitest";
import { adapt } from "../../../src/fetch/index";
import { MemoryIdempotencyStore } from "../../../src/idempotency/memory/index";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { OPERATOR } from "../../../src/webhooks/delivery/tenant";
import { databases } from "../../support/databases";
import { memoryDeliveryStores, postgresDeliveryStores } from "./delivery-stores";
import { failOnce } from "./fail-once";

const KEYS = { acme: "sk_acme_oracle", globex: "sk_globex_oracle", operator: "sk_operator_oracle" } as const;
type Caller = keyof typeof KEYS;
const BASE = "https://api.example.com/v1/webhook_endpoints";
// Well-formed ids that name nothing: looked up as another tenant's are.
const NO_ENDPOINT = "we_AAAAAAAAAAAAAAAAAAAAAA";
const NO_DELIVERY = "dlv_00000000000000000000000000000000";
const NO_EVENT = "evt_00000000000000000000000000000000";

// Claimed, failed once (a 500) and exhausted: retry and replay would act on it.
const EXHAUSTED = { status: "exhausted", nextAttemptAt: null } as const;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe.each([
  { name: "memory", stores: memoryDeliveryStores },
  ...databases().map((backend) => ({
    name: backend.name,
    stores: () => postgresDeliveryStores(backend, cleanups, { prefix: "wh_oracle", max: 4 }),
  })),
])("another tenant's ids are no oracle ($name)", ({ stores }) => {
  it("every route, under every precondition, answers a foreign id as a missing one and changes nothing", async () => {
    const { endpoints, queue } = await stores();
    const now = Date.now();
    let keys = 0;
    const app = adapt(
      declareEndpointApi(createRouter(), {
        endpoints,
        queue,
        apiKeys: Object.values(KEYS),
        resolve: false,
        idempotency: { store: new MemoryIdempotencyStore() },
        tenant: (request) => {
          const key = (request.headers.authorization ?? "").slice("Bearer ".length);
          return key === KEYS.acme ? "acme" : key === KEYS.globex ? "globex" : OPERATOR;
        },
      }).handler(),
    );
    // A write carries a body its schema takes, so that the request reaches the look-up (a 422 would answer first).
    const BODIES: Record<string, [string, string]> = {
      POST: ["application/x-www-form-urlencoded", "description=taken"],
      PATCH: ["application/merge-patch+json", '{"description":"taken"}'],
    };
    // All a client sees of an answer: status, header fields, body.
    const send = async (caller: Caller, method: string, path: string, headers: Record<string, string>) => {
      const [type, body] = (/^\/[^/?]+$/.test(path) && BODIES[method]) || [];
      const response = await app(
        new Request(`${BASE}${path}`, {
          method,
          headers: { authorization: `Bearer ${KEYS[caller]}`, ...(type ? { "content-type": type } : {}), ...headers },
          body,
        }),
      );
      return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
    };
    const create = async (caller: Caller, extra = "") => {
      const response = await app(
        new Request(BASE, {
          method: "POST",
          headers: { authorization: `Bearer ${KEYS[caller]}`, "content-type": "application/x-www-form-urlencoded" },
          body: `url=${encodeURIComponent("https://hooks.example.com/in")}&enabled_events[]=*${extra}`,
        }),
      );
      expect(response.status).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    const acme = await create("acme");
    const globex = await create("globex");
    const operator = await create("operator");
    const everyTenant = await create("operator", "&all_tenants=true");
    // An older delivery of globex's own: a page placed after another endpoint's delivery would show it.
    await queue.publish(createEvent({ type: "order.created", data: {} }), { now: now - 1_000, tenant: "globex" });
    await failOnce(queue, globex, now, EXHAUSTED);
    const event = createEvent({ type: "order.created", data: {} });
    // acme's event reaches acme's endpoint and the operator's all_tenants one: both foreign to globex.
    expect((await queue.publish(event, { now, tenant: "acme" })).deliveryIds).toHaveLength(2);
    await failOnce(queue, acme, now, EXHAUSTED);
    await failOnce(queue, everyTenant, now, EXHAUSTED);
    const [acmeDelivery] = await queue.list(acme);
    const etag = (await send("acme", "GET", `/${acme}`, {})).headers.etag as string;
    const snapshot = async () => ({
      endpoints: await endpoints.list({ limit: 100 }),
      deliveries: await Promise.all([acme, globex, operator, everyTenant].map((id) => queue.list(id))),
      attempts: await Promise.all([acme, globex, everyTenant].map((endpointId) => queue.attempts({ endpointId }))),
    });
    const before = await snapshot();

    const headerSets = (): Record<string, string>[] => [
      {},
      { "if-match": "*" },
      { "if-match": etag },
      { "if-none-match": "*" },
      { "if-none-match": etag },
      { "if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT" },
      { "if-modified-since": "Fri, 01 Jan 2100 00:00:00 GMT" },
      // A fresh key each time: a key used again with another request is a 422 of its own.
      { "idempotency-key": `"probe-${keys++}"` },
    ];
    const under = (id: string, delivery: string): [string, string][] => [
      ["GET", `/${id}`],
      ["HEAD", `/${id}`],
      ["POST", `/${id}`],
      ["PATCH", `/${id}`],
      ["DELETE", `/${id}`],
      ["POST", `/${id}/rotate_secret`],
      ["POST", `/${id}/replay?since=0`],
      ["POST", `/${id}/test`],
      ["GET", `/${id}/deliveries`],
      ["GET", `/${id}/deliveries/${delivery}`],
      ["POST", `/${id}/deliveries/${delivery}/retry`],
      ["GET", `/${id}/attempts?delivery_id=${delivery}`],
    ];
    // Each header set on the foreign id's request and on the missing id's; `echoed` (a cursor the problem names back)
    // read as the missing id it stands for.
    const same = async (probe: [string, string], missing: [string, string], echoed: string, echo: string) => {
      for (const headers of headerSets()) {
        const theirs = await send("globex", probe[0], probe[1], headers);
        // The same key again for the missing id's request would be a key used with another request.
        const key = headers["idempotency-key"];
        const mine = await send(
          "globex",
          missing[0],
          missing[1],
          key ? { "idempotency-key": key.replace(/"$/, `-b"`) } : headers,
        );
        const label = `${probe[0]} ${probe[1]} ${JSON.stringify(headers)}`;
        expect({ ...theirs, body: theirs.body.replaceAll(echoed, echo) }, label).toEqual(mine);
      }
    };

    for (const id of [acme, operator, everyTenant]) {
      const missing = under(NO_ENDPOINT, NO_DELIVERY);
      for (const [i, route] of under(id, acmeDelivery?.id as string).entries()) {
        await same(route, missing[i] as [string, string], "", "");
      }
    }
    // Under globex's own endpoint: another endpoint's delivery, event and cursors, as missing ones.
    const foreign = acmeDelivery?.id as string;
    for (const [method, path, missing] of [
      ["GET", `/${globex}/deliveries/${foreign}`, NO_DELIVERY],
      ["HEAD", `/${globex}/deliveries/${foreign}`, NO_DELIVERY],
      ["POST", `/${globex}/deliveries/${foreign}/retry`, NO_DELIVERY],
      ["GET", `/${globex}/deliveries?starting_after=${foreign}`, NO_DELIVERY],
      ["GET", `/${globex}/deliveries?status=exhausted&starting_after=${foreign}`, NO_DELIVERY],
      ["GET", `/${globex}/attempts?delivery_id=${foreign}`, NO_DELIVERY],
      ["POST", `/${globex}/replay?since=0&starting_after=${foreign}`, NO_DELIVERY],
      ["POST", `/${globex}/replay?since=0&status=parked&starting_after=${foreign}`, NO_DELIVERY],
      ["GET", `?starting_after=${acme}`, NO_ENDPOINT],
      ["GET", `?starting_after=${everyTenant}`, NO_ENDPOINT],
    ] as const) {
      const echoed = path.includes(foreign) ? foreign : path.slice(path.lastIndexOf("=") + 1);
      await same([method, path], [method, path.replace(echoed, missing)], echoed, missing);
    }
    const ofEvent = `/${globex}/deliveries?event_id=`;
    await same(["GET", `${ofEvent}${event.id}`], ["GET", `${ofEvent}${NO_EVENT}`], event.id, NO_EVENT);

    expect(await snapshot()).toEqual(before);
  });
});
