import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RequestDeadlines } from "../../../../src/webhooks/delivery/node/request-deadlines";

// A full collection on demand (as --expose-gc gives), to see what a cancelled deadline still holds.
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

describe("RequestDeadlines", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("calls each pending request's callback once its time-out has passed, oldest first, and never a cancelled one", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const deadlines = new RequestDeadlines(1_000);
    const fired: string[] = [];
    deadlines.start(() => fired.push("a"));
    vi.advanceTimersByTime(400);
    const b = deadlines.start(() => fired.push("b"));
    deadlines.start(() => fired.push("c"));
    deadlines.cancel(b);
    vi.advanceTimersByTime(599);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["a"]);
    vi.advanceTimersByTime(400);
    expect(fired).toEqual(["a", "c"]);
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual(["a", "c"]);
  });

  // Regression: past 2^31 - 1 ms a Node timer fires after 1 ms, so a time-out over 24.8 days swept every millisecond.
  it("arms one timer for a time-out longer than a timer can wait, and does not fire early", async () => {
    const armed = vi.spyOn(globalThis, "setTimeout");
    const deadlines = new RequestDeadlines(3e9);
    let fired = false;
    try {
      deadlines.start(() => {
        fired = true;
      });
      // 50 ms of the event loop: room for dozens of sweeps a millisecond apart.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(armed.mock.calls.filter(([, ms]) => (ms ?? 0) > 1_000_000)).toHaveLength(1);
      expect(fired).toBe(false);
    } finally {
      armed.mockRestore();
      deadlines.clear();
    }
  });

  it("a cancelled deadline keeps nothing of its request alive, even while the deadline itself is still referenced", async () => {
    // A deadline pending during a young-generation collection is moved to the old generation and outlives its
    // request there until a full collection; what it still points to is copied by every young collection meanwhile.
    const deadlines = new RequestDeadlines(60_000);
    let request: { payload: string } | undefined = { payload: "x".repeat(1_000) };
    const weak = new WeakRef(request);
    const callbackOf = (held: { payload: string }) => () => void held.payload;
    const deadline = deadlines.start(callbackOf(request));
    request = undefined;
    deadlines.cancel(deadline);
    // WeakRef targets are kept until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    expect(weak.deref()).toBeUndefined();
    expect(deadline.at).toBeGreaterThan(0);
    deadlines.clear();
  });
});
