import { afterEach, describe, expect, it, vi } from "vitest";
import type { ClaimedDelivery, DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import { LeaseHeartbeat } from "../../../../src/webhooks/delivery/node/lease-heartbeat";

afterEach(() => {
  vi.useRealTimers();
});

describe("LeaseHeartbeat", () => {
  // Regression: a queue of one's own whose `renew` threw (rather than rejected) threw out of the interval, an
  // uncaught exception, and left the heartbeat marked busy, so no lease was renewed again.
  it("reports a renew that throws, and renews again on the next beat", async () => {
    vi.useFakeTimers();
    let calls = 0;
    const queue = {
      renew: () => {
        calls++;
        if (calls === 1) throw new Error("queue down");
        return Promise.resolve([]);
      },
    } as unknown as DeliveryQueue;
    const errors: unknown[] = [];
    const heartbeat = new LeaseHeartbeat({
      queue,
      now: () => 0,
      leaseMs: 3_000,
      claims: () => [{ id: "dlv_1" } as ClaimedDelivery],
      onError: (error) => errors.push(error),
    });
    heartbeat.start();
    try {
      await vi.advanceTimersByTimeAsync(1_000);
      expect(errors).toHaveLength(1);
      expect((errors[0] as Error).message).toBe("queue down");
      await vi.advanceTimersByTimeAsync(2_000);
      expect(calls).toBe(3);
      expect(errors).toHaveLength(1);
    } finally {
      heartbeat.stop();
    }
  });

  // Regression: past 2^31 - 1 ms a Node timer fires after 1 ms, so a lease of over 74 days was renewed every millisecond.
  it("renews a lease longer than a timer can wait no more than once a timer's reach", async () => {
    let calls = 0;
    const queue = {
      renew: () => {
        calls++;
        return Promise.resolve([]);
      },
    } as unknown as DeliveryQueue;
    const heartbeat = new LeaseHeartbeat({
      queue,
      now: () => 0,
      leaseMs: 1e10,
      claims: () => [{ id: "dlv_1" } as ClaimedDelivery],
      onError: (error) => {
        throw error;
      },
    });
    heartbeat.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    heartbeat.stop();
    expect(calls).toBe(0);
  });
});
