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

  // Regression: one renewal that never settled (a database hanging, not down) kept the heartbeat busy for good: no
  // lease was renewed again while the worker ran, nor after stop() and start().
  it("gives up a renewal unanswered for a whole lease, and one under way at stop(): renews again, ignores their answers", async () => {
    vi.useFakeTimers();
    const answers: ((ids: string[]) => void)[] = [];
    const queue = {
      renew: () => new Promise<string[]>((resolve) => answers.push(resolve)),
    } as unknown as DeliveryQueue;
    const renewed: number[] = [];
    const heartbeat = new LeaseHeartbeat({
      queue,
      now: Date.now,
      leaseMs: 3_000,
      claims: () => [{ id: "dlv_1" } as ClaimedDelivery],
      renewed: (_claims, _ids, until) => renewed.push(until),
      onError: (error) => {
        throw error;
      },
    });
    heartbeat.start();
    try {
      await vi.advanceTimersByTimeAsync(1_000);
      expect(answers).toHaveLength(1);
      // One at a time while the lease it asked for may still hold.
      await vi.advanceTimersByTimeAsync(2_000);
      expect(answers).toHaveLength(1);
      // A lease later: whatever it renews has ended by now; a new renewal goes out.
      await vi.advanceTimersByTimeAsync(1_000);
      expect(answers).toHaveLength(2);
      heartbeat.stop();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(answers).toHaveLength(2); // stopped: no renewal
      heartbeat.start();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(answers).toHaveLength(3); // the one under way at stop() holds up nothing
      for (const answer of answers.slice(0, 2)) answer(["dlv_1"]);
      await vi.advanceTimersByTimeAsync(0);
      expect(renewed).toEqual([]); // given-up answers change nothing
      answers[2]?.(["dlv_1"]);
      await vi.advanceTimersByTimeAsync(0);
      expect(renewed).toHaveLength(1);
    } finally {
      heartbeat.stop();
    }
  });
});
