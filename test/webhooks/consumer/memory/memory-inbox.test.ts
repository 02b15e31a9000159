import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isThenable } from "../../../../src/http/thenable";
import type { InboxClaim, InboxState } from "../../../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../../../src/webhooks/consumer/memory/index";
import { event, inboxContract } from "../inbox-contract";

inboxContract("memory", async () => ({ inbox: createMemoryInbox() }));

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
