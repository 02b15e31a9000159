import type { ObservableResult } from "@opentelemetry/api";
import { optionalFunction } from "../options/function-option";
import type { DeliveryQueue } from "../webhooks/delivery/delivery-queue";
import { METRIC_NAMES } from "./names";
import { seconds, type TelemetryOptions, telemetryOf } from "./telemetry";

/** Options of {@link observeDeliveryQueue}. */
export interface QueueGaugeOptions extends TelemetryOptions {
  /**
   * Counts the deliveries waiting (pending, or failed with a retry scheduled); the queue interface has no count, so
   * the depth gauge is only reported when this is given (PostgreSQL: a `count(*)` over the due index; see
   * docs/observability.md).
   */
  depth?: () => number | Promise<number>;
  /** @default Date.now */
  now?: () => number;
}

/**
 * Reports the queue's depth and the age of the oldest due delivery as observable gauges, read when the SDK collects
 * (one `nextDueAt()`, and `depth()` when given, per collection).
 *
 * @param queue the delivery queue.
 * @param options the meter, the depth counter and the clock.
 * @returns a function that stops reporting.
 * @see docs/observability.md
 * @example const stop = observeDeliveryQueue(queue); // … stop() on shutdown
 */
export function observeDeliveryQueue(queue: DeliveryQueue, options: QueueGaugeOptions = {}): () => void {
  if (typeof queue?.nextDueAt !== "function")
    throw new TypeError("observeDeliveryQueue: queue must be a DeliveryQueue");
  const { meter } = telemetryOf(options, "observeDeliveryQueue");
  optionalFunction("observeDeliveryQueue", "options.depth", options.depth);
  const now =
    optionalFunction("observeDeliveryQueue", "options.now", options.now, "a function returning ms since the epoch") ??
    Date.now;
  const age = meter.createObservableGauge(METRIC_NAMES.oldestDueAge, {
    description: "How long the earliest due delivery has been due (0 when none is).",
    unit: "s",
  });
  const observeAge = async (result: ObservableResult) => {
    const due = await queue.nextDueAt();
    result.observe(due === undefined ? 0 : seconds(Math.max(0, now() - due)));
  };
  age.addCallback(observeAge);
  const { depth } = options;
  if (depth === undefined) return () => age.removeCallback(observeAge);
  const gauge = meter.createObservableGauge(METRIC_NAMES.queueDepth, {
    description: "Deliveries waiting: pending, or failed with a retry scheduled.",
    unit: "{delivery}",
  });
  const observeDepth = async (result: ObservableResult) => result.observe(await depth());
  gauge.addCallback(observeDepth);
  return () => {
    age.removeCallback(observeAge);
    gauge.removeCallback(observeDepth);
  };
}
