import { describe, expect, it, vi } from "vitest";
import { createWebhookProcessor, type InboxEvent, runProcessorLoop } from "../../../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../../../src/webhooks/consumer/memory/index";
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

describe("runProcessorLoop (injected sleep)", () => {
  it("steps straight on after a full batch, sleeps idleMs otherwise, errorDelayMs after a claim error", async () => {
    const controller = new AbortController();
    const claimed = [2, 2, 1, -1, 0];
    const sleeps: number[] = [];
    const onError = vi.fn();
    await runProcessorLoop({
      processor: {
        batchSize: 2,
        processDue: async () => {
          const n = claimed.shift();
          if (n === undefined) controller.abort();
          if (n === -1) throw new Error("claim failed");
          return { claimed: n ?? 0, done: n ?? 0, retried: 0, dead: 0, lost: 0, errors: 0, purged: 0 };
        },
      },
      sleep: async (ms) => void sleeps.push(ms),
      signal: controller.signal,
      idleMs: 100,
      errorDelayMs: 5_000,
      onError,
    });
    expect(sleeps).toEqual([100, 5_000, 100]);
    expect(onError).toHaveBeenCalledTimes(1);
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
