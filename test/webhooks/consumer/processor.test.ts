import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  createWebhookProcessor,
  exponentialBackoff,
  type Inbox,
  type InboxClaimRequest,
  type InboxEvent,
  type ProcessorReport,
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

/**
 * A memory inbox with some methods replaced; a replacement that resolves `undefined` hands the call on to the memory
 * inbox.
 */
function memoryInboxBut(replaced: {
  fail: (...args: Parameters<Inbox["fail"]>) => Promise<boolean | undefined>;
}): Inbox {
  const memory = createMemoryInbox();
  return {
    add: (e) => memory.add(e),
    claim: (r) => memory.claim(r),
    complete: (c, w, n) => memory.complete(c, w, n),
    get: (id) => memory.get(id),
    deadLetters: (o) => memory.deadLetters(o),
    retryDeadLetter: (id, n) => memory.retryDeadLetter(id, n),
    purgeDone: (b) => memory.purgeDone(b),
    fail: async (c, o, n) => (await replaced.fail(c, o, n)) ?? memory.fail(c, o, n),
  };
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
      expect(await processor.processDue()).toEqual({
        claimed: 3,
        done: 3,
        retried: 0,
        dead: 0,
        lost: 0,
        errors: 0,
        purged: 0,
      });
      expect(calls.sort()).toEqual(["any:3", "exact:1", "prefix:2"]);
    });

    it("marks an event no handler matches as done by default", async () => {
      const { inbox, processor } = setup();
      await inbox.add(evt("1", "invoice.paid"));
      expect(await processor.processDue()).toMatchObject({ done: 1 });
      expect((await inbox.get("1"))?.state).toBe("done");
    });

    it('dead-letters an unhandled event with "no_handler" when asked to, and tells onError', async () => {
      const onError = vi.fn();
      const { inbox, processor } = setup({ unhandled: "dead", onError });
      await inbox.add(evt("1", "invoice.paid"));
      expect(await processor.processDue()).toMatchObject({ dead: 1 });
      expect((await inbox.deadLetters())[0]?.lastError?.code).toBe("no_handler");
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError).toHaveBeenCalledWith(
        expect.objectContaining({ code: "no_handler" }),
        expect.objectContaining({ id: "1" }),
      );
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
    // Regression: a failure the inbox did not record (the lease had passed to another processor: `fail` answers false,
    // as the PostgreSQL inbox does for a stale claim) counted as retried.
    it("counts a failure the inbox did not record, the claim gone stale, as lost", async () => {
      const stale = memoryInboxBut({ fail: async () => false });
      const { processor } = setup({ inbox: stale });
      processor.on("order.*", () => {
        throw new Error("too late");
      });
      await stale.add(evt("1"));
      expect(await processor.processDue()).toMatchObject({ claimed: 1, retried: 0, dead: 0, lost: 1, errors: 0 });
    });

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
      const onError = vi.fn();
      const { clock, inbox, processor } = setup({ leaseMs: 100, onError });
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
      // Regression: a crash loop's dead letter was not reported to anyone.
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError).toHaveBeenCalledWith(
        expect.objectContaining({ code: "attempts_exhausted" }),
        expect.objectContaining({ id: "1" }),
      );
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
      let failing = true;
      const flaky = memoryInboxBut({
        fail: async () => {
          if (failing) throw new Error("database unavailable");
          return undefined;
        },
      });
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

    // Regression: an inbox error in complete counted in errors, and the event again as retried (or errors twice when
    // fail threw too), where each claimed event ends as one of done, retried, dead, lost or errors.
    it("counts an event the inbox failed to complete once: retried when the failure is recorded, else one error", async () => {
      let failing = false;
      const inbox = new (class extends MemoryInbox {
        override complete(): Promise<never> {
          return Promise.reject(new Error("database unavailable"));
        }
        override fail(...args: Parameters<MemoryInbox["fail"]>) {
          return failing ? Promise.reject(new Error("database unavailable")) : super.fail(...args);
        }
      })();
      const onError = vi.fn();
      const { clock, processor } = setup({ inbox, leaseMs: 100, onError, retainDoneMs: false });
      processor.on("*", () => {});
      await inbox.add(evt("1"));
      const counts = (r: ProcessorReport) => r.done + r.retried + r.dead + r.lost + r.errors;
      const recorded = await processor.processDue();
      expect(recorded).toMatchObject({ claimed: 1, retried: 1, errors: 0 });
      expect(counts(recorded)).toBe(1);
      expect(await inbox.get("1")).toMatchObject({ state: "failed", availableAt: T0 + 1_000 });
      failing = true;
      clock.now = T0 + 1_000;
      const unrecorded = await processor.processDue();
      expect(unrecorded).toMatchObject({ claimed: 1, retried: 0, errors: 1 });
      expect(counts(unrecorded)).toBe(1);
      expect(onError).toHaveBeenCalledTimes(3); // each inbox error, told once
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

    // Regression: NaN or Infinity made a retry time no inbox takes; the event stayed claimed and its handler ran
    // again at every lease's end, for ever. The delivery worker reads such an answer as `undefined`.
    it("dead-letters when the policy answers NaN or an infinity, as the delivery worker does", async () => {
      for (const answer of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        const onError = vi.fn();
        const { clock, inbox, processor } = setup({ retry: () => answer, leaseMs: 1_000, onError });
        let runs = 0;
        processor.on("*", () => {
          runs++;
          throw new Error("always");
        });
        await inbox.add(evt("1"));
        expect(await processor.processDue(), String(answer)).toMatchObject({ dead: 1, errors: 0 });
        clock.now += 5_000;
        await processor.processDue();
        expect(runs, String(answer)).toBe(1);
        expect(await inbox.get("1"), String(answer)).toMatchObject({ state: "dead", lastError: { message: "always" } });
        expect(onError, String(answer)).toHaveBeenCalledTimes(1);
      }
    });

    it("retries at once for a negative delay, and cuts a delay past 365 days to it (a time PostgreSQL stores)", async () => {
      for (const [answer, wait] of [
        [-5, 0],
        [1e300, 31_536_000_000],
      ] as const) {
        const { inbox, processor } = setup({ retry: (attempts) => (attempts < 2 ? answer : undefined) });
        processor.on("*", () => {
          throw new Error("always");
        });
        await inbox.add(evt("1"));
        expect(await processor.processDue()).toMatchObject({ retried: 1 });
        expect((await inbox.get("1"))?.availableAt, String(answer)).toBe(T0 + wait);
      }
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
      const onError = vi.fn();
      const { inbox, processor } = setup({ onError });
      const handler = vi.fn();
      processor.on("order.shipped", OrderShipped, handler);
      await inbox.add(evt("1", "order.shipped", { order: 42 }));
      expect(await processor.processDue()).toMatchObject({ dead: 1 });
      expect(handler).not.toHaveBeenCalled();
      const [dead] = await inbox.deadLetters();
      expect(dead?.lastError?.code).toBe("payload_invalid");
      expect(dead?.lastError?.errors).toEqual([expect.objectContaining({ pointer: "/order", code: "invalid_type" })]);
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError).toHaveBeenCalledWith(
        expect.objectContaining({ code: "payload_invalid" }),
        expect.objectContaining({ id: "1" }),
      );
    });

    // Regression: a throwing transform or refine rejected the whole processDue, leaving the event `processing` with
    // no backoff and no onError, and the runner reporting that the inbox could not be claimed.
    it("settles a schema that throws like a failed handler: retried with backoff, onError told, siblings settled", async () => {
      const bug = new Error("bug in transform");
      const onError = vi.fn();
      const { clock, inbox, processor } = setup({ onError });
      const Throwing = OrderShipped.transform(() => {
        throw bug;
      });
      const handler = vi.fn();
      processor.on("order.shipped", Throwing, handler).on("order.created", async () => {});
      await inbox.add(evt("1", "order.shipped"));
      await inbox.add(evt("2", "order.created"));
      expect(await processor.processDue()).toMatchObject({ claimed: 2, done: 1, retried: 1, errors: 0 });
      expect(handler).not.toHaveBeenCalled();
      expect(onError).toHaveBeenCalledWith(bug, expect.objectContaining({ id: "1" }));
      expect(await inbox.get("1")).toMatchObject({
        state: "failed",
        availableAt: T0 + 1_000,
        lastError: { code: "handler_failed", message: "bug in transform" },
      });
      clock.now += 1_000;
      expect(await processor.processDue()).toMatchObject({ claimed: 1, retried: 1 });
      clock.now += 2_000;
      expect(await processor.processDue()).toMatchObject({ claimed: 1, dead: 1 });
      expect((await inbox.get("1"))?.state).toBe("dead");
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

describe("startDue: attempts started one by one, for a runner that keeps its slots busy", () => {
  it("claims at most limit events and answers, once claimed, with a promise per event that settles on its own", async () => {
    const { inbox, processor } = setup();
    let release = () => {};
    processor.on("order.slow", () => new Promise<void>((resolve) => (release = resolve)));
    processor.on("order.failed", () => {
      throw new Error("not yet");
    });
    processor.on("order.shipped", () => {});
    await inbox.add(evt("slow", "order.slow"));
    await inbox.add(evt("failing", "order.failed"));
    await inbox.add(evt("fine"));
    await inbox.add(evt("later"));
    const started = await processor.startDue(3);
    expect(started).toHaveLength(3);
    const [slow, failing, fine] = started as [Promise<unknown>, Promise<unknown>, Promise<unknown>];
    const base = { claimed: 1, done: 0, retried: 0, dead: 0, lost: 0, errors: 0, purged: 0 };
    expect(await failing).toEqual({ ...base, retried: 1 });
    expect(await fine).toEqual({ ...base, done: 1 });
    expect((await inbox.get("slow"))?.state).toBe("processing"); // still running: the others did not wait for it
    expect((await inbox.get("later"))?.state).toBe("pending"); // past the limit: not claimed
    release();
    expect(await slow).toEqual({ ...base, done: 1 });
    expect(await processor.startDue(3)).toHaveLength(1);
  });

  it("refuses a limit that is not a positive integer: it is the claim's LIMIT", async () => {
    const { processor } = setup();
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(processor.startDue(limit)).rejects.toThrow(/limit must be a positive integer/);
    }
  });

  it("purges done events when due, before it claims, a failure going to onError", async () => {
    const order: string[] = [];
    const onError = vi.fn();
    const inbox = new (class extends MemoryInbox {
      override purgeDone(): Promise<number> {
        order.push("purge");
        return Promise.reject(new Error("database unavailable"));
      }
      override claim(request: InboxClaimRequest) {
        order.push("claim");
        return super.claim(request);
      }
    })();
    const processor = createWebhookProcessor({ inbox, now: () => T0, onError }).on("*", () => {});
    await inbox.add(evt("a"));
    const [attempt] = await processor.startDue(1);
    expect(await attempt).toMatchObject({ done: 1 });
    expect(order).toEqual(["purge", "claim"]);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: "database unavailable" }), undefined);
  });

  it("claims and purges nothing once the signal it is given has aborted", async () => {
    const calls: string[] = [];
    const inbox = new (class extends MemoryInbox {
      override purgeDone(before: number) {
        calls.push("purge");
        return super.purgeDone(before);
      }
      override claim(request: InboxClaimRequest) {
        calls.push("claim");
        return super.claim(request);
      }
    })();
    const processor = createWebhookProcessor({ inbox, now: () => T0 }).on("*", () => {});
    await inbox.add(evt("a"));
    expect(await processor.startDue(1, { signal: AbortSignal.abort() })).toEqual([]);
    expect(calls).toEqual([]);
    expect(await inbox.get("a")).toMatchObject({ state: "pending", attempts: 0 });
  });

  it("rejects an event's promise only when the user's onError throws", async () => {
    const thrown = new Error("onError is broken");
    const { inbox, processor } = setup({
      retainDoneMs: false,
      onError: () => {
        throw thrown;
      },
    });
    processor.on("*", () => {
      throw new Error("handler failed");
    });
    await inbox.add(evt("a"));
    const [attempt] = await processor.startDue(1);
    await expect(attempt).rejects.toBe(thrown);
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

describe("the processor's retention of done events (retainDoneMs)", () => {
  const DAY = 86_400_000;
  const HOUR = 3_600_000;

  function purgeRecording(befores: number[], fail = () => false): MemoryInbox {
    return new (class extends MemoryInbox {
      override purgeDone(before: number) {
        befores.push(before);
        if (fail()) return Promise.reject(new Error("database unavailable"));
        return super.purgeDone(before);
      }
    })();
  }

  it("keeps done events 7 days by default: purges older ones at the first step, then at most once an hour", async () => {
    const befores: number[] = [];
    const inbox = purgeRecording(befores);
    const clock = { now: T0 };
    const processor = createWebhookProcessor({ inbox, now: () => clock.now });
    processor.on("*", () => {});
    await inbox.add(evt("a"));
    expect(await processor.processDue()).toMatchObject({ done: 1, purged: 0 });
    expect(befores).toEqual([T0 - 7 * DAY]);
    clock.now += HOUR - 1;
    await processor.processDue();
    expect(befores).toHaveLength(1);
    clock.now = T0 + 7 * DAY - 1;
    // A redelivery inside the retention is still a duplicate.
    expect(await inbox.add(evt("a"))).toEqual({ duplicate: true });
    expect(await processor.processDue()).toMatchObject({ purged: 0 });
    expect(await inbox.get("a")).toBeDefined();
    clock.now = T0 + 7 * DAY + HOUR;
    expect(await processor.processDue()).toMatchObject({ claimed: 0, purged: 1 });
    expect(await inbox.get("a")).toBeUndefined();
    expect(befores).toEqual([T0 - 7 * DAY, T0 + 7 * DAY - 1 - 7 * DAY, T0 + HOUR]);
  });

  it("purges as often as the retention when it is under an hour, and never what is not done", async () => {
    const befores: number[] = [];
    const inbox = purgeRecording(befores);
    const clock = { now: T0 };
    const processor = createWebhookProcessor({ inbox, now: () => clock.now, retainDoneMs: 1_000 });
    processor.on("order.shipped", () => {});
    processor.on("order.failed", () => {
      throw new Error("not yet");
    });
    await inbox.add(evt("done"));
    await inbox.add(evt("failing", "order.failed"));
    await processor.processDue();
    clock.now += 999;
    await processor.processDue();
    expect(await inbox.get("done")).toBeDefined();
    clock.now += 1;
    expect(await processor.processDue()).toMatchObject({ purged: 0 });
    clock.now += 1;
    expect((await processor.processDue()).purged + (await processor.processDue()).purged).toBe(0);
    clock.now += 1_000;
    expect(await processor.processDue()).toMatchObject({ purged: 1 });
    expect(await inbox.get("done")).toBeUndefined();
    expect((await inbox.get("failing"))?.state).not.toBe("done");
    expect(befores.length).toBe(3);
  });

  // Regression: after the clock was set back, no purge ran until it passed the last purge's time again (a day set
  // back, a day of done events kept past an hour's retention).
  it("purges at the next step after the clock is set back, then at most once an interval again", async () => {
    const befores: number[] = [];
    const inbox = purgeRecording(befores);
    const clock = { now: T0 };
    const processor = createWebhookProcessor({ inbox, now: () => clock.now, retainDoneMs: HOUR });
    processor.on("*", () => {});
    await processor.processDue();
    clock.now = T0 - DAY;
    await inbox.add({ ...evt("a"), receivedAt: clock.now });
    expect(await processor.processDue()).toMatchObject({ done: 1, purged: 0 });
    expect(befores).toEqual([T0 - HOUR, T0 - DAY - HOUR]);
    clock.now += HOUR - 1;
    await processor.processDue();
    expect(befores).toHaveLength(2);
    clock.now += 2;
    expect(await processor.processDue()).toMatchObject({ purged: 1 });
    expect(await inbox.get("a")).toBeUndefined();
  });

  it("keeps every done event with retainDoneMs: false", async () => {
    const befores: number[] = [];
    const inbox = purgeRecording(befores);
    const clock = { now: T0 };
    const processor = createWebhookProcessor({ inbox, now: () => clock.now, retainDoneMs: false });
    processor.on("*", () => {});
    await inbox.add(evt("a"));
    for (let i = 0; i < 5; i++) {
      await processor.processDue();
      clock.now += 30 * DAY;
    }
    expect(befores).toEqual([]);
    expect((await inbox.get("a"))?.state).toBe("done");
  });

  it("reports a failed purge to onError, finishes the step, and tries again an interval later", async () => {
    const befores: number[] = [];
    let failing = true;
    const inbox = purgeRecording(befores, () => failing);
    const clock = { now: T0 };
    const onError = vi.fn();
    const processor = createWebhookProcessor({ inbox, now: () => clock.now, retainDoneMs: DAY, onError });
    processor.on("*", () => {});
    await inbox.add(evt("a"));
    expect(await processor.processDue()).toMatchObject({ claimed: 1, done: 1, purged: 0, errors: 0 });
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: "database unavailable" }), undefined);
    failing = false;
    clock.now += HOUR - 1;
    await processor.processDue();
    expect(befores).toHaveLength(1);
    clock.now += DAY;
    expect(await processor.processDue()).toMatchObject({ purged: 1 });
  });

  it("purges once for steps that overlap", async () => {
    const befores: number[] = [];
    const processor = createWebhookProcessor({ inbox: purgeRecording(befores), now: () => T0 });
    await Promise.all([processor.processDue(), processor.processDue(), processor.processDue()]);
    expect(befores).toHaveLength(1);
  });

  it("refuses a batch size that is not a positive integer: it is each claim's LIMIT", () => {
    const inbox = createMemoryInbox();
    for (const batchSize of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, "10" as never]) {
      expect(() => createWebhookProcessor({ inbox, batchSize })).toThrow(/batchSize must be a positive integer/);
    }
    expect(createWebhookProcessor({ inbox, batchSize: 1 }).batchSize).toBe(1);
  });

  it("refuses a retention that is not a positive number, and an inbox without purgeDone unless retention is off", () => {
    const inbox = createMemoryInbox();
    for (const retainDoneMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "7d" as never, true as never]) {
      expect(() => createWebhookProcessor({ inbox, retainDoneMs })).toThrow(/retainDoneMs/);
    }
    const { purgeDone: _, ...rest } = {
      add: inbox.add.bind(inbox),
      claim: inbox.claim.bind(inbox),
      complete: inbox.complete.bind(inbox),
      fail: inbox.fail.bind(inbox),
      get: inbox.get.bind(inbox),
      deadLetters: inbox.deadLetters.bind(inbox),
      retryDeadLetter: inbox.retryDeadLetter.bind(inbox),
      purgeDone: inbox.purgeDone.bind(inbox),
    };
    const withoutPurge = rest as unknown as Inbox;
    expect(() => createWebhookProcessor({ inbox: withoutPurge })).toThrow(/retainDoneMs: false/);
    expect(() => createWebhookProcessor({ inbox: withoutPurge, retainDoneMs: false })).not.toThrow();
  });
});

describe("the processor's handler time-out (handlerTimeoutMs)", () => {
  /** Deadlines the test ends by hand: `expire()` ends every attempt's deadline made so far. */
  function handDeadlines() {
    const made: Array<{ ms: number; controller: AbortController }> = [];
    return {
      made,
      deadline: (ms: number) => {
        const controller = new AbortController();
        made.push({ ms, controller });
        return controller.signal;
      },
      expire: () => {
        for (const { controller } of made) controller.abort(new DOMException("timed out", "TimeoutError"));
      },
    };
  }
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  };

  it("fails an attempt that overruns, aborts the handler's signal, and finishes the step without it", async () => {
    const hand = handDeadlines();
    const onError = vi.fn();
    const { inbox, processor } = setup({ deadline: hand.deadline, onError, handlerTimeoutMs: 5_000 });
    let seen: AbortSignal | undefined;
    const done: string[] = [];
    processor.on("order.stuck", async ({ signal }) => {
      seen = signal;
      await new Promise(() => {}); // a call without a time-out
    });
    processor.on("order.*", async ({ event }) => void done.push(event.id));
    await inbox.add(evt("stuck", "order.stuck"));
    await inbox.add(evt("fine", "order.shipped"));
    const step = processor.processDue();
    await until(() => seen !== undefined && done.length === 1);
    expect(seen?.aborted).toBe(false);
    hand.expire();
    expect(await step).toMatchObject({ claimed: 2, done: 1, retried: 1, dead: 0, errors: 0 });
    expect(hand.made.map((m) => m.ms)).toEqual([5_000, 5_000]);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toMatchObject({ name: "WebhookConsumerError", code: "handler_timeout" });
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code: "handler_timeout" }), expect.anything());
    expect(await inbox.get("stuck")).toMatchObject({
      state: "failed",
      lastError: { code: "handler_timeout", message: "The handler did not finish within 5000 ms." },
    });
    expect((await inbox.get("fine"))?.state).toBe("done");
  });

  it("retries a time-out like a failure and dead-letters it when the attempts run out", async () => {
    const hand = handDeadlines();
    const { clock, inbox, processor } = setup({ deadline: hand.deadline });
    processor.on("*", () => new Promise(() => {}));
    await inbox.add(evt("1"));
    for (const at of [0, 1_000, 3_000]) {
      clock.now = T0 + at;
      const step = processor.processDue();
      await until(() => hand.made.length > 0);
      hand.expire();
      hand.made.length = 0;
      await step;
    }
    expect(await inbox.get("1")).toMatchObject({ state: "dead", attempts: 3, lastError: { code: "handler_timeout" } });
  });

  it("ends the attempt for an inbox that does not take the signal: the work itself fails at the time-out", async () => {
    const hand = handDeadlines();
    // complete(claim, work, now) only, as an Inbox written before the signal.
    const inbox = memoryInboxBut({ fail: async () => undefined });
    const { processor } = setup({ inbox, deadline: hand.deadline });
    processor.on("*", () => new Promise(() => {}));
    await inbox.add(evt("1"));
    const step = processor.processDue();
    await until(() => hand.made.length > 0);
    hand.expire();
    expect(await step).toMatchObject({ claimed: 1, retried: 1 });
    expect((await inbox.get("1"))?.lastError?.code).toBe("handler_timeout");
  });

  it("lets go of the deadline when the handler finishes first; a handler that finished in time is done", async () => {
    const hand = handDeadlines();
    const { inbox, processor } = setup({ deadline: hand.deadline });
    let seen: AbortSignal | undefined;
    processor.on("*", ({ signal }) => {
      seen = signal;
    });
    await inbox.add(evt("1"));
    expect(await processor.processDue()).toMatchObject({ done: 1 });
    hand.expire();
    expect(seen?.aborted).toBe(false);
    expect((await inbox.get("1"))?.state).toBe("done");
  });

  it("times out after the lease by default, and takes Infinity (or a delay past the longest timer) as none", async () => {
    for (const [options, expected] of [
      [{}, [30_000]],
      [{ leaseMs: 1_500.5 }, [1_501]],
      [{ handlerTimeoutMs: 250 }, [250]],
      [{ handlerTimeoutMs: Number.POSITIVE_INFINITY }, []],
      [{ handlerTimeoutMs: 2 ** 31 }, []],
    ] as const) {
      const hand = handDeadlines();
      const { inbox, processor } = setup({ deadline: hand.deadline, ...options });
      let seen: AbortSignal | undefined;
      processor.on("*", ({ signal }) => {
        seen = signal;
      });
      await inbox.add(evt("1"));
      await processor.processDue();
      expect(hand.made.map((m) => m.ms)).toEqual(expected);
      expect(seen?.aborted).toBe(false);
    }
  });

  it("refuses a time-out that is not a positive number, and a deadline that is not a function", () => {
    for (const handlerTimeoutMs of [0, -1, Number.NaN, Number.NEGATIVE_INFINITY, "5" as never]) {
      expect(() => setup({ handlerTimeoutMs })).toThrow(/createWebhookProcessor: handlerTimeoutMs must be a positive/);
    }
    expect(() => setup({ deadline: 5 as never })).toThrow(/createWebhookProcessor: deadline/);
  });

  it("fails the attempt at once under a deadline that has already passed, without running the handler", async () => {
    const { inbox, processor } = setup({ deadline: () => AbortSignal.abort() });
    const handler = vi.fn(() => new Promise<void>(() => {}));
    processor.on("*", handler);
    await inbox.add(evt("1"));
    expect(await processor.processDue()).toMatchObject({ retried: 1 });
    expect(handler).not.toHaveBeenCalled();
    expect((await inbox.get("1"))?.lastError?.code).toBe("handler_timeout");
  });

  it("times out with real timers by default (AbortSignal.timeout)", async () => {
    const { inbox, processor } = setup({ handlerTimeoutMs: 20 });
    processor.on("*", () => new Promise(() => {}));
    await inbox.add(evt("1"));
    expect(await processor.processDue()).toMatchObject({ retried: 1 });
    expect((await inbox.get("1"))?.lastError?.code).toBe("handler_timeout");
  });

  // Regression: the shared deadline asked for 2^31 - 1 + 100 ms, past the longest timer, which Node fires after 1 ms
  // (TimeoutOverflowWarning): every attempt failed with handler_timeout at once.
  it("lets an attempt run under a time-out of the longest timer (2^31 - 1 ms), not time it out at once", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const { inbox, processor } = setup({ handlerTimeoutMs: 2 ** 31 - 1 });
      let aborted: boolean | undefined;
      processor.on("*", async ({ signal }) => {
        // Long enough for a timer of 1 ms to have fired.
        await new Promise((resolve) => setTimeout(resolve, 20));
        aborted = signal.aborted;
      });
      await inbox.add(evt("1"));
      expect(await processor.processDue()).toMatchObject({ done: 1, retried: 0 });
      expect(aborted).toBe(false);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === "TimeoutOverflowWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("shares one timer among the attempts that start together: a timer per event cost more than processing it", async () => {
    const timeout = vi.spyOn(AbortSignal, "timeout");
    try {
      const { inbox, processor } = setup({ handlerTimeoutMs: 60_000 });
      const signals = new Set<AbortSignal>();
      processor.on("*", ({ signal }) => void signals.add(signal));
      for (let i = 0; i < 5; i++) await inbox.add(evt(`e${i}`));
      expect(await processor.processDue()).toMatchObject({ done: 5 });
      expect(timeout).toHaveBeenCalledTimes(1);
      expect(timeout.mock.calls[0]?.[0]).toBeGreaterThanOrEqual(60_000);
      expect(signals.size).toBe(5); // each attempt still has a signal of its own
    } finally {
      timeout.mockRestore();
    }
  });
});
