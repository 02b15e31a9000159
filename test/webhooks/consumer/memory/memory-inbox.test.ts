import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isThenable } from "../../../../src/http/thenable";
import type { InboxClaim, InboxState } from "../../../../src/webhooks/consumer/index";
import { InboxEventTooLargeError, InboxFullError } from "../../../../src/webhooks/consumer/index";
import { createMemoryInbox, type MemoryInbox } from "../../../../src/webhooks/consumer/memory/index";
import { event, inboxContract } from "../inbox-contract";

inboxContract("memory", async () => ({ inbox: createMemoryInbox() }));
inboxContract("memory, every body kept as text", async () => {
  const inbox = createMemoryInbox({ parsedBytes: 0 });
  return {
    inbox,
    // The one event the memory inbox cannot read back: one added by hand with a body that is not JSON.
    addUnreadable: async (id, receivedAt) =>
      void inbox.add(event(id, { payload: { a: 1 }, receivedAt }), { json: new TextEncoder().encode("{a: 1}") }),
  };
});

describe("MemoryInbox.add", () => {
  it("answers at once, with no promise (the consumer acknowledges in the same tick)", () => {
    const inbox = createMemoryInbox();
    const first = inbox.add(event("a"));
    expect(isThenable(first)).toBe(false);
    expect(first).toEqual({ duplicate: false });
    expect(inbox.add(event("a"))).toEqual({ duplicate: true });
  });
});

/**
 * The naive inbox the heap replaced: every claim scans the open events in arrival order and sorts the
 * due ones by due time (a stable sort, so arrival order breaks ties). The heap must agree with it.
 */
class ScanningModel {
  readonly entries = new Map<string, { state: InboxState; attempts: number; availableAt: number | undefined }>();
  readonly open = new Set<string>();

  add(id: string, at: number): void {
    if (this.entries.has(id)) return;
    this.entries.set(id, { state: "pending", attempts: 0, availableAt: at });
    this.open.add(id);
  }

  claim(now: number, limit: number, leaseMs: number): Array<[string, number]> {
    const due = [...this.open].filter((id) => (this.entries.get(id)?.availableAt ?? 0) <= now);
    due.sort((a, b) => (this.entries.get(a)?.availableAt ?? 0) - (this.entries.get(b)?.availableAt ?? 0));
    return due.slice(0, limit).map((id) => {
      const entry = this.entries.get(id)!;
      entry.state = "processing";
      entry.attempts++;
      entry.availableAt = now + leaseMs;
      return [id, entry.attempts];
    });
  }

  settle(id: string, outcome: "done" | "dead" | { retryAt: number }): void {
    const entry = this.entries.get(id)!;
    if (outcome === "done" || outcome === "dead") {
      entry.state = outcome;
      entry.availableAt = undefined;
      this.open.delete(id);
    } else {
      entry.state = "failed";
      entry.availableAt = outcome.retryAt;
    }
  }

  retryDead(id: string, now: number): void {
    const entry = this.entries.get(id);
    if (entry?.state !== "dead") return;
    Object.assign(entry, { state: "pending", attempts: 0, availableAt: now });
    this.open.add(id);
  }
}

type Op =
  | { kind: "add"; id: number; offset: number }
  | { kind: "claim"; limit: number }
  | { kind: "settle"; pick: number; outcome: "done" | "dead" | "throws" | number }
  | { kind: "retryDead"; id: number }
  | { kind: "tick"; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  // Coarse times, so that equal due times (ties broken by arrival) are common.
  fc.record({ kind: fc.constant("add" as const), id: fc.nat(30), offset: fc.constantFrom(-20, -10, 0, 0, 10) }),
  fc.record({ kind: fc.constant("claim" as const), limit: fc.integer({ min: 1, max: 6 }) }),
  fc.record({
    kind: fc.constant("settle" as const),
    pick: fc.nat(),
    outcome: fc.oneof(fc.constantFrom("done" as const, "dead" as const, "throws" as const), fc.constantFrom(0, 20, 40)),
  }),
  fc.record({ kind: fc.constant("retryDead" as const), id: fc.nat(30) }),
  fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(0, 10, 40, 60) }),
);

describe("MemoryInbox claims by a heap", () => {
  it("claims exactly what the scanning reference claims, in the same order, on any history", async () => {
    const LEASE = 40;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 120 }), async (ops) => {
        const inbox = createMemoryInbox();
        const model = new ScanningModel();
        let now = 1_000;
        let held: InboxClaim[] = [];
        for (const op of ops) {
          if (op.kind === "tick") now += op.ms;
          else if (op.kind === "add") {
            await inbox.add(event(`e${op.id}`, { receivedAt: now + op.offset }));
            model.add(`e${op.id}`, now + op.offset);
          } else if (op.kind === "claim") {
            const claims = await inbox.claim({ now, leaseMs: LEASE, limit: op.limit, owner: "p" });
            expect(claims.map((c) => [c.event.id, c.attempts])).toEqual(model.claim(now, op.limit, LEASE));
            // A new claim on an event makes an older one stale.
            held = [...held.filter((h) => !claims.some((c) => c.event.id === h.event.id)), ...claims];
          } else if (op.kind === "settle" && held.length > 0) {
            const claim = held.splice(op.pick % held.length, 1)[0]!;
            const error = { code: "handler_failed" as const, message: "x" };
            if (op.outcome === "done") {
              expect(await inbox.complete(claim, async () => {}, now)).toEqual({ outcome: "done" });
              model.settle(claim.event.id, "done");
            } else if (op.outcome === "throws") {
              const result = await inbox.complete(claim, () => Promise.reject(new Error("x")), now);
              expect(result.outcome).toBe("failed"); // stays processing until its lease expires
              held.push(claim);
            } else if (op.outcome === "dead") {
              expect(await inbox.fail(claim, { dead: true, error }, now)).toBe(true);
              model.settle(claim.event.id, "dead");
            } else {
              expect(await inbox.fail(claim, { retryAt: now + op.outcome, error }, now)).toBe(true);
              model.settle(claim.event.id, { retryAt: now + op.outcome });
            }
          } else if (op.kind === "retryDead") {
            await inbox.retryDeadLetter(`e${op.id}`, now);
            model.retryDead(`e${op.id}`, now);
          }
        }
        for (const [id, expected] of model.entries) {
          expect(await inbox.get(id)).toMatchObject(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("takes a claimed event out of the due order even with a zero lease (claimed once per call)", async () => {
    const inbox = createMemoryInbox();
    await inbox.add(event("a", { receivedAt: 0 }));
    await inbox.add(event("b", { receivedAt: 0 }));
    const claims = await inbox.claim({ now: 0, leaseMs: 0, limit: 10, owner: "p" });
    expect(claims.map((c) => c.event.id)).toEqual(["a", "b"]);
  });
});

describe("the memory inbox's bound on done events (maxDone)", () => {
  const T = 1_700_000_000_000;

  async function finish(inbox: ReturnType<typeof createMemoryInbox>, ids: string[], at: number): Promise<void> {
    for (const id of ids) await inbox.add(event(id, { receivedAt: at }));
    const claims = await inbox.claim({ now: at, leaseMs: 1_000, limit: ids.length, owner: "p" });
    for (const claim of claims) await inbox.complete(claim, async () => {}, at);
  }

  it("keeps the most recently done events, drops the oldest first, and stores a dropped id again as new", async () => {
    const inbox = createMemoryInbox({ maxDone: 3 });
    await finish(inbox, ["a", "b", "c"], T);
    await finish(inbox, ["d"], T + 1);
    expect(await inbox.get("a")).toBeUndefined();
    expect((await inbox.get("b"))?.state).toBe("done");
    expect(await inbox.add(event("b"))).toEqual({ duplicate: true });
    expect(await inbox.add(event("a"))).toEqual({ duplicate: false });
    expect(inbox.size).toBe(4);
  });

  it("never drops an event that is not done: pending, processing, failed or dead", async () => {
    const inbox = createMemoryInbox({ maxDone: 1 });
    for (const id of ["processing", "failed", "dead"]) await inbox.add(event(id, { receivedAt: T }));
    const claims = await inbox.claim({ now: T, leaseMs: 1_000, limit: 3, owner: "p" });
    const byId = new Map(claims.map((claim) => [claim.event.id, claim]));
    const error = { code: "handler_failed" as const, message: "x" };
    await inbox.fail(byId.get("failed")!, { retryAt: T + 10, error }, T);
    await inbox.fail(byId.get("dead")!, { dead: true, error }, T);
    // Not due before T + 100, so the claims below (at T + 5) leave it pending.
    await inbox.add(event("pending", { receivedAt: T + 100 }));
    await finish(inbox, ["d1", "d2", "d3"], T + 5);
    expect(inbox.size).toBe(5);
    for (const id of ["pending", "processing", "failed", "dead", "d3"]) expect(await inbox.get(id)).toBeDefined();
  });

  it("agrees with a list of done ids under long churn and purges in between (the front is compacted)", async () => {
    const inbox = createMemoryInbox({ maxDone: 50 });
    const model: Array<{ id: string; at: number }> = [];
    for (let round = 0; round < 60; round++) {
      const ids = Array.from({ length: 97 }, (_, i) => `e${round}_${i}`);
      await finish(inbox, ids, T + round);
      for (const id of ids) model.push({ id, at: T + round });
      model.splice(0, Math.max(0, model.length - 50));
      if (round % 25 === 24) {
        const purged = await inbox.purgeDone(T + round);
        expect(purged).toBe(model.filter((m) => m.at < T + round).length);
        model.splice(0, model.length, ...model.filter((m) => m.at >= T + round));
      }
      expect(inbox.size).toBe(model.length);
    }
    for (const { id } of model) expect((await inbox.get(id))?.state).toBe("done");
    expect(await inbox.get("e58_0")).toBeUndefined();
  });

  it("refuses a bound that is not a positive integer", () => {
    for (const maxDone of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "10" as never]) {
      expect(() => createMemoryInbox({ maxDone })).toThrow(/maxDone/);
    }
  });
});

describe("the memory inbox's bound on bytes held (maxBytes)", () => {
  const T = 1_700_000_000_000;
  const encoder = new TextEncoder();
  // An event whose body as received is `size` bytes: its id and type ("t") count too.
  const sized = (id: string, size: number) => {
    const text = JSON.stringify({ pad: "x".repeat(size - 10) });
    return { event: event(id, { type: "t", payload: JSON.parse(text), receivedAt: T }), json: encoder.encode(text) };
  };
  const add = (inbox: MemoryInbox, id: string, size: number) => {
    const { event: e, json } = sized(id, size);
    return inbox.add(e, { json });
  };
  const finish = async (inbox: MemoryInbox, ids: string[], at: number) => {
    // A zero lease: what is claimed and not completed here is claimable again by the next call.
    const claims = await inbox.claim({ now: at, leaseMs: 0, limit: 1_000, owner: "p" });
    for (const claim of claims) if (ids.includes(claim.event.id)) await inbox.complete(claim, async () => {}, at);
  };

  it("counts the body as received, with the id and type", () => {
    const inbox = createMemoryInbox();
    add(inbox, "ab", 100);
    expect(inbox.bytes).toBe(100 + 2 + 1);
    inbox.add(event("raw", { type: "t", payload: new Uint8Array(40) }));
    expect(inbox.bytes).toBe(103 + 40 + 4);
    inbox.add(event("text", { type: "t", payload: "hello" }));
    expect(inbox.bytes).toBe(147 + 5 + 5);
    // No body passed: the length of the payload's JSON text.
    inbox.add(event("form", { type: "t", payload: { a: "1" } }));
    expect(inbox.bytes).toBe(157 + '{"a":"1"}'.length + 5);
    expect(inbox.add(event("ab", { type: "t" }))).toEqual({ duplicate: true });
    expect(inbox.bytes).toBe(157 + 9 + 5);
  });

  it("counts text, JSON text, ids and types in UTF-8 bytes, not UTF-16 units", () => {
    const inbox = createMemoryInbox();
    // "注文" is 2 units and 6 bytes; "é" 1 unit and 2 bytes; "😀" 2 units and 4 bytes.
    inbox.add(event("注文", { type: "é", payload: "😀" }));
    expect(inbox.bytes).toBe(4 + 6 + 2);
    inbox.add(event("id", { type: "t", payload: { note: "注文" } }));
    expect(inbox.bytes).toBe(12 + '{"note":""}'.length + 6 + 2 + 1);
  });

  it("refuses with InboxFullError when events not yet done fill it, storing nothing and dropping nothing", () => {
    const inbox = createMemoryInbox({ maxBytes: 1_000 });
    for (let i = 0; i < 3; i++) add(inbox, `e${i}`, 300);
    const held = inbox.bytes;
    expect(held).toBe(3 * 303);
    const refused = (() => {
      try {
        add(inbox, "e3", 300);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(InboxFullError);
    expect(refused).toMatchObject({ code: "inbox_full", limit: 1_000 });
    expect(inbox.size).toBe(3);
    expect(inbox.bytes).toBe(held);
    // A redelivery of an event it holds is still a duplicate, full or not; a smaller one still fits.
    expect(add(inbox, "e1", 300)).toEqual({ duplicate: true });
    expect(add(inbox, "small", 50)).toEqual({ duplicate: false });
  });

  it("refuses an event larger than maxBytes alone with InboxEventTooLargeError, empty or full, dropping nothing", async () => {
    // Regression: such an event was refused with InboxFullError, a 503 asking for redeliveries that never fit.
    for (const held of [0, 300]) {
      const inbox = createMemoryInbox({ maxBytes: 1_000 });
      if (held > 0) {
        add(inbox, "done", held);
        await finish(inbox, ["done"], T);
      }
      const refused = (() => {
        try {
          add(inbox, "huge", 998);
        } catch (error) {
          return error;
        }
      })();
      expect(refused).toBeInstanceOf(InboxEventTooLargeError);
      expect(refused).toMatchObject({ code: "event_too_large", limit: 1_000, size: 998 + 4 + 1 });
      expect(refused).not.toBeInstanceOf(InboxFullError);
      expect(inbox.size).toBe(held > 0 ? 1 : 0);
      // One that fits exactly is taken.
      expect(add(inbox, "fits", 1_000 - 4 - 1 - (held > 0 ? 5 : 0))).toEqual({ duplicate: false });
      expect(inbox.bytes).toBe(1_000);
    }
  });

  it("keeps a done event's id, type and state without its payload, and counts its id and type alone", async () => {
    const inbox = createMemoryInbox({ maxBytes: 1_000 });
    add(inbox, "a", 300);
    add(inbox, "b", 300);
    expect(inbox.bytes).toBe(2 * 302);
    await finish(inbox, ["a"], T);
    expect(await inbox.get("a")).toMatchObject({ id: "a", type: "t", state: "done", doneAt: T, payload: undefined });
    expect(inbox.bytes).toBe(2 + 302);
    // Still a duplicate: de-duplication needs the id alone.
    expect(add(inbox, "a", 300)).toEqual({ duplicate: true });
    expect(inbox.bytes).toBe(2 + 302);
    // Two more of 300 fit beside "b" and "a" stays; had "a" still counted its payload, it would have been dropped.
    add(inbox, "c", 300);
    add(inbox, "d", 300);
    expect(inbox.bytes).toBe(2 + 3 * 302);
    expect((await inbox.get("a"))?.state).toBe("done");
  });

  it("makes room by dropping done events, the one done longest ago first, and only as many as it needs", async () => {
    const inbox = createMemoryInbox({ maxBytes: 1_000 });
    add(inbox, "a", 300);
    add(inbox, "b", 300);
    add(inbox, "c", 300);
    await finish(inbox, ["a"], T);
    await finish(inbox, ["b"], T + 1);
    add(inbox, "d", 300);
    add(inbox, "e", 300);
    expect(inbox.bytes).toBe(2 + 2 + 3 * 302);
    // 91 more would pass 1,000 by one byte: dropping "a" (2 bytes) is enough, and "b" stays.
    expect(add(inbox, "f", 89)).toEqual({ duplicate: false });
    expect(await inbox.get("a")).toBeUndefined();
    expect((await inbox.get("b"))?.state).toBe("done");
    expect(inbox.bytes).toBe(999);
    // Dropping "b" too would not make room for 12 more: refused, and "b" kept.
    expect(() => add(inbox, "g", 10)).toThrow(InboxFullError);
    expect((await inbox.get("b"))?.state).toBe("done");
    // Once the rest is done, they take their ids' room alone.
    await finish(inbox, ["c", "d", "e", "f"], T + 2);
    expect(inbox.bytes).toBe(5 * 2);
    // A dropped id no longer de-duplicates, as past maxDone.
    expect(add(inbox, "a", 300)).toEqual({ duplicate: false });
  });

  it("checks before dropping: a refused event costs no done event its de-duplication", async () => {
    const inbox = createMemoryInbox({ maxBytes: 1_000 });
    add(inbox, "done", 300);
    await finish(inbox, ["done"], T);
    add(inbox, "open", 600);
    expect(() => add(inbox, "big", 500)).toThrow(InboxFullError);
    expect((await inbox.get("done"))?.state).toBe("done");
  });

  it("counts dead letters as held: they wait for an operator, not for the processor", async () => {
    const inbox = createMemoryInbox({ maxBytes: 700 });
    add(inbox, "a", 300);
    const [claim] = await inbox.claim({ now: T, leaseMs: 1_000, limit: 1, owner: "p" });
    await inbox.fail(claim!, { dead: true, error: { code: "handler_failed", message: "x" } }, T);
    add(inbox, "b", 300);
    expect(() => add(inbox, "c", 300)).toThrow(InboxFullError);
  });

  it("has no bound with Infinity, and refuses a bound that is not a positive integer", () => {
    const inbox = createMemoryInbox({ maxBytes: Number.POSITIVE_INFINITY });
    // Past the default's 64 MiB.
    const { event: e, json } = sized("e", 1_000_000);
    for (let i = 0; i < 70; i++) inbox.add({ ...e, id: `e${i}` }, { json });
    expect(inbox.size).toBe(70);
    for (const maxBytes of [0, -1, 1.5, Number.NaN, "10" as never]) {
      expect(() => createMemoryInbox({ maxBytes })).toThrow(/createMemoryInbox: maxBytes must be a positive integer/);
    }
  });

  it("never holds more than maxBytes, and never loses an event it acknowledged and has not done, on any history", async () => {
    const MAX = 2_000;
    const step = fc.oneof(
      fc.record({ kind: fc.constant("add" as const), id: fc.nat(40), size: fc.integer({ min: 20, max: 900 }) }),
      fc.record({ kind: fc.constant("finish" as const), limit: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ kind: fc.constant("dead" as const) }),
      fc.record({ kind: fc.constant("purge" as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 80 }), async (steps) => {
        const inbox = createMemoryInbox({ maxBytes: MAX, maxDone: 5 });
        const acknowledged = new Set<string>();
        const done = new Set<string>();
        let now = T;
        for (const s of steps) {
          now += 1;
          if (s.kind === "add") {
            try {
              if (!add(inbox, `e${s.id}`, s.size).duplicate) acknowledged.add(`e${s.id}`);
            } catch (error) {
              expect(error).toBeInstanceOf(InboxFullError);
            }
          } else if (s.kind === "purge") {
            await inbox.purgeDone(now - 3);
          } else {
            const claims = await inbox.claim({ now, leaseMs: 0, limit: s.kind === "dead" ? 1 : s.limit, owner: "p" });
            for (const claim of claims) {
              if (s.kind === "dead") {
                await inbox.fail(claim, { dead: true, error: { code: "handler_failed", message: "x" } }, now);
              } else if ((await inbox.complete(claim, async () => {}, now)).outcome === "done") {
                done.add(claim.event.id);
              }
            }
          }
          expect(inbox.bytes).toBeLessThanOrEqual(MAX);
          let sum = 0;
          for (const id of acknowledged) {
            const record = await inbox.get(id);
            if (!done.has(id)) expect(record?.state).not.toBe("done");
            if (!done.has(id)) expect(record).toBeDefined();
            if (record?.state === "done") expect(record.payload).toBeUndefined();
            if (record !== undefined) {
              sum += (record.state === "done" ? 0 : JSON.stringify(record.payload).length) + id.length + 1;
            }
          }
          expect(inbox.bytes).toBe(sum);
          // A dropped done event is stored again as new when it comes back.
          for (const id of done) {
            if ((await inbox.get(id)) !== undefined) continue;
            acknowledged.delete(id);
            done.delete(id);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("the memory inbox's backlog kept as text (parsedBytes)", () => {
  const T = 1_700_000_000_000;
  const encoder = new TextEncoder();
  // An event of `size` bytes as received ("t" and its id count too), with its body and its parsed payload.
  const sized = (id: string, size: number) => {
    const text = JSON.stringify({ id, pad: "x".repeat(size - 18 - id.length) });
    const payload: unknown = JSON.parse(text);
    return { event: event(id, { type: "t", payload, receivedAt: T }), json: encoder.encode(text), payload };
  };
  const claimAll = (inbox: MemoryInbox, at = T) => inbox.claim({ now: at, leaseMs: 0, limit: 1_000, owner: "p" });

  it("keeps payloads parsed while fewer than parsedBytes of events wait, and the bodies of the rest", async () => {
    const inbox = createMemoryInbox({ parsedBytes: 500 });
    const events = ["a", "b", "c", "d"].map((id) => sized(id, 300));
    for (const { event: e, json } of events) inbox.add(e, { json });
    // "a" and "b" arrived with 0 and 302 bytes waiting, "c" and "d" with 604 and 906: parsed again when claimed.
    const claims = await claimAll(inbox);
    expect(claims.map((c) => c.event.payload === events.find((e) => e.event.id === c.event.id)?.payload)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(claims.map((c) => c.event)).toEqual(events.map((e) => e.event));
    // Counted alike either way.
    expect(inbox.bytes).toBe(4 * 302);
    // Done, each lets its payload go; with nothing waiting, the next is kept parsed.
    for (const claim of claims) await inbox.complete(claim, async () => {}, T);
    expect(await inbox.get("c")).toMatchObject({ id: "c", state: "done", payload: undefined });
    expect(inbox.bytes).toBe(4 * 2);
    const next = sized("e", 300);
    inbox.add(next.event, { json: next.json });
    expect((await claimAll(inbox))[0]?.event.payload).toBe(next.payload);
  });

  it("reads a kept body on every claim, get and dead letter alike, each time a value of its own", async () => {
    const inbox = createMemoryInbox({ parsedBytes: 0 });
    const { event: e, json, payload } = sized("a", 100);
    inbox.add(e, { json });
    expect(await inbox.get("a")).toMatchObject({ id: "a", payload, state: "pending" });
    const [first] = await claimAll(inbox);
    expect(first?.event).toEqual(e);
    // A handler that changes its payload changes its own copy, not what a retry reads.
    (first?.event.payload as { pad: string }).pad = "changed";
    await inbox.fail(first as InboxClaim, { dead: true, error: { code: "handler_failed", message: "no" } }, T);
    expect((await inbox.deadLetters())[0]?.payload).toEqual(payload);
    await inbox.retryDeadLetter("a", T);
    expect((await claimAll(inbox))[0]?.event.payload).toEqual(payload);
  });

  it("makes a dead letter at once of an event added by hand with a body that is not JSON, and claims the rest", async () => {
    const inbox = createMemoryInbox({ parsedBytes: 0 });
    const good = sized("good", 100);
    inbox.add(event("bad", { type: "t", payload: { a: 1 } }), { json: encoder.encode("{a: 1}") });
    inbox.add(good.event, { json: good.json });
    const claims = await claimAll(inbox);
    expect(claims.map((c) => c.event)).toEqual([good.event]);
    const [dead] = await inbox.deadLetters();
    expect(dead).toMatchObject({ id: "bad", state: "dead", attempts: 0, payload: undefined });
    expect(dead?.lastError).toMatchObject({ code: "row_invalid", message: /not JSON/ });
    // Claimed again at once (a zero lease), the good one alone.
    expect((await claimAll(inbox, T + 1)).map((c) => c.event.id)).toEqual(["good"]);
  });

  // Regression: an onInvalid that threw (a processor's onError) ended the claim with the events after the unreadable
  // one already taken out of the heap and not yet leased: pending, never due again, never run.
  it("loses no event claimed beside an unreadable one when onInvalid throws", async () => {
    const inbox = createMemoryInbox({ parsedBytes: 0 });
    inbox.add(event("bad", { type: "t", payload: { a: 1 }, receivedAt: T }), { json: encoder.encode("{a: 1}") });
    const good = sized("good", 100);
    inbox.add({ ...good.event, receivedAt: T + 1 }, { json: good.json });
    const onInvalid = () => {
      throw new Error("onError threw");
    };
    await expect(inbox.claim({ now: T + 1, leaseMs: 10, limit: 10, owner: "p", onInvalid })).rejects.toThrow(
      "onError threw",
    );
    expect((await inbox.get("bad"))?.state).toBe("dead");
    // The claim failed, so its leases run out and the good event is claimed again.
    const claims = await inbox.claim({ now: T + 1_000, leaseMs: 10, limit: 10, owner: "p" });
    expect(claims.map((c) => c.event.id)).toEqual(["good"]);
  });

  it("keeps events added without their body as they came, past the bound too", async () => {
    const inbox = createMemoryInbox({ parsedBytes: 0 });
    const payload = { form: "fields" };
    inbox.add(event("form", { payload }));
    const bytes = new Uint8Array([1, 2, 3]);
    inbox.add(event("raw", { payload: bytes }));
    const claims = await claimAll(inbox);
    expect(claims.map((c) => c.event.payload)).toEqual([payload, bytes]);
    expect(claims[0]?.event.payload).toBe(payload);
  });

  it("parses every payload with Infinity, and refuses a bound that is not a non-negative integer", async () => {
    const inbox = createMemoryInbox({ parsedBytes: Number.POSITIVE_INFINITY, maxBytes: Number.POSITIVE_INFINITY });
    const events = Array.from({ length: 50 }, (_, i) => sized(`e${i}`, 100_000));
    for (const { event: e, json } of events) inbox.add(e, { json });
    const claims = await claimAll(inbox);
    expect(claims.every((c, i) => c.event.payload === events[i]?.payload)).toBe(true);
    for (const parsedBytes of [-1, 1.5, Number.NaN, "10" as never]) {
      expect(() => createMemoryInbox({ parsedBytes })).toThrow(
        /createMemoryInbox: parsedBytes must be a non-negative integer/,
      );
    }
  });
});
