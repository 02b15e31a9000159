import type pg from "pg";
import { describe, expectTypeOf, it } from "vitest";
import type { SqlClient } from "../../../src/postgres/index";
import { createRouter, type Router } from "../../../src/routing/index";
import {
  type AttemptResult,
  checkEndpointUrl,
  type DeliveryEffect,
  type DeliveryQueue,
  type DeliveryState,
  declareEndpointApi,
  type HostResolver,
  type PublishOptions,
  transition,
  type UrlCheck,
  type WebhookEvent,
} from "../../../src/webhooks/delivery/index";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { systemResolver } from "../../../src/webhooks/delivery/node/index";
import { createPostgresDeliveryQueue, type PostgresDeliveryQueue } from "../../../src/webhooks/delivery/postgres/index";

describe("public types of the delivery engine", () => {
  it("the core queue names no SQL type; the PostgreSQL queue acts inside any client's transaction", () => {
    expectTypeOf<keyof PublishOptions>().toEqualTypeOf<"now" | "delayMs">();
    expectTypeOf<pg.Pool>().toExtend<SqlClient>();
    expectTypeOf<pg.PoolClient>().toExtend<SqlClient>();
    expectTypeOf<PostgresDeliveryQueue>().toExtend<DeliveryQueue>();
    expectTypeOf<PostgresDeliveryQueue["withClient"]>().parameter(0).toEqualTypeOf<SqlClient>();
    expectTypeOf(createPostgresDeliveryQueue).parameter(0).toHaveProperty("client");
  });

  it("transition is a pure function of plain values", () => {
    expectTypeOf(transition).returns.toEqualTypeOf<{ state: DeliveryState; effects: DeliveryEffect[] }>();
    // @ts-expect-error an attempt needs a result
    transition({} as DeliveryState, { type: "attempt" }, 0);
    expectTypeOf<Extract<AttemptResult, { kind: "error" }>["errorKind"]>().toExtend<string>();
    expectTypeOf<WebhookEvent["data"]>().toEqualTypeOf<Record<string, unknown>>();
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
