import type pg from "pg";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { SqlClient } from "../../../src/postgres/index";
import { createRouter, type Router } from "../../../src/routing/index";
import { createWebhookProcessor } from "../../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../../src/webhooks/consumer/memory/index";
import type { ClaimedDelivery } from "../../../src/webhooks/delivery/delivery-queue";
import {
  type AddressClass,
  type AttemptInput,
  type AttemptRecord,
  type AttemptResult,
  type AttemptsQuery,
  checkEndpointUrl,
  type DeliveryEffect,
  type DeliveryErrorKind,
  type DeliveryListOptions,
  type DeliveryQueue,
  type DeliveryState,
  type DisabledReason,
  declareEndpointApi,
  defineEvents,
  type HostResolver,
  type PublishOptions,
  transition,
  type UrlCheck,
  type UrlPolicy,
  type UrlRefusal,
  type WebhookEndpoint,
  type WebhookEvent,
} from "../../../src/webhooks/delivery/index";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { type DeliveryWorkerEvent, systemResolver } from "../../../src/webhooks/delivery/node/index";
import {
  createPostgresDeliveryQueue,
  type ListenOptions,
  type PostgresDeliveryQueue,
  type PostgresDeliveryQueueOptions,
  type PostgresEndpointStoreOptions,
} from "../../../src/webhooks/delivery/postgres/index";

describe("public types of the delivery engine", () => {
  it("the core queue names no SQL type; the PostgreSQL queue acts inside any client's transaction", () => {
    expectTypeOf<keyof PublishOptions>().toEqualTypeOf<
      "now" | "delayMs" | "traceparent" | "tracestate" | "tenant" | "endpointId"
    >();
    expectTypeOf<pg.Pool>().toExtend<SqlClient>();
    expectTypeOf<pg.PoolClient>().toExtend<SqlClient>();
    expectTypeOf<PostgresDeliveryQueue>().toExtend<DeliveryQueue>();
    expectTypeOf<PostgresDeliveryQueue["withClient"]>().parameter(0).toEqualTypeOf<SqlClient>();
    expectTypeOf(createPostgresDeliveryQueue).parameter(0).toHaveProperty("client");
  });

  it("the queue gives attempt log lines their ids: the worker's input has none, the log's records do", () => {
    expectTypeOf<AttemptRecord["id"]>().toEqualTypeOf<string>();
    expectTypeOf<AttemptRecord>().toExtend<AttemptInput>();
    expectTypeOf<AttemptInput>().not.toHaveProperty("id");
    expectTypeOf<DeliveryQueue["complete"]>().parameter(2).toEqualTypeOf<AttemptInput | undefined>();
    expectTypeOf<DeliveryQueue["attempts"]>().returns.resolves.toEqualTypeOf<AttemptRecord[]>();
    expectTypeOf<AttemptsQuery["startingAfter"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<DeliveryListOptions["lastErrorKind"]>().toEqualTypeOf<DeliveryErrorKind | undefined>();
    // @ts-expect-error the last error kind is one of DELIVERY_ERROR_KINDS
    const parked: DeliveryListOptions = { status: ["exhausted"], lastErrorKind: "parked" };
    expectTypeOf(parked).toEqualTypeOf<DeliveryListOptions>();
    const line = { deliveryId: "d", endpointId: "e", eventId: "v", attempt: 1, startedAt: 0, durationMs: 1 };
    const input: AttemptInput = { ...line, status: 200, errorKind: null, response: null };
    // @ts-expect-error a record needs the id its queue gave it
    const record: AttemptRecord = input;
    expectTypeOf(record).toEqualTypeOf<AttemptRecord>();
  });

  it("transition is a pure function of plain values", () => {
    expectTypeOf(transition).returns.toEqualTypeOf<{ state: DeliveryState; effects: DeliveryEffect[] }>();
    // @ts-expect-error an attempt needs a result
    transition({} as DeliveryState, { type: "attempt" }, 0);
    expectTypeOf<Extract<AttemptResult, { kind: "error" }>["errorKind"]>().toExtend<string>();
    expectTypeOf<WebhookEvent["data"]>().toEqualTypeOf<Record<string, unknown>>();
  });

  // url_refused (the URL itself refused by the policy at send time): the attempt's kind, the endpoint's disabled
  // reason, the state machine's disable effect and the worker's event. Exact unions: a member added or dropped shows.
  it("url_refused is an error kind, a disabled reason, a disable effect's reason and a disabled event's", () => {
    expectTypeOf<DeliveryErrorKind>().toEqualTypeOf<
      | "timeout"
      | "connection_refused"
      | "connection_reset"
      | "dns"
      | "ssrf_blocked"
      | "url_refused"
      | "http_status"
      | "tls"
      | "proxy"
      | "response_too_large"
      | "network"
      | "endpoint_disabled"
      | "request_invalid"
    >();
    expectTypeOf<Extract<AttemptResult, { kind: "error" }>["errorKind"]>().toEqualTypeOf<DeliveryErrorKind>();
    expectTypeOf<AttemptInput["errorKind"]>().toEqualTypeOf<DeliveryErrorKind | null>();
    expectTypeOf<DisabledReason>().toEqualTypeOf<"manual" | "gone" | "failing" | "url_refused">();
    expectTypeOf<WebhookEndpoint["disabledReason"]>().toEqualTypeOf<DisabledReason | null>();
    type DisableEffect = Extract<DeliveryEffect, { type: "disable_endpoint" }>;
    expectTypeOf<DisableEffect["reason"]>().toEqualTypeOf<"gone" | "url_refused">();
    expectTypeOf<DisableEffect["reason"]>().toExtend<DisabledReason>();
    type Disabled = Extract<DeliveryWorkerEvent, { type: "endpoint.disabled" }>;
    expectTypeOf<Disabled["reason"]>().toEqualTypeOf<DisabledReason>();
  });

  it("the endpoint API is declared on a router, and the DNS check at registration is a visible choice", () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    expectTypeOf(
      declareEndpointApi(createRouter(), { endpoints, queue, apiKeys: ["k"], resolve: false }),
    ).toEqualTypeOf<Router>();
    declareEndpointApi(createRouter(), { endpoints, queue, apiKeys: ["k"], resolve: systemResolver });
    // @ts-expect-error resolve is required: a resolver, or false
    declareEndpointApi(createRouter(), { endpoints, queue, apiKeys: ["k"] });
    // @ts-expect-error a resolver is a function of the host name
    declareEndpointApi(createRouter(), { endpoints, queue, apiKeys: ["k"], resolve: "8.8.8.8" });
    expectTypeOf(systemResolver).toEqualTypeOf<HostResolver>();
    expectTypeOf(checkEndpointUrl).returns.toEqualTypeOf<UrlCheck>();
  });
});

describe("the event catalog's types", () => {
  const Shipped = z.object({ id: z.string(), total: z.number() });
  const catalog = defineEvents({ "order.shipped": Shipped });

  it("types create() by the event type, and refuses a wrong payload", () => {
    const event = catalog.create("order.shipped", { id: "o", total: 1 });
    expectTypeOf(event.type).toEqualTypeOf<"order.shipped">();
    expectTypeOf(event.data).toEqualTypeOf<{ id: string; total: number }>();
    // @ts-expect-error total must be a number
    catalog.create("order.shipped", { id: "o", total: "1" });
    // @ts-expect-error not a type of the catalog
    catalog.create("order.deleted", { id: "o", total: 1 });
  });

  it("types a consumer's handler through envelope()", () => {
    createWebhookProcessor({ inbox: createMemoryInbox() }).on(
      "order.shipped",
      catalog.envelope("order.shipped"),
      ({ event }) => {
        expectTypeOf(event.payload.data.total).toEqualTypeOf<number>();
        expectTypeOf(event.payload.type).toEqualTypeOf<"order.shipped">();
      },
    );
  });
});

describe("the URL policy's types", () => {
  it("takes deny entries and ports, and a denied refusal names its class", () => {
    expectTypeOf<{ deny: string[]; ports: number[] }>().toMatchTypeOf<UrlPolicy>();
    // @ts-expect-error ports are numbers, not strings
    const policy: UrlPolicy = { ports: ["443"] };
    void policy;
    expectTypeOf<Extract<UrlRefusal, { code: "forbidden_address" }>["addressClass"]>().toEqualTypeOf<
      AddressClass | "denied"
    >();
  });
});

describe("the PostgreSQL stores' listen and a claim's operatorEvent", () => {
  it("takes listen as a boolean or its options, and a claim may say it carries the operator's event", () => {
    expectTypeOf<{ client: SqlClient; listen: false }>().toMatchTypeOf<PostgresEndpointStoreOptions>();
    expectTypeOf<{ client: SqlClient; listen: { retryMs: number } }>().toMatchTypeOf<PostgresDeliveryQueueOptions>();
    expectTypeOf<{
      client: SqlClient;
      listen: { retryMs: number; onError: (error: Error) => void };
    }>().toMatchTypeOf<PostgresEndpointStoreOptions>();
    expectTypeOf<ListenOptions["onError"]>().toEqualTypeOf<((error: Error) => void) | undefined>();
    // @ts-expect-error retryMs is a number of milliseconds
    const options: ListenOptions = { retryMs: "1s" };
    void options;
    expectTypeOf<ClaimedDelivery["operatorEvent"]>().toEqualTypeOf<boolean | undefined>();
  });
});
