import type pg from "pg";
import { describe, expectTypeOf, it } from "vitest";
import type { Handler } from "../../../src/http/message";
import {
  type AttemptResult,
  checkResolvedEndpointUrl,
  createEndpointHandler,
  type DeliveryEffect,
  type DeliveryState,
  type HostResolver,
  type Queryable,
  transition,
  type UrlCheck,
  type WebhookEvent,
} from "../../../src/webhooks/index";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/memory/queue/index";
import {
  createEndpointHandler as createNodeEndpointHandler,
  type Resolver,
  systemResolver,
} from "../../../src/webhooks/node/index";
import { createPostgresDeliveryQueue } from "../../../src/webhooks/postgres/index";

describe("public types of the delivery engine", () => {
  it("a pg Pool and a pooled client are Queryable (publish inside the caller's transaction)", () => {
    expectTypeOf<pg.Pool>().toExtend<Queryable>();
    expectTypeOf<pg.PoolClient>().toExtend<Queryable>();
    expectTypeOf(createPostgresDeliveryQueue).parameter(0).toHaveProperty("pool");
  });

  it("transition is a pure function of plain values", () => {
    expectTypeOf(transition).returns.toEqualTypeOf<{ state: DeliveryState; effects: DeliveryEffect[] }>();
    // @ts-expect-error an attempt needs a result
    transition({} as DeliveryState, { type: "attempt" }, 0);
    expectTypeOf<Extract<AttemptResult, { kind: "error" }>["errorKind"]>().toExtend<string>();
  });

  it("the endpoint API is a Handler", () => {
    const endpoints = createMemoryEndpointStore();
    const handler = createEndpointHandler({
      endpoints,
      queue: createMemoryDeliveryQueue({ endpoints }),
      apiKeys: ["k"],
    });
    expectTypeOf(handler).toEqualTypeOf<Handler>();
    expectTypeOf<WebhookEvent["data"]>().toEqualTypeOf<Record<string, unknown>>();
  });

  it("registration takes an injected resolver; the node layer's default is the system resolver", () => {
    expectTypeOf(checkResolvedEndpointUrl).returns.toEqualTypeOf<Promise<UrlCheck>>();
    expectTypeOf(systemResolver).toEqualTypeOf<HostResolver>();
    expectTypeOf<Resolver>().toEqualTypeOf<HostResolver>();
    expectTypeOf(createNodeEndpointHandler).toEqualTypeOf(createEndpointHandler);
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    createEndpointHandler({ endpoints, queue, apiKeys: ["k"], resolve: false });
    // @ts-expect-error a resolver is a function of the host name
    createEndpointHandler({ endpoints, queue, apiKeys: ["k"], resolve: "8.8.8.8" });
  });
});
