import { describe, expect, it } from "vitest";
import {
  deliveryTelemetry,
  instrumentInbox,
  instrumentRateLimiter,
  observeDeliveryQueue,
  tracedPublish,
  traceWebhookReceipt,
} from "../../src/otel/index";
import { createRateLimiter } from "../../src/ratelimit/index";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
import type { DeliveryQueue } from "../../src/webhooks/delivery/delivery-queue";

const queue = {
  publish: async () => ({ deliveryIds: [] }),
  nextDueAt: async () => undefined,
} as unknown as DeliveryQueue;
const limiter = createRateLimiter({ policies: [{ name: "p", quota: 1, window: 1 }] });

// Regression: a tracer without startSpan was taken, and every span start then failed quietly: nothing was ever
// recorded, and nothing said why. A meter without the instruments threw a bare "is not a function".
describe("telemetry options are refused at construction, naming the option", () => {
  const makers: [string, (options: object) => unknown][] = [
    ["deliveryTelemetry", (options) => deliveryTelemetry(options)],
    ["tracedPublish", (options) => tracedPublish(queue, options)],
    ["traceWebhookReceipt", (options) => traceWebhookReceipt(() => ({ status: 204, headers: {} }), options)],
    ["instrumentInbox", (options) => instrumentInbox(createMemoryInbox(), options)],
  ];
  describe.each(makers)("%s", (name, make) => {
    it.each([
      ["a tracer without startSpan", { tracer: {} }, /options\.tracer/],
      ["a meter without createCounter", { meter: {} }, /options\.meter/],
    ])("%s", (_what, options, message) => {
      expect(() => make(options)).toThrow(TypeError);
      expect(() => make(options)).toThrow(message);
      expect(() => make(options)).toThrow(new RegExp(`^${name}:`));
    });
  });

  it.each([
    ["instrumentRateLimiter", () => instrumentRateLimiter(limiter, { meter: {} as never })],
    ["observeDeliveryQueue", () => observeDeliveryQueue(queue, { meter: {} as never })],
  ])("%s: a meter without createCounter", (_name, make) => {
    expect(make).toThrow(/options\.meter/);
  });

  it("observeDeliveryQueue: a clock that is not a function", () => {
    expect(() => observeDeliveryQueue(queue, { now: 5 as never })).toThrow(/observeDeliveryQueue: options\.now/);
  });
});
