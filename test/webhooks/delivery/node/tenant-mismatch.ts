import { expect } from "vitest";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import { WebhookDeliveryError } from "../../../../src/webhooks/delivery/errors";
import type { DeliveryWorkerEvent } from "../../../../src/webhooks/delivery/node/index";

/**
 * A delivery refused as another tenant's was reported once, as a `tenant_mismatch` error event, and left nothing its
 * endpoint's new owner could be told of: no `delivery.exhausted` event, no log line under the endpoint.
 */
export async function expectRefusedAsStranger(
  events: readonly DeliveryWorkerEvent[],
  queue: DeliveryQueue,
  endpointId: string,
  deliveryId: string | undefined,
): Promise<void> {
  expect(deliveryId).toBeDefined();
  const errors = events.flatMap((e) => (e.type === "error" ? [e.error] : []));
  expect(errors).toHaveLength(1);
  expect(errors[0]).toBeInstanceOf(WebhookDeliveryError);
  expect((errors[0] as WebhookDeliveryError).code).toBe("tenant_mismatch");
  expect(events.filter((e) => e.type === "delivery.exhausted")).toEqual([]);
  expect((await queue.attempts({ endpointId })).map((line) => line.deliveryId)).not.toContain(deliveryId);
}
