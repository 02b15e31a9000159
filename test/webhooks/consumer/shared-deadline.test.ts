import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../../../src/options/timer-delay";
import { sharedDeadline } from "../../../src/webhooks/consumer/shared-deadline";

/** A fake clock and timeout: signals abort when `advance` passes their time. */
function fakeTime() {
  let now = 0;
  const pending: Array<{ at: number; controller: AbortController }> = [];
  const made: number[] = [];
  return {
    clock: {
      monotonic: () => now,
      timeout: (ms: number) => {
        made.push(ms);
        const controller = new AbortController();
        pending.push({ at: now + ms, controller });
        return controller.signal;
      },
    },
    made,
    advance(ms: number) {
      now += ms;
      for (const p of pending)
        if (p.at <= now && !p.controller.signal.aborted) p.controller.abort(new Error("deadline"));
    },
  };
}

describe("sharedDeadline", () => {
  it("hands one signal to every request of a window, and a new one after it", () => {
    const time = fakeTime();
    const deadline = sharedDeadline(5_000, time.clock);
    const first = deadline();
    time.advance(99);
    expect(deadline()).toBe(first);
    time.advance(1);
    const second = deadline();
    expect(second).not.toBe(first);
    // The window is a tenth of the time-out, at most 100 ms; each signal counts the time-out plus the window.
    expect(time.made).toEqual([5_100, 5_100]);
  });

  it("never lets a request wait less than the time-out, nor more than the time-out plus the window", () => {
    const time = fakeTime();
    const deadline = sharedDeadline(1_000, time.clock, 50);
    // Requests arriving every 7 ms for 2 s: each one's signal aborts within [1000, 1050] ms of its arrival.
    const waits: Array<{ arrived: number; abortedAt?: number }> = [];
    for (let t = 0; t < 4_000; t++) {
      if (t < 2_000 && t % 7 === 0) {
        const wait: { arrived: number; abortedAt?: number } = { arrived: t };
        const signal = deadline();
        if (signal.aborted) wait.abortedAt = t;
        else signal.addEventListener("abort", () => (wait.abortedAt = time.clock.monotonic()), { once: true });
        waits.push(wait);
      }
      time.advance(1);
    }
    for (const w of waits) {
      const waited = (w.abortedAt ?? Number.NaN) - w.arrived;
      expect(waited).toBeGreaterThanOrEqual(1_000);
      expect(waited).toBeLessThanOrEqual(1_050);
    }
  });

  it("starts a new window once the shared signal has aborted", () => {
    const time = fakeTime();
    const deadline = sharedDeadline(10, time.clock, 100);
    const first = deadline();
    time.advance(110);
    expect(first.aborted).toBe(true);
    expect(deadline().aborted).toBe(false);
  });

  // Regression: a time-out within a window of the longest timer (2^31 - 1 ms) asked for a signal past it, which Node
  // fires after 1 ms: a processor's handlerTimeoutMs of 2^31 - 1 timed every attempt out at once, and a consumer's
  // inboxTimeoutMs over it answered every delivery 503.
  it("never asks for a timer longer than Node keeps (2^31 - 1 ms), which would fire after 1 ms", () => {
    for (const ms of [MAX_TIMER_MS - 50, MAX_TIMER_MS, 3e9]) {
      const time = fakeTime();
      const deadline = sharedDeadline(ms, time.clock);
      deadline();
      time.advance(1);
      deadline();
      // The window narrows to what is left below the longest timer, so each request still waits at least `ms`.
      expect(time.made, String(ms)).toEqual(time.made.map(() => MAX_TIMER_MS));
    }
  });

  it("lets more than ten requests wait on one signal without a listener-leak warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const signal = sharedDeadline(60_000)();
      const listeners = Array.from({ length: 50 }, () => () => {});
      for (const listener of listeners) signal.addEventListener("abort", listener);
      await new Promise((resolve) => setImmediate(resolve));
      for (const listener of listeners) signal.removeEventListener("abort", listener);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
