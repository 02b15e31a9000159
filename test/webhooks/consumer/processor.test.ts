import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  createWebhookProcessor,
  exponentialBackoff,
  type Inbox,
  type InboxClaimRequest,
  type InboxEvent,
  scheduleBackoff,
  type WebhookProcessorOptions,
} from "../../../src/webhooks/consumer/index";
import { createMemoryInbox, MemoryInbox } from "../../../src/webhooks/consumer/memory/index";

const T0 = 1_700_000_000_000;

function evt(id: string, type = "order.shipped", payload: unknown = { order: id }): InboxEvent {
  return { id, type, payload, scheme: "standard-webhooks", timestamp: undefined, receivedAt: T0 };
}

function setup(options: Partial<WebhookProcessorOptions<object>> = {}) {
  const clock = { now: T0 };
  const inbox = createMemoryInbox();
  const processor = createWebhookProcessor({
    inbox,
    now: () => clock.now,
    // Three attempts: the second 1 s after the first failure, the third 2 s after the second.
    retry: scheduleBackoff([0, 1_000, 2_000], 0),
    ...options,
  });
  return { clock, inbox: options.inbox ?? inbox, processor };
}

describe("WebhookProcessor", () => {
  describe("routing", () => {
    it("runs the one most specific handler for each event", async () => {
      const { inbox, processor } = setup();
      const calls: string[] = [];
      processor
        .on("order.shipped", ({ event }) => void calls.push(`exact:${event.id}`))
        .on("order.*", ({ event }) => void calls.push(`prefix:${event.id}`))
        .on("*", ({ event }) => void calls.push(`any:${event.id}`));
      await inbox.add(evt("1", "order.shipped"));
      await inbox.add(evt("2", "order.created"));
      await inbox.add(evt("3", "invoice.paid"));
      expect(await processor.processDue()).toEqual({ claimed: 3, done: 3, retried: 0, dead: 0, lost: 0, errors: 0 });
      expect(calls.sort()).toEqual(["any:3", "exact:1", "prefix:2"]);
    });

    it("marks an event no handler matches as done by default", async () => {
      const { inbox, processor } = setup();
      await inbox.add(evt("1", "invoice.paid"));
      expect(await processor.processDue()).toMatchObject({ done: 1 });
      expect((await inbox.get("1"))?.state).toBe("done");
    });

    it('dead-letters an unhandled event with "no_handler" when asked to', async () => {
      const { inbox, processor } = setup({ unhandled: "dead" });
      await inbox.add(evt("1", "invoice.paid"));
      expect(await processor.processDue()).toMatchObject({ dead: 1 });
      expect((await inbox.deadLetters())[0]?.lastError?.code).toBe("no_handler");
    });

    it("refuses misuse with a TypeError", () => {
      const { processor } = setup();
      expect(() => processor.on("order.*", undefined as never)).toThrow(TypeError);
      expect(() => processor.on("order.*", z.object({}), undefined as never)).toThrow(TypeError);
      expect(() => processor.on("bad..pattern", () => {})).toThrow(TypeError);
      expect(() => createWebhookProcessor({ inbox: createMemoryInbox(), leaseMs: 0 })).toThrow(TypeError);
    });
  });

  describe("retries and dead letters", () => {
    it("retries a failing handler on the backoff schedule, then dead-letters it", async () => {
      const onError = vi.fn();
      const { clock, inbox, processor } = setup({ onError });
      const attempts: number[] = [];
      processor.on("order.*", ({ attempt }) => {
        attempts.push(attempt);
        throw new Error(`failure ${attempt}`);
      });
      await inbox.add(evt("1"));
      expect(await processor.processDue()).toMatchObject({ claimed: 1, retried: 1 });
      expect(await inbox.get("1")).toMatchObject({ state: "failed", availableAt: T0 + 1_000 });
      clock.now = T0 + 999;
      expect(await processor.processDue()).toMatchObject({ claimed: 0 });
      clock.now = T0 + 1_000;
      expect(await processor.processDue()).toMatchObject({ claimed: 1, retried: 1 });
      clock.now = T0 + 3_000;
      expect(await processor.processDue()).toMatchObject({ claimed: 1, dead: 1 });
      expect(attempts).toEqual([1, 2, 3]);
      expect(onError).toHaveBeenCalledTimes(3);
      const [dead] = await inbox.deadLetters();
      expect(dead).toMatchObject({ id: "1", state: "dead", attempts: 3 });
      expect(dead?.lastError).toEqual({ code: "handler_failed", message: "failure 3" });
      clock.now = T0 + 1e9;
      expect(await processor.processDue()).toMatchObject({ claimed: 0 });
    });

    it("runs a retried dead letter again with a fresh attempt budget", async () => {
      const { clock, inbox, processor } = setup({ retry: scheduleBackoff([0], 0) });
      let healthy = false;
      processor.on("*", () => {
        if (!healthy) throw new Error("down");
      });
      await inbox.add(evt("1"));
      expect(await processor.processDue()).toMatchObject({ dead: 1 });
      healthy = true;
      expect(await inbox.retryDeadLetter("1", clock.now)).toBe(true);
      expect(await processor.processDue()).toMatchObject({ done: 1 });
      expect(await inbox.deadLetters()).toEqual([]);
    });

    it('dead-letters an event whose processors kept dying with "attempts_exhausted", without running it', async () => {
      const { clock, inbox, processor } = setup({ leaseMs: 100 });
      const handler = vi.fn();
      processor.on("*", handler);
      await inbox.add(evt("1"));
      // Three processors claimed it and died holding the lease.
      for (let i = 0; i < 3; i++) {
        await inbox.claim({ now: clock.now, leaseMs: 100, limit: 1, owner: `ghost${i}` });
        clock.now += 100;
      }
      expect(await processor.processDue()).toMatchObject({ claimed: 1, dead: 1 });
      expect(handler).not.toHaveBeenCalled();
      expect((await inbox.get("1"))?.lastError?.code).toBe("attempts_exhausted");
    });

    it("never runs a handler again once it succeeded for an event id", async () => {
      const { clock, inbox, processor } = setup({ leaseMs: 100 });
      const handler = vi.fn();
      processor.on("*", handler);
      await inbox.add(evt("1"));
      for (let i = 0; i < 10; i++) {
        await processor.processDue();
        await inbox.add(evt("1"));
        clock.now += 1_000;
      }
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it("settles nothing and counts an error when the inbox cannot record a failure; the lease brings it back", async () => {
      const memory = createMemoryInbox();
      let failing = true;
      const flaky: Inbox = {
        add: (e) => memory.add(e),
        claim: (r) => memory.claim(r),
        complete: (c, w, n) => memory.complete(c, w, n),
        get: (id) => memory.get(id),
        deadLetters: (o) => memory.deadLetters(o),
        retryDeadLetter: (id, n) => memory.retryDeadLetter(id, n),
        purgeDone: (b) => memory.purgeDone(b),
        fail: async (c, o, n) => {
          if (failing) throw new Error("database unavailable");
          return memory.fail(c, o, n);
        },
      };
      const onError = vi.fn();
      const { clock, processor } = setup({ inbox: flaky, leaseMs: 100, onError });
      let runs = 0;
      processor.on("*", () => {
        runs++;
        if (runs === 1) throw new Error("first run fails");
      });
      await flaky.add(evt("1"));
      expect(await processor.processDue()).toMatchObject({ claimed: 1, retried: 0, errors: 1 });
      expect(onError).toHaveBeenCalledTimes(2);
      failing = false;
      clock.now += 100;
      expect(await processor.processDue()).toMatchObject({ claimed: 1, done: 1 });
      expect(runs).toBe(2);
    });

    it("takes the delivery worker's retry family: exponential up to its cap, full jitter by default", () => {
      const none = exponentialBackoff({ baseMs: 100, factor: 3, capMs: 1_000, maxAttempts: 5, jitter: "none" });
      expect([1, 2, 3, 4, 5].map((n) => none(n, () => 0))).toEqual([100, 300, 900, 1_000, undefined]);
      expect(exponentialBackoff({ baseMs: 100 })(2, () => 0.5)).toBe(100);
    });

    it("dead-letters when the retry policy has no attempt left, whatever the policy", async () => {
      const { clock, inbox, processor } = setup({ retry: (attempts) => (attempts < 2 ? 5 : undefined) });
      processor.on("*", () => {
        throw new Error("always");
      });
      await inbox.add(evt("1"));
      expect(await processor.processDue()).toMatchObject({ retried: 1 });
      clock.now += 5;
      expect(await processor.processDue()).toMatchObject({ dead: 1 });
    });
  });

  describe("typed events", () => {
    const OrderShipped = z.object({ order: z.string(), carrier: z.string().default("post") });

    it("hands the handler the parsed payload", async () => {
      const { inbox, processor } = setup();
      const seen: unknown[] = [];
      processor.on("order.shipped", OrderShipped, ({ event }) => {
        seen.push(event.payload);
      });
      await inbox.add(evt("1", "order.shipped", { order: "o1" }));
      await processor.processDue();
      expect(seen).toEqual([{ order: "o1", carrier: "post" }]);
    });

    it("dead-letters a payload that does not match, with its field errors, without running the handler", async () => {
      const { inbox, processor } = setup();
      const handler = vi.fn();
      processor.on("order.shipped", OrderShipped, handler);
      await inbox.add(evt("1", "order.shipped", { order: 42 }));
      expect(await processor.processDue()).toMatchObject({ dead: 1 });
      expect(handler).not.toHaveBeenCalled();
      const [dead] = await inbox.deadLetters();
      expect(dead?.lastError?.code).toBe("payload_invalid");
      expect(dead?.lastError?.errors).toEqual([expect.objectContaining({ pointer: "/order", code: "invalid_type" })]);
    });
  });

  it("processes each event exactly once in effect under any pattern of handler failures (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        async (failurePlans, batchSize) => {
          const clock = { now: T0 };
          const inbox: MemoryInbox = createMemoryInbox();
          const processor = createWebhookProcessor({
            inbox,
            now: () => clock.now,
            retry: scheduleBackoff([0, 10, 10, 10], 0),
            batchSize,
          });
          const effects = new Map<string, number>();
          const tries = new Map<string, number>();
          processor.on("*", ({ event }) => {
            const n = tries.get(event.id) ?? 0;
            tries.set(event.id, n + 1);
            if (failurePlans[Number(event.id)]?.[n]) throw new Error("planned");
            effects.set(event.id, (effects.get(event.id) ?? 0) + 1);
          });
          for (const [i] of failurePlans.entries()) await inbox.add(evt(String(i)));
          for (let step = 0; step < 200; step++) {
            await processor.processDue();
            clock.now += 10;
          }
          for (const [i, plan] of failurePlans.entries()) {
            const firstSuccess = plan.slice(0, 4).indexOf(false);
            const record = await inbox.get(String(i));
            expect(record?.state).toBe(firstSuccess === -1 ? "dead" : "done");
            expect(effects.get(String(i)) ?? 0).toBe(firstSuccess === -1 ? 0 : 1);
            expect(tries.get(String(i))).toBe(firstSuccess === -1 ? 4 : firstSuccess + 1);
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe("the processor's owner id", () => {
  function recordingInbox(owners: string[]): Inbox {
    return new (class extends MemoryInbox {
      override claim(request: InboxClaimRequest) {
        owners.push(request.owner);
        return super.claim(request);
      }
    })();
  }

  it("comes from the injected randomId, called once", async () => {
    const owners: string[] = [];
    const randomId = vi.fn(() => "proc-fixed");
    const processor = createWebhookProcessor({ inbox: recordingInbox(owners), randomId });
    await processor.processDue();
    await processor.processDue();
    expect(randomId).toHaveBeenCalledTimes(1);
    expect(owners).toEqual(["proc-fixed", "proc-fixed"]);
  });

  it("is the given owner, without calling randomId", async () => {
    const owners: string[] = [];
    const randomId = vi.fn(() => "unused");
    await createWebhookProcessor({ inbox: recordingInbox(owners), owner: "worker-7", randomId }).processDue();
    expect(randomId).not.toHaveBeenCalled();
    expect(owners).toEqual(["worker-7"]);
  });

  it("defaults to a random UUID", async () => {
    const owners: string[] = [];
    await createWebhookProcessor({ inbox: recordingInbox(owners) }).processDue();
    expect(owners[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
