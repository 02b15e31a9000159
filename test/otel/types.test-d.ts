import type { Meter, Tracer } from "@opentelemetry/api";
import { describe, expectTypeOf, it } from "vitest";
import type { Handler } from "../../src/http/message";
import {
  deliveryTelemetry,
  instrumentInbox,
  instrumentRateLimiter,
  type TelemetryOptions,
  type TracedPublish,
  tracedPublish,
} from "../../src/otel/index";
import type { RateLimiter } from "../../src/ratelimit/index";
import type { Inbox } from "../../src/webhooks/consumer/index";
import type { DeliveryQueue } from "../../src/webhooks/delivery/index";
import type { DeliveryWorkerOptions } from "../../src/webhooks/delivery/node/index";

describe("public types of rest-webhooks/otel", () => {
  it("takes a tracer and a meter of @opentelemetry/api, both optional", () => {
    expectTypeOf<TelemetryOptions>().toEqualTypeOf<{ tracer?: Tracer; meter?: Meter }>();
  });

  it("the delivery listener fits the worker's onEvent; tracedPublish has publish's signature", () => {
    expectTypeOf(deliveryTelemetry()).toExtend<NonNullable<DeliveryWorkerOptions["onEvent"]>>();
    expectTypeOf<TracedPublish>().toEqualTypeOf<DeliveryQueue["publish"]>();
    expectTypeOf(tracedPublish).parameter(0).toEqualTypeOf<DeliveryQueue>();
  });

  it("wrappers keep the shape they wrap", () => {
    expectTypeOf(instrumentInbox<{ client: string }>).returns.toEqualTypeOf<Inbox<{ client: string }>>();
    expectTypeOf(instrumentRateLimiter).returns.toEqualTypeOf<RateLimiter>();
    expectTypeOf<ReturnType<typeof import("../../src/otel/index").traceWebhookReceipt>>().toEqualTypeOf<Handler>();
  });
});
