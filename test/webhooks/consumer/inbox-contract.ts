/**
 * The one contract every Inbox implementation passes (memory, PostgreSQL): de-duplication,
 * claiming under a lease, completion, retries, dead letters. Times are explicit Unix ms values.
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createWebhookProcessor,
  type Inbox,
  type InboxClaim,
  type InboxEvent,
  scheduleBackoff,
} from "../../../src/webhooks/consumer/index";

export interface InboxUnderTest {
  inbox: Inbox;
  /** Called after each test. */
  cleanup?: () => Promise<void>;
  /** For an inbox whose work runs in a transaction: writes `tag` through the work's context… */
  write?: (context: object, tag: string) => Promise<unknown>;
  /** …and reads back the tags that were committed. */
  written?: () => Promise<string[]>;
  /**
   * Stores an event due at `receivedAt` that the inbox cannot read back (a column written by hand or by another
   * version; for the memory inbox, a body added by hand that is not JSON). Without it the tests of such events skip.
   */
  addUnreadable?: (id: string, receivedAt: number) => Promise<void>;
  /**
   * Resolves once a settlement of a claim waits for another settlement of it that holds it (PostgreSQL: a lock wait on
   * the row), so a race test can end the first only then. Without it the test goes on at once (the memory inbox
   * registers its wait before the caller's next turn).
   */
  settlementWaiting?: () => Promise<void>;
}

const T0 = 1_700_000_000_000;
const LEASE = 30_000;

export function event(id: string, overrides: Partial<InboxEvent> = {}): InboxEvent {
  return {
    id,
    type: "order.shipped",
    payload: { order: id, lines: [1, 2], note: "é ✓ \u0000", nested: { ok: true, none: null } },
    scheme: "standard-webhooks",
    timestamp: 1_700_000_000,
    receivedAt: T0,
    ...overrides,
  };
}

function latch(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Completes `claim` with work that never settles, under `signal`; resolves once the work has started, with the
 * completion (wrapped: an async function would wait for it).
 */
async function completeHanging(inbox: Inbox, claim: InboxClaim, signal: AbortSignal) {
  const started = latch();
  const running = inbox.complete(
    claim,
    async () => {
      started.open();
      await new Promise(() => {});
    },
    T0,
    { signal },
  );
  await started.promise;
  return { running };
}

/** What the backend under test can do. */
export interface InboxContractOptions {
  /**
   * Whether a query can run beside an open transaction (a server's pool). PGlite is one connection: a claim made while
   * a completion's work runs waits for it, and then finds the event done.
   */
  concurrent?: boolean;
}

export function inboxContract(
  name: string,
  factory: () => Promise<InboxUnderTest>,
  options: InboxContractOptions = {},
): void {
  const concurrent = options.concurrent ?? true;
  describe(`Inbox contract: ${name}`, () => {
    let subject: InboxUnderTest | undefined;
    let inbox: Inbox;
    const claim = (now: number, limit = 10, owner = "p1") => inbox.claim({ now, leaseMs: LEASE, limit, owner });

    beforeEach(async () => {
      subject = await factory();
      inbox = subject.inbox;
    });
    afterEach(async () => {
      await subject?.cleanup?.();
    });

    describe("add", () => {
      it("stores a pending event that reads back equal", async () => {
        expect(await inbox.add(event("a"))).toEqual({ duplicate: false });
        const record = await inbox.get("a");
        expect(record).toMatchObject({ ...event("a"), state: "pending", attempts: 0, availableAt: T0 });
        expect(record?.lastError).toBeUndefined();
        expect(await inbox.get("missing")).toBeUndefined();
      });

      it("stores a redelivered id once and reports it as a duplicate", async () => {
        await inbox.add(event("a"));
        expect(await inbox.add(event("a", { payload: { other: true } }))).toEqual({ duplicate: true });
        expect((await inbox.get("a"))?.payload).toEqual(event("a").payload);
        expect(await claim(T0)).toHaveLength(1);
      });

      // The docs promise one stored event per id whatever the provider does, redeliveries racing each other included.
      it("stores one of two adds of one id made at once, with different bodies, and reports the other a duplicate", async () => {
        const first = event("a", { payload: { body: 1 } });
        const second = event("a", { payload: { body: 2 } });
        const results = await Promise.all([inbox.add(first), inbox.add(second)]);
        expect(results.map((r) => r.duplicate).sort()).toEqual([false, true]);
        const stored = results[0]?.duplicate === false ? first : second;
        expect((await inbox.get("a"))?.payload).toEqual(stored.payload);
        const claims = await claim(T0);
        expect(claims.map((c) => [c.event.id, c.event.payload])).toEqual([["a", stored.payload]]);
      });

      it("keeps payloads of any JSON shape", async () => {
        const payloads = [null, "text", 42, [1, "two", { three: 3 }], { deep: { er: [true, false] } }];
        for (const [i, payload] of payloads.entries()) await inbox.add(event(`p${i}`, { payload }));
        for (const [i, payload] of payloads.entries()) expect((await inbox.get(`p${i}`))?.payload).toEqual(payload);
      });

      it("gives back the payload of an event added with its body as received, as verify read that body", async () => {
        const encoder = new TextEncoder();
        const bodies = [
          encoder.encode(JSON.stringify(event("x").payload)),
          encoder.encode(' {"n": 1e3, "s": "\\u00e9", "a": [ ], "k": -0} '),
          Uint8Array.of(0xef, 0xbb, 0xbf, ...encoder.encode('{"bom":true}')),
          Uint8Array.of(...encoder.encode('{"bad":"'), 0xff, 0xc3, ...encoder.encode('"}')),
        ];
        // verify's reading: UTF-8 with a leading byte order mark dropped and invalid bytes replaced.
        const payloads = bodies.map((json) => JSON.parse(new TextDecoder().decode(json)) as unknown);
        for (const [i, json] of bodies.entries()) await inbox.add(event(`b${i}`, { payload: payloads[i] }), { json });
        // The caller's buffer is the caller's: what was added stays as it was.
        for (const json of bodies) json.fill(0x20);
        for (const [i, payload] of payloads.entries()) expect((await inbox.get(`b${i}`))?.payload).toEqual(payload);
        const claims = await claim(T0, 10);
        expect(claims.map((c) => [c.event.id, c.event.payload])).toEqual(payloads.map((p, i) => [`b${i}`, p]));
      });

      // The consumer stores an empty body's payload as null; the memory inbox, keeping the body as text (past
      // parsedBytes), read it back as undefined where PostgreSQL gave null.
      it("gives back null for an event added with an empty body, as the consumer stores it", async () => {
        await inbox.add(event("empty", { payload: null }), { json: new Uint8Array(0) });
        expect((await inbox.get("empty"))?.payload).toBeNull();
        const [claimed] = await claim(T0);
        expect(claimed?.event.payload).toBeNull();
      });

      // NaN compares false with everything: the memory inbox stored it due at NaN, PostgreSQL refused it its own way.
      it("refuses an event whose receivedAt is not a finite number, alike in every inbox, and stores nothing", async () => {
        for (const receivedAt of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
          // Thrown or rejected: add may answer at once.
          const adding = (async () => inbox.add(event("bad", { receivedAt })))();
          await expect(adding, String(receivedAt)).rejects.toThrow(/^Inbox\.add: receivedAt must be a finite number/);
          await expect(adding).rejects.toBeInstanceOf(TypeError);
        }
        expect(await inbox.get("bad")).toBeUndefined();
        expect(await claim(Number.MAX_SAFE_INTEGER)).toEqual([]);
      });

      it("keeps an event without a provider timestamp", async () => {
        await inbox.add(event("a", { timestamp: undefined }));
        expect((await inbox.get("a"))?.timestamp).toBeUndefined();
      });
    });

    describe("claim", () => {
      it("claims due events oldest first, up to the limit, one attempt each", async () => {
        await inbox.add(event("late", { receivedAt: T0 + 2 }));
        await inbox.add(event("early", { receivedAt: T0 }));
        await inbox.add(event("middle", { receivedAt: T0 + 1 }));
        await inbox.add(event("future", { receivedAt: T0 + 10_000 }));
        const claims = await claim(T0 + 5, 2);
        expect(claims.map((c) => c.event.id)).toEqual(["early", "middle"]);
        expect(claims.map((c) => c.attempts)).toEqual([1, 1]);
        expect((await claim(T0 + 5)).map((c) => c.event.id)).toEqual(["late"]);
        expect(await claim(T0 + 5)).toEqual([]);
        expect((await inbox.get("early"))?.state).toBe("processing");
        expect((await inbox.get("early"))?.availableAt).toBe(T0 + 5 + LEASE);
      });

      it("gives a claimed event to nobody else until its lease expires, then to the next claimant", async () => {
        await inbox.add(event("a"));
        const [first] = await claim(T0, 10, "p1");
        expect(await claim(T0 + LEASE - 1, 10, "p2")).toEqual([]);
        const [second] = await claim(T0 + LEASE, 10, "p2");
        expect(second?.attempts).toBe(2);
        expect(second?.token).not.toBe(first?.token);
      });

      it("hands concurrent claimants disjoint events", async () => {
        for (let i = 0; i < 20; i++) await inbox.add(event(`e${i}`, { receivedAt: T0 + i }));
        const batches = await Promise.all([1, 2, 3, 4].map((p) => claim(T0 + 100, 6, `p${p}`)));
        const ids = batches.flat().map((c) => c.event.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids).toHaveLength(20);
      });
    });

    describe("complete", () => {
      it("runs the work and marks the event done; a done event is never claimed again", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        let ran = 0;
        expect(await inbox.complete(c!, async () => void ran++, T0 + 10)).toEqual({ outcome: "done" });
        expect(ran).toBe(1);
        expect(await inbox.get("a")).toMatchObject({ state: "done", doneAt: T0 + 10, availableAt: undefined });
        expect(await claim(T0 + 10 * LEASE)).toEqual([]);
        expect(await inbox.add(event("a"))).toEqual({ duplicate: true });
      });

      it("does not run the work of a claim that was taken over", async () => {
        await inbox.add(event("a"));
        const [stale] = await claim(T0, 10, "p1");
        const [fresh] = await claim(T0 + LEASE, 10, "p2");
        let ran = 0;
        expect(await inbox.complete(stale!, async () => void ran++, T0 + LEASE)).toEqual({ outcome: "lost" });
        expect(ran).toBe(0);
        expect(await inbox.complete(fresh!, async () => void ran++, T0 + LEASE)).toEqual({ outcome: "done" });
        expect(ran).toBe(1);
        expect(await inbox.complete(fresh!, async () => void ran++, T0 + LEASE)).toEqual({ outcome: "lost" });
        expect(ran).toBe(1);
      });

      it("keeps an event whose work is running from being claimed, even past its lease", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        const gate = latch();
        const started = latch();
        const running = inbox.complete(
          c!,
          async () => {
            started.open();
            await gate.promise;
          },
          T0,
        );
        await started.promise;
        if (concurrent) {
          expect(await claim(T0 + 2 * LEASE, 10, "p2")).toEqual([]);
          gate.open();
        } else {
          // One connection: the claim queues behind the work's transaction, so release the work first.
          const late = claim(T0 + 2 * LEASE, 10, "p2");
          gate.open();
          expect(await late).toEqual([]);
        }
        expect(await running).toEqual({ outcome: "done" });
      });

      it("reports work that throws as failed and leaves the event unfinished", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        const boom = new Error("boom");
        const result = await inbox.complete(
          c!,
          async () => {
            throw boom;
          },
          T0,
        );
        expect(result).toEqual({ outcome: "failed", error: boom });
        expect((await inbox.get("a"))?.state).toBe("processing");
        expect(await claim(T0 + LEASE)).toHaveLength(1);
      });
    });

    describe("complete with a signal", () => {
      it("stops waiting for work that never settles when the signal aborts: failed with its reason, nothing done", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        const controller = new AbortController();
        const reason = new Error("handler time-out");
        const { running } = await completeHanging(inbox, c!, controller.signal);
        controller.abort(reason);
        expect(await running).toEqual({ outcome: "failed", error: reason });
        // Unfinished, as after a throw: the processor settles it, and it is claimed again.
        expect((await inbox.get("a"))?.state).toBe("processing");
        const error = { code: "handler_timeout" as const, message: "slow" };
        expect(await inbox.fail(c!, { retryAt: T0 + 10, error }, T0)).toBe(true);
        const [again] = await claim(T0 + 10);
        expect(again?.attempts).toBe(2);
        expect(await inbox.complete(again!, async () => {}, T0 + 10)).toEqual({ outcome: "done" });
      });

      // Regression: the memory inbox ran the handler under a signal already aborted (a processor's `deadline` whose
      // window was over), where the PostgreSQL inbox's transaction never began.
      it("runs no work under a signal already aborted: failed with its reason, claimed again later", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        const reason = new Error("window over");
        let ran = false;
        const result = await inbox.complete(
          c!,
          async () => {
            ran = true;
          },
          T0,
          { signal: AbortSignal.abort(reason) },
        );
        expect(result).toEqual({ outcome: "failed", error: reason });
        expect(ran).toBe(false);
        expect((await inbox.get("a"))?.state).toBe("processing");
        expect(await claim(T0 + LEASE)).toHaveLength(1);
      });

      it("rolls back what the abandoned work wrote, and commits nothing it writes afterwards", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        const controller = new AbortController();
        const started = latch();
        const later = latch();
        const tried = latch();
        const running = inbox.complete(
          c!,
          async (context) => {
            await subject?.write?.(context, "during");
            started.open();
            await later.promise;
            // The abandoned work goes on: its next write must fail or stay uncommitted.
            await Promise.resolve(subject?.write?.(context, "after"))
              .catch(() => undefined)
              .finally(tried.open);
          },
          T0,
          { signal: controller.signal },
        );
        await started.promise;
        controller.abort(new Error("time-out"));
        expect((await running).outcome).toBe("failed");
        later.open();
        await tried.promise;
        expect((await subject?.written?.()) ?? []).toEqual([]);
        expect((await inbox.get("a"))?.state).toBe("processing");
      });

      it("takes off what it added to the signal once each attempt settles: one deadline serves many attempts", async () => {
        await inbox.add(event("a"));
        await inbox.add(event("b"));
        await inbox.add(event("c"));
        const [a, b, c] = await claim(T0);
        const shared = new AbortController();
        const boom = new Error("boom");
        expect(await inbox.complete(a!, async () => {}, T0, { signal: shared.signal })).toEqual({ outcome: "done" });
        expect(await inbox.complete(b!, async () => Promise.reject(boom), T0, { signal: shared.signal })).toEqual({
          outcome: "failed",
          error: boom,
        });
        expect(await inbox.complete(a!, async () => {}, T0, { signal: shared.signal })).toEqual({ outcome: "lost" });
        expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
        const { running } = await completeHanging(inbox, c!, shared.signal);
        expect(getEventListeners(shared.signal, "abort").length).toBeGreaterThan(0);
        shared.abort(new Error("window over"));
        expect((await running).outcome).toBe("failed");
      });
    });

    // Two settlements of one claim made at once (a processor's retry racing its own completion, or a handler's code
    // completing twice) end as the two calls made one after the other, in either order: the inbox's answers and the
    // stored state are those of one order. The memory inbox answered a second completion `lost` while the first's work
    // ran, where the PostgreSQL row lock makes it wait: after a throw it then ran nothing and left the claim held
    // (neither call applied), where PostgreSQL ran it once more and marked the event done.
    describe("settlements of one claim racing each other", () => {
      const error = { code: "handler_failed" as const, message: "nope" };

      it("completes once of two completions made at once: the other is lost, and the work runs once", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        let ran = 0;
        const work = async () => {
          ran++;
          await Promise.resolve();
        };
        const results = await Promise.all([inbox.complete(c!, work, T0), inbox.complete(c!, work, T0)]);
        expect(results.map((r) => r.outcome).sort()).toEqual(["done", "lost"]);
        expect(ran).toBe(1);
        expect(await inbox.get("a")).toMatchObject({ state: "done", attempts: 1 });
      });

      it("runs a second completion made during a first whose work throws once that has settled, as one after the other", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        const thrown = new Error("boom");
        const order: string[] = [];
        const gate = latch();
        const started = latch();
        const first = inbox.complete(
          c!,
          async () => {
            order.push("first");
            started.open();
            await gate.promise;
            throw thrown;
          },
          T0,
        );
        await started.promise;
        const second = inbox.complete(
          c!,
          async () => {
            order.push("second");
          },
          T0 + 1,
        );
        // Ended only once the second waits for it: ended before, the second would find the claim free either way.
        const waited = await (subject?.settlementWaiting?.() ?? Promise.resolve()).then(
          () => true,
          () => false,
        );
        gate.open();
        expect(waited, "the second completion waits for the first").toBe(true);
        // The first ran first (its work had started): it failed, and the claim, still held, completes with the second.
        expect(await first).toEqual({ outcome: "failed", error: thrown });
        expect(await second).toEqual({ outcome: "done" });
        expect(order).toEqual(["first", "second"]);
        expect(await inbox.get("a")).toMatchObject({ state: "done", attempts: 1, doneAt: T0 + 1 });
      });

      for (const throws of [false, true]) {
        for (const failFirst of [false, true]) {
          it(`settles a completion (work ${throws ? "throwing" : "succeeding"}) and a fail made at once${failFirst ? ", the fail called first" : ""} as one after the other`, async () => {
            await inbox.add(event("a"));
            const [c] = await claim(T0);
            let ran = 0;
            const thrown = new Error("boom");
            const completing = () =>
              inbox.complete(
                c!,
                async () => {
                  ran++;
                  if (throws) throw thrown;
                },
                T0,
              );
            const failing = () => inbox.fail(c!, { dead: true, error }, T0);
            const [completed, failed] = failFirst
              ? await Promise.all([failing(), completing()]).then(([f, r]) => [r, f] as const)
              : await Promise.all([completing(), failing()]);
            const record = await inbox.get("a");
            if (failed) {
              // The fail applied: before the completion (which then found its claim settled and ran nothing), or
              // after work that threw.
              if (throws && ran === 1) expect(completed).toEqual({ outcome: "failed", error: thrown });
              else {
                expect(completed).toEqual({ outcome: "lost" });
                expect(ran).toBe(0);
              }
              expect(record).toMatchObject({ state: "dead", lastError: error });
            } else {
              // Refused: only a completion marked done before it settles the claim first.
              expect(completed).toEqual({ outcome: "done" });
              expect(ran).toBe(1);
              expect(record).toMatchObject({ state: "done", lastError: undefined });
            }
          });
        }
      }
    });

    describe("fail", () => {
      it("schedules a retry that is claimable from retryAt on", async () => {
        await inbox.add(event("a"));
        const [c] = await claim(T0);
        const error = { code: "handler_failed" as const, message: "nope" };
        expect(await inbox.fail(c!, { retryAt: T0 + 500, error }, T0)).toBe(true);
        expect(await inbox.get("a")).toMatchObject({ state: "failed", availableAt: T0 + 500, lastError: error });
        expect(await claim(T0 + 499)).toEqual([]);
        const [retry] = await claim(T0 + 500);
        expect(retry?.attempts).toBe(2);
      });

      it("dead-letters an event: listed, never claimed, and retried on request with a fresh budget", async () => {
        await inbox.add(event("a", { receivedAt: T0 }));
        await inbox.add(event("b", { receivedAt: T0 + 1 }));
        const claims = await claim(T0 + 1);
        const error = { code: "payload_invalid" as const, message: "bad", errors: [] };
        for (const c of claims) expect(await inbox.fail(c, { dead: true, error }, T0 + 2)).toBe(true);
        expect((await inbox.deadLetters()).map((r) => r.id).sort()).toEqual(["a", "b"]);
        expect(await inbox.deadLetters({ limit: 1 })).toHaveLength(1);
        expect(await inbox.deadLetters({ limit: 0 })).toEqual([]);
        // PostgreSQL would refuse these with a syntax error, the memory inbox would answer []: both refuse them alike.
        for (const limit of [2.5, -1, Number.NaN]) {
          await expect(inbox.deadLetters({ limit })).rejects.toThrow(/Inbox.deadLetters: limit/);
        }
        expect(await inbox.get("a")).toMatchObject({ state: "dead", lastError: error, availableAt: undefined });
        expect(await claim(T0 + 100 * LEASE)).toEqual([]);
        expect(await inbox.retryDeadLetter("a", T0 + 3)).toBe(true);
        expect(await inbox.retryDeadLetter("a", T0 + 3)).toBe(false);
        expect(await inbox.retryDeadLetter("missing", T0 + 3)).toBe(false);
        expect((await inbox.deadLetters()).map((r) => r.id)).toEqual(["b"]);
        const [again] = await claim(T0 + 3);
        expect(again).toMatchObject({ event: { id: "a" }, attempts: 1 });
      });

      it("lists dead letters oldest first, in the order they died, each with the attempts it was claimed", async () => {
        await inbox.add(event("a", { receivedAt: T0 }));
        await inbox.add(event("b", { receivedAt: T0 + 1 }));
        const error = { code: "handler_failed" as const, message: "nope" };
        const [a1, b1] = await claim(T0 + 1);
        expect(await inbox.fail(a1!, { retryAt: T0 + 10, error }, T0 + 2)).toBe(true);
        expect(await inbox.fail(b1!, { dead: true, error }, T0 + 3)).toBe(true);
        const [a2] = await claim(T0 + 10);
        expect(await inbox.fail(a2!, { dead: true, error }, T0 + 11)).toBe(true);
        expect((await inbox.deadLetters()).map((r) => [r.id, r.attempts])).toEqual([
          ["b", 1],
          ["a", 2],
        ]);
        // Retried and dead again: it died last.
        expect(await inbox.retryDeadLetter("b", T0 + 20)).toBe(true);
        const [b2] = await claim(T0 + 20);
        expect(b2?.attempts).toBe(1);
        expect(await inbox.fail(b2!, { dead: true, error }, T0 + 21)).toBe(true);
        expect((await inbox.deadLetters()).map((r) => r.id)).toEqual(["a", "b"]);
      });

      it("settles an attempt once: a claim already settled neither fails nor completes again", async () => {
        await inbox.add(event("done"));
        await inbox.add(event("failed"));
        const error = { code: "handler_failed" as const, message: "nope" };
        const claims = await claim(T0);
        const done = claims.find((c) => c.event.id === "done")!;
        const failed = claims.find((c) => c.event.id === "failed")!;
        expect(await inbox.complete(done, async () => {}, T0)).toEqual({ outcome: "done" });
        expect(await inbox.fail(done, { retryAt: T0, error }, T0)).toBe(false);
        expect(await inbox.fail(done, { dead: true, error }, T0)).toBe(false);
        expect(await inbox.get("done")).toMatchObject({ state: "done", lastError: undefined });
        expect(await inbox.fail(failed, { retryAt: T0 + 10, error }, T0)).toBe(true);
        expect(await inbox.fail(failed, { dead: true, error }, T0)).toBe(false);
        let ran = 0;
        expect(await inbox.complete(failed, async () => void ran++, T0)).toEqual({ outcome: "lost" });
        expect(ran).toBe(0);
        expect(await inbox.get("failed")).toMatchObject({ state: "failed", availableAt: T0 + 10, attempts: 1 });
      });

      // A fail made by the claim's holder while its work runs settles once the work has: the PostgreSQL row lock makes
      // it wait. The memory inbox applied it at once: the work's end then marked a dead letter done (listed dead and
      // done at once), or put it back among the due events, to be claimed and run again.
      it("settles a fail made during the work once the work has: nothing after done, the attempt after a throw", async () => {
        await inbox.add(event("ok"));
        await inbox.add(event("throws"));
        const error = { code: "handler_failed" as const, message: "nope" };
        const claims = await claim(T0);
        const ok = claims.find((c) => c.event.id === "ok")!;
        const throws = claims.find((c) => c.event.id === "throws")!;
        let failing: Promise<boolean> | undefined;
        expect(
          await inbox.complete(
            ok,
            async () => {
              failing = inbox.fail(ok, { dead: true, error }, T0);
            },
            T0,
          ),
        ).toEqual({ outcome: "done" });
        expect(await failing).toBe(false);
        expect(await inbox.get("ok")).toMatchObject({ state: "done", lastError: undefined });
        const thrown = new Error("work failed");
        const result = await inbox.complete(
          throws,
          async () => {
            failing = inbox.fail(throws, { dead: true, error }, T0);
            throw thrown;
          },
          T0,
        );
        expect(result).toEqual({ outcome: "failed", error: thrown });
        expect(await failing).toBe(true);
        expect(await inbox.get("throws")).toMatchObject({ state: "dead", lastError: error });
        expect((await inbox.deadLetters()).map((r) => r.id)).toEqual(["throws"]);
        expect(await claim(T0 + 2 * LEASE)).toEqual([]);
      });

      it("refuses times and counts that are not numbers, alike in every inbox, and keeps the event as it was", async () => {
        await inbox.add(event("a"));
        const request = { now: T0, leaseMs: LEASE, limit: 10, owner: "p1" };
        const requests: [Record<string, number>, string][] = [
          [{ now: Number.NaN }, "now"],
          [{ leaseMs: Number.NaN }, "leaseMs"],
          [{ leaseMs: -1 }, "leaseMs"],
          [{ limit: 1.5 }, "limit"],
          [{ limit: Number.NaN }, "limit"],
        ];
        for (const [patch, name] of requests) {
          await expect(inbox.claim({ ...request, ...patch })).rejects.toThrow(`Inbox.claim: ${name} must be`);
        }
        expect(await inbox.get("a")).toMatchObject({ state: "pending", attempts: 0, availableAt: T0 });
        const [c] = await claim(T0);
        const error = { code: "handler_failed" as const, message: "nope" };
        await expect(inbox.fail(c!, { retryAt: Number.NaN, error }, T0)).rejects.toThrow("Inbox.fail: retryAt must be");
        await expect(inbox.fail(c!, { dead: true, error }, Number.NaN)).rejects.toThrow("Inbox.fail: now must be");
        let ran = false;
        const work = async () => {
          ran = true;
        };
        await expect(inbox.complete(c!, work, Number.NaN)).rejects.toThrow("Inbox.complete: now must be");
        expect(ran).toBe(false);
        await expect(inbox.retryDeadLetter("a", Number.NaN)).rejects.toThrow("Inbox.retryDeadLetter: now must be");
        expect(await inbox.get("a")).toMatchObject({ state: "processing", attempts: 1, availableAt: T0 + LEASE });
        expect(await inbox.complete(c!, work, T0 + 1)).toEqual({ outcome: "done" });
      });

      it("ignores a stale claim", async () => {
        await inbox.add(event("a"));
        const [stale] = await claim(T0, 10, "p1");
        await claim(T0 + LEASE, 10, "p2");
        const error = { code: "handler_failed" as const, message: "late" };
        expect(await inbox.fail(stale!, { dead: true, error }, T0 + LEASE)).toBe(false);
        expect((await inbox.get("a"))?.state).toBe("processing");
      });
    });

    // Regression: the PostgreSQL inbox dead-lettered a claimed row it could not decode, and then `deadLetters` threw
    // row_invalid for it: no dead letter could be listed until someone mended that row by hand. The memory inbox
    // dead-lettered its kind of unreadable event (a body added by hand that is not JSON) without telling anyone.
    describe("an event it cannot read", () => {
      const error = { code: "handler_failed" as const, message: "nope" };

      it("dead-letters it at its claim, tells onInvalid, and lists it by id in its place among the others", async () => {
        const addUnreadable = subject?.addUnreadable;
        if (addUnreadable === undefined) return;
        await inbox.add(event("a"));
        await addUnreadable("bad", T0);
        await inbox.add(event("c"));
        const told: unknown[] = [];
        const onInvalid = (error: unknown) => void told.push(error);
        const claims = await inbox.claim({ now: T0, leaseMs: LEASE, limit: 10, owner: "p1", onInvalid });
        expect(claims.map((c) => c.event.id).sort()).toEqual(["a", "c"]);
        expect(told).toEqual([expect.objectContaining({ name: "WebhookConsumerError", code: "row_invalid" })]);
        for (const id of ["a", "c"]) {
          expect(await inbox.fail(claims.find((c) => c.event.id === id)!, { dead: true, error }, T0 + 1)).toBe(true);
        }
        const letters = await inbox.deadLetters();
        expect(letters.map((letter) => letter.id)).toEqual(["bad", "a", "c"]);
        expect(letters[0]).toMatchObject({ id: "bad", state: "dead", availableAt: undefined, doneAt: undefined });
        expect(letters[0]?.lastError).toMatchObject({ code: "row_invalid", message: expect.stringContaining('"bad"') });
        expect(letters[1]).toMatchObject({ ...event("a"), state: "dead", attempts: 1, lastError: error });
        expect(letters[2]).toMatchObject({ ...event("c"), state: "dead", attempts: 1, lastError: error });
        expect((await inbox.deadLetters({ limit: 1 })).map((letter) => letter.id)).toEqual(["bad"]);
        // Looked up by its id, it reads as listed.
        expect(await inbox.get("bad")).toEqual(letters[0]);
      });

      it("reads it by id before its claim, and after retryDeadLetter dead-letters it again without running it", async () => {
        const addUnreadable = subject?.addUnreadable;
        if (addUnreadable === undefined) return;
        await addUnreadable("bad", T0);
        expect(await inbox.get("bad")).toMatchObject({
          id: "bad",
          state: "pending",
          lastError: { code: "row_invalid" },
        });
        const told: unknown[] = [];
        const onInvalid = (error: unknown) => void told.push(error);
        expect(await inbox.claim({ now: T0, leaseMs: LEASE, limit: 10, owner: "p1", onInvalid })).toEqual([]);
        expect(await inbox.retryDeadLetter("bad", T0 + 1)).toBe(true);
        expect(await inbox.deadLetters()).toEqual([]);
        expect(await inbox.claim({ now: T0 + 1, leaseMs: LEASE, limit: 10, owner: "p1", onInvalid })).toEqual([]);
        expect(told.map((error) => (error as { code?: unknown }).code)).toEqual(["row_invalid", "row_invalid"]);
        expect((await inbox.deadLetters()).map((letter) => [letter.id, letter.lastError?.code])).toEqual([
          ["bad", "row_invalid"],
        ]);
      });
    });

    // Regression: PostgreSQL's jsonb refused such a message, so fail() threw, no retry was scheduled, the error was lost
    // and the event ended dead as attempts_exhausted; the memory inbox stored it.
    it("records a handler error holding a NUL or a lone surrogate, or cut at 2000 through a pair, alike in every inbox", async () => {
      const messages: Record<string, [thrown: unknown, recorded: string]> = {
        nul: [new Error("bad byte: a\u0000b"), "bad byte: a\uFFFDb"],
        lone: [new Error("half \ud83d of a pair"), "half \uFFFD of a pair"],
        cut: [new Error(`${"x".repeat(1999)}😀 tail`), "x".repeat(1999)],
        thrown: ["not an Error \udc00", "not an Error \uFFFD"],
      };
      for (const id of Object.keys(messages)) await inbox.add(event(id, { type: `fails.${id}` }));
      await inbox.add(event("keys", { type: "keyed", payload: { "k\u0000": 1 } }));
      const reported: unknown[] = [];
      const processor = createWebhookProcessor({
        inbox,
        now: () => T0,
        retainDoneMs: false,
        retry: scheduleBackoff([0, 1_000], 0),
        onError: (error) => reported.push(error),
      });
      processor.on("fails.*", async ({ event: { id } }) => {
        throw messages[id]?.[0];
      });
      processor.on("keyed", z.record(z.string(), z.string()), async () => {});
      expect(await processor.processDue()).toMatchObject({ claimed: 5, retried: 4, dead: 1, errors: 0 });
      for (const [id, [, recorded]] of Object.entries(messages)) {
        expect(await inbox.get(id), id).toMatchObject({
          state: "failed",
          availableAt: T0 + 1_000,
          lastError: { code: "handler_failed", message: recorded },
        });
      }
      const keyed = await inbox.get("keys");
      expect(keyed).toMatchObject({ state: "dead", lastError: { code: "payload_invalid" } });
      expect(keyed?.lastError?.errors?.[0]?.pointer).toBe("/k\uFFFD");
      // The handlers' errors and the dead letter's, and no inbox error.
      expect(reported).toHaveLength(5);
      expect(reported.filter((error) => (error as { code?: string }).code === "payload_invalid")).toHaveLength(1);
    });

    it('keeps raw bytes (the consumer\'s parse: "none") and gives back the same bytes as a Uint8Array', async () => {
      const bytes = Uint8Array.from([0x7b, 0x00, 0xff, 0xfe, 0x22, 0x7d, 0x80]);
      await inbox.add(event("raw", { payload: bytes }));
      await inbox.add(event("empty", { payload: new Uint8Array(0) }));
      for (const [id, expected] of [
        ["raw", bytes],
        ["empty", new Uint8Array(0)],
      ] as const) {
        const payload = (await inbox.get(id))?.payload;
        expect(payload, id).toBeInstanceOf(Uint8Array);
        expect([...(payload as Uint8Array)], id).toEqual([...expected]);
      }
      const claimed = (await claim(T0)).find((c) => c.event.id === "raw");
      expect(claimed?.event.payload).toBeInstanceOf(Uint8Array);
      expect([...((claimed?.event.payload ?? []) as Uint8Array)]).toEqual([...bytes]);
    });

    it("keeps times as whole milliseconds, a fraction dropped on the way in, so due times, lease ends and purges agree in every inbox (regression: memory kept x.4 exactly, PostgreSQL read it back rounded)", async () => {
      const error = { code: "handler_timeout" as const, message: "slow" };
      await inbox.add(event("frac", { receivedAt: T0 + 0.6 }));
      expect(await inbox.get("frac")).toMatchObject({ receivedAt: T0, availableAt: T0 });
      const [c] = await inbox.claim({ now: T0 + 0.2, leaseMs: 1_000.7, limit: 10, owner: "p1" });
      expect(c?.event.receivedAt).toBe(T0);
      expect(await inbox.get("frac")).toMatchObject({ availableAt: T0 + 1_000 });
      expect(await inbox.fail(c!, { retryAt: T0 + 20.5, error }, T0 + 1.3)).toBe(true);
      expect(await inbox.get("frac")).toMatchObject({ state: "failed", availableAt: T0 + 20 });
      // Due at T0 + 20, not T0 + 20.5: a claim at T0 + 20.2 takes it.
      const [again] = await claim(T0 + 20.2);
      expect(again?.event.id).toBe("frac");
      await inbox.complete(again!, async () => {}, T0 + 30.9);
      expect(await inbox.get("frac")).toMatchObject({ state: "done", doneAt: T0 + 30 });
      // Done at T0 + 30: a purge before T0 + 30.5 (floored to T0 + 30) keeps it, one before T0 + 31 takes it.
      expect(await inbox.purgeDone(T0 + 30.5)).toBe(0);
      expect(await inbox.purgeDone(T0 + 31)).toBe(1);
    });

    it("purges done events finished before a time, and only those", async () => {
      await inbox.add(event("old", { receivedAt: T0 }));
      await inbox.add(event("new", { receivedAt: T0 + 1 }));
      await inbox.add(event("open", { receivedAt: T0 + 2 }));
      const claims = await claim(T0 + 2, 2);
      await inbox.complete(claims.find((c) => c.event.id === "old")!, async () => {}, T0 + 1);
      await inbox.complete(claims.find((c) => c.event.id === "new")!, async () => {}, T0 + 100);
      expect(await inbox.purgeDone(T0 + 50)).toBe(1);
      expect(await inbox.get("old")).toBeUndefined();
      expect(await inbox.get("open")).toBeDefined();
      expect(await inbox.get("new")).toBeDefined();
      // As the docs say: a purged id no longer de-duplicates, a kept one does.
      expect(await inbox.add(event("new"))).toEqual({ duplicate: true });
      expect(await inbox.add(event("old", { receivedAt: T0 + 200 }))).toEqual({ duplicate: false });
      expect(await inbox.get("old")).toMatchObject({ state: "pending", attempts: 0, availableAt: T0 + 200 });
    });

    it("purges every done event before Infinity and none before -Infinity, and refuses a time that is not a number", async () => {
      await inbox.add(event("a", { receivedAt: T0 }));
      await inbox.add(event("b", { receivedAt: T0 + 1 }));
      await inbox.add(event("open", { receivedAt: T0 + 2 }));
      for (const c of await claim(T0 + 2, 2)) {
        await inbox.complete(c, async () => {}, T0 + 1e12);
      }
      // PostgreSQL said "timestamp cannot be NaN" or could not read "x"; the memory inbox purged nothing.
      for (const before of [Number.NaN, "x", undefined, null, 1n, {}]) {
        await expect(inbox.purgeDone(before as never), String(before)).rejects.toThrow(TypeError);
        await expect(inbox.purgeDone(before as never)).rejects.toThrow("Inbox.purgeDone: before must be");
      }
      expect(await inbox.purgeDone(Number.NEGATIVE_INFINITY)).toBe(0);
      expect(await inbox.purgeDone(Number.POSITIVE_INFINITY)).toBe(2);
      expect(await inbox.get("a")).toBeUndefined();
      expect(await inbox.get("open")).toBeDefined();
    });
  });
}
