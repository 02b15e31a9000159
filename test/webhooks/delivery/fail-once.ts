import type { DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import { type DeliveryState, transition } from "../../../src/webhooks/delivery/state-machine";

// Claims the queue's one due delivery and stores one failed attempt of it (a 500 answering "down"), with `state` over
// the state that attempt leads to.
export async function failOnce(
  queue: DeliveryQueue,
  endpointId: string,
  now: number,
  state: Partial<DeliveryState> = {},
) {
  const [claim] = await queue.claim({ limit: 1, now, leaseMs: 1_000 });
  const result = { kind: "response" as const, status: 500, durationMs: 3, body: "down" };
  const next = transition(claim!.state, { type: "attempt", result }, now);
  await queue.complete(
    claim!,
    { ...next.state, ...state },
    {
      deliveryId: claim!.id,
      endpointId,
      eventId: claim!.eventId,
      attempt: 1,
      startedAt: now,
      durationMs: 3,
      status: 500,
      errorKind: "http_status",
      response: "down",
    },
  );
}
