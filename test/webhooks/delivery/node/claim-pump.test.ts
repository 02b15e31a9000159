import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeliveryQueue } from "../../../../src/webhooks/delivery/delivery-queue";
import { ClaimPump } from "../../../../src/webhooks/delivery/node/claim-pump";

const NOW = 1_700_000_000_000;

afterEach(() => {
  vi.useRealTimers();
});

/** A pump over `queue` that claims up to 10 at a time, holds none, and throws what it reports. */
function pumpOf(queue: DeliveryQueue, pollMs: number, running: () => boolean): ClaimPump {
  return new ClaimPump({
    queue,
    now: () => NOW,
    leaseMs: 60_000,
    pollMs,
    running,
    held: () => 0,
    wants: () => true,
    request: () => ({ limit: 10 }),
    claimed: () => {},
    admit: () => {},
    onError: (error) => {
      throw error;
    },
  });
}

/**
 * Runs a pump for `forMs` over a queue whose claims find nothing and whose next due time is `nextDue`, and answers
 * how many claims it made.
 */
async function claimsOf(nextDue: number | undefined, pollMs: number, forMs: number): Promise<number> {
  let claims = 0;
  const queue = {
    claim: async () => {
      claims++;
      return [];
    },
    nextDueAt: async () => nextDue,
  } as unknown as DeliveryQueue;
  let running = true;
  const pump = pumpOf(queue, pollMs, () => running);
  pump.kick(true);
  await new Promise((resolve) => setTimeout(resolve, forMs));
  running = false;
  pump.stop();
  return claims;
}

describe("claim pump", () => {
  it("pauses between claims that find nothing while the queue reports a delivery overdue (regression: a busy loop of claims)", async () => {
    // A queue whose claim and nextDueAt disagree: the due delivery is locked elsewhere, or past the claim's walk.
    const claims = await claimsOf(NOW - 1_000, 1_000, 200);
    // A pause of 10 ms: about 20 claims in 200 ms. At once each time, it was several hundred.
    expect(claims).toBeGreaterThan(1);
    expect(claims).toBeLessThanOrEqual(30);
  });

  // Regression: past 2^31 - 1 ms a Node timer fires after 1 ms, so a very long poll interval polled every millisecond.
  it("waits a poll interval longer than a timer can wait (over 24.8 days) without claiming meanwhile", async () => {
    expect(await claimsOf(undefined, 1e10, 100)).toBe(1);
  });

  // Regression: a round still awaiting nextDueAt when the worker stopped armed its wake-up timer after stop() had
  // cancelled it, so a timer outlived stop() (and woke the pump of a stopped worker).
  it("arms no wake-up timer when a round ends after stop()", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let answer: ((due: number | undefined) => void) | undefined;
    const queue = {
      claim: async () => [],
      nextDueAt: () => new Promise<number | undefined>((resolve) => (answer = resolve)),
    } as unknown as DeliveryQueue;
    let running = true;
    const pump = pumpOf(queue, 1_000, () => running);
    pump.kick(true);
    while (answer === undefined) await new Promise((resolve) => setImmediate(resolve));
    // As the worker's stop() does: not running, the timer cancelled; then the round's look at the queue comes back.
    running = false;
    pump.stop();
    answer(undefined);
    while (pump.pumping) await new Promise((resolve) => setImmediate(resolve));
    expect(vi.getTimerCount()).toBe(0);
  });
});
