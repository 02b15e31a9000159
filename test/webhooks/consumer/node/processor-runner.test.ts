import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import {
  createWebhookProcessor,
  type InboxClaimRequest,
  type InboxEvent,
  runProcessorLoop,
} from "../../../../src/webhooks/consumer/index";
import { createMemoryInbox, MemoryInbox } from "../../../../src/webhooks/consumer/memory/index";
import { startWebhookProcessor } from "../../../../src/webhooks/consumer/node/index";
import { latch } from "../support";

const evt = (id: string): InboxEvent => ({
  id,
  type: "order.shipped",
  payload: {},
  scheme: "test",
  timestamp: undefined,
  receivedAt: 0,
});

/** A fake processor whose attempts the test settles by hand; `limits` records what each claim asked for. */
function scriptedProcessor(batchSize: number, due: number[]) {
  const limits: number[] = [];
  const attempts: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  return {
    limits,
    attempts,
    processor: {
      batchSize,
      startDue: async (limit: number) => {
        limits.push(limit);
        const n = due.shift();
        if (n === -1) throw new Error("claim failed");
        return Array.from(
          { length: Math.min(n ?? 0, limit) },
          () => new Promise<void>((resolve, reject) => void attempts.push({ resolve, reject })),
        );
      },
    },
  };
}

/** Lets every pending callback run (the loop's awaits are promise hops, never timers). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("runProcessorLoop (injected sleep)", () => {
  it("keeps batchSize attempts in flight: claims its free slots, and again as each attempt settles", async () => {
    const controller = new AbortController();
    const { processor, limits, attempts } = scriptedProcessor(3, [3, 1, 2, 0]);
    const sleeps: number[] = [];
    const loop = runProcessorLoop({
      processor,
      sleep: async (ms) => {
        sleeps.push(ms);
        controller.abort();
      },
      signal: controller.signal,
      idleMs: 100,
    });
    await settle();
    expect(limits).toEqual([3]); // full: waits for a slot, claims nothing more
    attempts[1]?.resolve();
    await settle();
    expect(limits).toEqual([3, 1]); // one slot freed, one claimed at once
    attempts[0]?.resolve();
    attempts[2]?.resolve();
    await settle();
    expect(limits).toEqual([3, 1, 2]);
    attempts[3]?.resolve();
    await settle();
    expect(limits).toEqual([3, 1, 2, 1]); // nothing due: the loop sleeps idleMs (and the fake sleep stops it)
    expect(sleeps).toEqual([100]);
    let stopped = false;
    void loop.then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false); // two attempts still in flight
    attempts[4]?.resolve();
    attempts[5]?.resolve();
    await loop;
  });

  it("sleeps idleMs after a claim that found fewer events than slots, errorDelayMs after a claim error", async () => {
    const controller = new AbortController();
    const { processor, limits, attempts } = scriptedProcessor(2, [1, -1, 0]);
    const sleeps: number[] = [];
    const onError = vi.fn();
    const loop = runProcessorLoop({
      processor,
      sleep: async (ms) => {
        sleeps.push(ms);
        if (sleeps.length === 3) controller.abort();
      },
      signal: controller.signal,
      idleMs: 100,
      errorDelayMs: 5_000,
      onError,
    });
    await settle();
    expect(sleeps).toEqual([100, 5_000, 100]);
    expect(limits).toEqual([2, 1, 1]); // the first attempt is still in flight: one slot free
    expect(onError).toHaveBeenCalledTimes(1);
    attempts[0]?.resolve();
    await loop;
  });

  it("frees the slot of an attempt that rejects, and reports its error", async () => {
    const controller = new AbortController();
    const { processor, limits, attempts } = scriptedProcessor(1, [1, 1]);
    const onError = vi.fn();
    const loop = runProcessorLoop({
      processor,
      sleep: async () => controller.abort(),
      signal: controller.signal,
      onError,
    });
    await settle();
    const thrown = new Error("onError threw");
    attempts[0]?.reject(thrown);
    await settle();
    expect(onError).toHaveBeenCalledWith(thrown);
    expect(limits).toEqual([1, 1]);
    controller.abort();
    attempts[1]?.resolve();
    await loop;
  });

  // Regression: an onError that threw ended the loop from a claim error, and from an attempt's rejection became an
  // unhandled rejection (fatal to the process by default) with the attempt's slot counted for ever.
  it("goes on when onError throws: after a claim error, and after an attempt that rejects", async () => {
    const controller = new AbortController();
    const { processor, limits, attempts } = scriptedProcessor(1, [1, -1, 1, 0]);
    const onError = vi.fn(() => {
      throw new Error("the reporter failed");
    });
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const loop = runProcessorLoop({
        processor,
        sleep: async () => {
          if (limits.length === 4) controller.abort();
        },
        signal: controller.signal,
        onError,
      });
      await settle();
      attempts[0]?.reject(new Error("settling failed"));
      await settle();
      expect(limits).toEqual([1, 1, 1]); // the claim error's pause ended, and the loop claimed again
      attempts[1]?.resolve();
      await settle();
      expect(limits).toEqual([1, 1, 1, 1]);
      await loop;
      expect(onError).toHaveBeenCalledTimes(2);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });

  // Regression: the processor purges done events before it claims, and a purge can take seconds (the PostgreSQL
  // inbox deletes a large backlog 10,000 rows a statement). A stop during it still claimed, and ran handlers after it.
  it("claims nothing once stopped, even when the stop comes while the processor purges before its claim", async () => {
    const purging = latch();
    const purged = latch();
    const claims: number[] = [];
    const inbox = new (class extends MemoryInbox {
      override async purgeDone(before: number): Promise<number> {
        purging.open();
        await purged.promise;
        return super.purgeDone(before);
      }
      override claim(request: InboxClaimRequest) {
        claims.push(request.limit);
        return super.claim(request);
      }
    })();
    await inbox.add(evt("a"));
    const handler = vi.fn();
    const processor = createWebhookProcessor({ inbox, now: () => 0 }).on("*", handler);
    const controller = new AbortController();
    const loop = runProcessorLoop({ processor, sleep: async () => {}, signal: controller.signal });
    await purging.promise;
    controller.abort();
    purged.open();
    await loop;
    expect(claims).toEqual([]);
    expect(handler).not.toHaveBeenCalled();
    expect((await inbox.get("a"))?.state).toBe("pending");
  });

  it("a handler that hangs holds one slot: every other event is processed around it", async () => {
    const inbox = createMemoryInbox();
    await inbox.add({ ...evt("slow"), type: "order.slow" });
    for (let i = 0; i < 20; i++) await inbox.add(evt(`e${i}`));
    const release = latch();
    const allFast = latch();
    let fast = 0;
    const processor = createWebhookProcessor({ inbox, batchSize: 2, handlerTimeoutMs: Number.POSITIVE_INFINITY })
      .on("order.slow", () => release.promise)
      .on("order.shipped", () => {
        if (++fast === 20) allFast.open();
      });
    const controller = new AbortController();
    const loop = runProcessorLoop({ processor, sleep: () => settle().then(), signal: controller.signal });
    // With a batch that waits for all its handlers, this would never open: the slow one shares the first batch.
    await allFast.promise;
    expect((await inbox.get("slow"))?.state).toBe("processing");
    controller.abort();
    release.open();
    await loop;
    expect((await inbox.get("slow"))?.state).toBe("done");
  });
});

describe("startWebhookProcessor (real timers)", () => {
  it("processes at once when woken, without waiting for the poll interval", async () => {
    const inbox = createMemoryInbox();
    const processed = latch();
    const processor = createWebhookProcessor({ inbox }).on("*", () => processed.open());
    const runner = startWebhookProcessor(processor, { idleMs: 600_000 });
    try {
      await inbox.add({ ...evt("a"), receivedAt: Date.now() });
      runner.wake();
      await processed.promise; // a missed wake would leave this pending for ten minutes: the test would time out
      expect(processed.isOpen).toBe(true);
    } finally {
      await runner.stop();
    }
  });

  it("claims the events of several wakes within one turn of the event loop together", async () => {
    const inbox = createMemoryInbox();
    let handled = 0;
    const allHandled = latch();
    const processor = createWebhookProcessor({ inbox }).on("*", () => {
      if (++handled === 5) allHandled.open();
    });
    const startDue = vi.spyOn(processor, "startDue");
    const runner = startWebhookProcessor(processor, { idleMs: 600_000 });
    try {
      while (startDue.mock.calls.length === 0) await settle();
      await settle(); // the first claim found nothing: the runner sleeps
      for (let i = 0; i < 5; i++) {
        await inbox.add({ ...evt(`e${i}`), receivedAt: Date.now() });
        runner.wake(); // as the consumer's onStored does after each 202
      }
      await allHandled.promise;
      expect(startDue).toHaveBeenCalledTimes(2);
      expect(startDue.mock.calls[1]?.[0]).toBe(10);
    } finally {
      await runner.stop();
    }
  });

  // Regression: only the pauses were checked at once; a bad batchSize rejected the loop's promise, which nothing
  // awaited before stop(): an unhandled rejection, fatal to the process by default.
  it("refuses a processor whose batchSize is not a positive integer at once, and starts no loop", () => {
    for (const batchSize of [0, -1, 1.5, Number.NaN, undefined]) {
      const startDue = vi.fn(async () => []);
      expect(() => startWebhookProcessor({ batchSize, startDue } as never)).toThrow(/batchSize/);
      expect(startDue).not.toHaveBeenCalled();
    }
  });

  it("logs what a throwing onError threw, with the error it was told, and claims again", async () => {
    const claimed = latch();
    let claims = 0;
    const processor = {
      batchSize: 1,
      startDue: async () => {
        if (++claims === 1) throw new Error("claim failed");
        claimed.open();
        return [];
      },
    };
    const reporterFailure = new Error("the reporter failed");
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const runner = startWebhookProcessor(processor, {
      errorDelayMs: 0,
      idleMs: 600_000,
      onError: () => {
        throw reporterFailure;
      },
    });
    try {
      await claimed.promise;
      expect(logged.mock.calls).toEqual([
        ["rest-webhooks: the processor runner's onError threw", reporterFailure],
        ["rest-webhooks: the webhook processor failed", new Error("claim failed")],
      ]);
    } finally {
      await runner.stop();
      logged.mockRestore();
    }
  });

  it("stop() resolves only after the handler in flight has settled, and the event is done", async () => {
    const inbox = createMemoryInbox();
    await inbox.add(evt("a"));
    const started = latch();
    const release = latch();
    const processor = createWebhookProcessor({ inbox }).on("*", async () => {
      started.open();
      await release.promise;
    });
    const runner = startWebhookProcessor(processor, { idleMs: 10 });
    await started.promise;
    let stopped = false;
    const stopping = runner.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    release.open();
    await stopping;
    expect((await inbox.get("a"))?.state).toBe("done");
  });
});

// Regression: with handlerTimeoutMs: Infinity, stop() waited for a handler that never settles for ever (a SIGTERM
// handler that never returned). It now waits stopGraceMs (30 s by default when attempts have no time-out).
describe("startWebhookProcessor's stop() bound", () => {
  const hangingRunner = (options: { stopGraceMs?: number; onError?: (error: unknown) => void } = {}) => {
    const inbox = createMemoryInbox();
    const started = latch();
    const processor = createWebhookProcessor({ inbox, now: () => 0, handlerTimeoutMs: Number.POSITIVE_INFINITY }).on(
      "*",
      () => {
        started.open();
        return new Promise<void>(() => {});
      },
    );
    return { inbox, started, runner: () => startWebhookProcessor(processor, { idleMs: 600_000, ...options }) };
  };

  it.each([
    { when: "after 30 s when attempts have no time-out", options: {}, graceMs: 30_000 },
    { when: "after stopGraceMs when given", options: { stopGraceMs: 5_000 }, graceMs: 5_000 },
  ])(
    "resolves $when, tells onError stop_timed_out, and leaves the event claimed for its lease",
    async ({ options, graceMs }) => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      try {
        const onError = vi.fn();
        const { inbox, started, runner: start } = hangingRunner({ ...options, onError });
        await inbox.add(evt("a"));
        const runner = start();
        await vi.advanceTimersByTimeAsync(0);
        await started.promise;
        let stopped = false;
        const stopping = runner.stop().then(() => {
          stopped = true;
        });
        await vi.advanceTimersByTimeAsync(graceMs - 1);
        expect(stopped).toBe(false);
        await vi.advanceTimersByTimeAsync(1);
        await stopping;
        expect((await inbox.get("a"))?.state).toBe("processing"); // claimed again once its lease expires
        expect(onError).toHaveBeenCalledTimes(1);
        expect(onError.mock.calls[0]?.[0]).toMatchObject({ name: "WebhookConsumerError", code: "stop_timed_out" });
      } finally {
        vi.useRealTimers();
      }
    },
  );

  it("refuses a stopGraceMs that is not a non-negative number of ms, at once", () => {
    const processor = createWebhookProcessor({ inbox: createMemoryInbox() });
    for (const stopGraceMs of [-1, Number.NaN, "5000"]) {
      expect(() => startWebhookProcessor(processor, { stopGraceMs } as never)).toThrow(/stopGraceMs/);
    }
  });

  it("exposes the processor's handlerTimeoutMs (Infinity when none) for the runner's default", () => {
    const inbox = createMemoryInbox();
    expect(createWebhookProcessor({ inbox }).handlerTimeoutMs).toBe(30_000);
    expect(createWebhookProcessor({ inbox, handlerTimeoutMs: 5_000 }).handlerTimeoutMs).toBe(5_000);
    expect(createWebhookProcessor({ inbox, handlerTimeoutMs: Number.POSITIVE_INFINITY }).handlerTimeoutMs).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
});

// The JSDoc named `adaptWebhookConsumer`, removed from the package: a reader copying the example got an import error.
describe("startWebhookProcessor's documentation", () => {
  it("calls only functions the package exports (createServer from rest-webhooks/node, not adaptWebhookConsumer)", async () => {
    const source = readFileSync(
      new URL("../../../../src/webhooks/consumer/node/processor-runner.ts", import.meta.url),
      "utf8",
    );
    const comments = source.split("\n").filter((line) => /^\s*(\/\*\*|\*)/.test(line));
    // Calls of a bare name (not `runner.stop()`) in the comments, e.g. `createServer(consumer)`.
    const called = new Set(
      comments.flatMap((line) => [...line.matchAll(/(?<![.\w])([A-Za-z_]\w*)\(/g)].map((m) => m[1])),
    );
    const exported = new Set(
      (
        await Promise.all([
          import("../../../../src/node/index"),
          import("../../../../src/webhooks/consumer/index"),
          import("../../../../src/webhooks/consumer/node/index"),
        ])
      ).flatMap((module) => Object.keys(module)),
    );
    expect(called).toContain("createServer");
    expect([...called].filter((name) => !exported.has(name as string))).toEqual([]);
  });
});
