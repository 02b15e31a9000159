import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AttemptVerdict, DeliveryScheduler, verdictOf } from "../../../src/webhooks/delivery/delivery-scheduler";

const config = { concurrency: 8, endpointConcurrency: 4, lookahead: 4, batch: 2 };

describe("DeliveryScheduler (issue 15)", () => {
  it("starts an endpoint at one, adds one per success up to its cap, halves on a failure, drops to one unanswered", () => {
    const s = new DeliveryScheduler(config);
    const run = (verdict: AttemptVerdict) => {
      expect(s.hold("a")).toBe(true);
      s.finish("a", verdict);
    };
    expect(s.capOf("a")).toBe(1);
    for (const expected of [2, 3, 4, 4]) {
      run("success");
      expect(s.capOf("a")).toBe(expected);
    }
    run("refused");
    expect(s.capOf("a")).toBe(2);
    run("success");
    run("unreachable");
    expect(s.capOf("a")).toBe(1);
  });

  it("sends no more of an endpoint's deliveries than its cap, holds as many again waiting, and hands back the rest", () => {
    const s = new DeliveryScheduler(config);
    expect(s.hold("a")).toBe(true);
    expect(s.hold("a")).toBe(true);
    expect(s.hold("a")).toBe(false);
    expect(s.takeEndpointSlot("a")).toBe(true);
    expect(s.takeEndpointSlot("a")).toBe(false);
    s.freeEndpointSlot("a");
    expect(s.takeEndpointSlot("a")).toBe(true);
    expect(s.hold("b")).toBe(true);
    expect(s.held).toBe(3);
  });

  it("asks each endpoint for its room only: unknown ones one delivery, full ones none", () => {
    const s = new DeliveryScheduler(config);
    for (let i = 0; i < 3; i++) {
      s.hold("grown");
      s.finish("grown", "success");
    }
    s.hold("full");
    s.hold("full");
    const request = s.claimRequest();
    expect(request?.perEndpoint).toBe(1);
    expect(request?.limit).toBe(8 + 4 - 2);
    expect(request?.endpointLimits?.get("grown")).toBe(8); // cap 4: 4 in flight and 4 waiting
    expect(request?.endpointLimits?.get("full")).toBe(0);
  });

  it("with work held, claims again after a batch has finished, at once on news, or when an endpoint's line runs dry", () => {
    const s = new DeliveryScheduler({ ...config, concurrency: 16, endpointConcurrency: 8, batch: 4 });
    expect(s.wantsClaim(false)).toBe(true); // idle
    // Grow "a" to a cap of 8: it may hold 16, 8 of them sending and 8 waiting for its turn.
    for (let i = 0; i < 7; i++) {
      s.hold("a");
      s.finish("a", "success");
    }
    s.claimRequest();
    for (let i = 0; i < 16; i++) expect(s.hold("a")).toBe(true);
    for (let i = 0; i < 8; i++) expect(s.takeEndpointSlot("a")).toBe(true);
    expect(s.wantsClaim(false)).toBe(false);
    expect(s.wantsClaim(true)).toBe(true); // a publish: any room is worth a claim
    const finishOne = () => {
      s.freeEndpointSlot("a");
      s.takeEndpointSlot("a"); // the next waiter takes the turn
      s.finish("a", "success");
    };
    for (let i = 0; i < 3; i++) finishOne();
    expect(s.wantsClaim(false)).toBe(false); // 3 finished, batch 4, "a" still has some waiting
    finishOne();
    expect(s.wantsClaim(false)).toBe(true);
    s.claimRequest();
    expect(s.wantsClaim(false)).toBe(false);
  });

  it("claims at once when an endpoint's line runs dry, whatever other endpoints hold (a hanging one, say)", () => {
    const s = new DeliveryScheduler({ ...config, batch: 4 });
    s.hold("hanging"); // holds a claim that will not finish
    expect(s.takeEndpointSlot("hanging")).toBe(true);
    s.hold("b");
    s.hold("b"); // cap 1: one sending, one waiting for its turn
    expect(s.takeEndpointSlot("b")).toBe(true);
    s.claimRequest();
    s.freeEndpointSlot("b");
    expect(s.takeEndpointSlot("b")).toBe(true); // the waiter's turn
    s.finish("b", "success");
    expect(s.wantsClaim(false)).toBe(true); // "b" has nothing waiting: one finish is enough
  });

  it("claims nothing without room, even on news", () => {
    const s = new DeliveryScheduler({ ...config, batch: 4 });
    for (let i = 0; i < 12; i++) s.hold(`e${i}`);
    expect(s.wantsClaim(true)).toBe(false);
  });

  it("never gives out more slots than its concurrency, and none twice (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 200 }), (takes) => {
        const s = new DeliveryScheduler(config);
        let taken = 0;
        for (const take of takes) {
          if (take) {
            if (s.takeSlot()) taken++;
          } else if (taken > 0) {
            s.freeSlot();
            taken--;
          }
          expect(s.sending).toBe(taken);
          expect(taken).toBeLessThanOrEqual(config.concurrency);
        }
      }),
    );
  });

  it("keeps every endpoint's held deliveries within its cap whatever the outcomes (property)", () => {
    const step = fc.record({
      endpoint: fc.constantFrom("a", "b", "c"),
      verdict: fc.constantFrom<AttemptVerdict | undefined>("success", "refused", "unreachable", undefined),
      hold: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const s = new DeliveryScheduler(config);
        const held = new Map<string, number>();
        for (const { endpoint, verdict, hold } of steps) {
          const mine = held.get(endpoint) ?? 0;
          if (hold) {
            if (s.hold(endpoint)) held.set(endpoint, mine + 1);
          } else if (mine > 0) {
            s.finish(endpoint, verdict);
            held.set(endpoint, mine - 1);
          }
          const now = held.get(endpoint) ?? 0;
          expect(s.capOf(endpoint)).toBeGreaterThanOrEqual(1);
          expect(s.capOf(endpoint)).toBeLessThanOrEqual(config.endpointConcurrency);
          // A cap cut below what is held lets nothing new in until enough finished.
          if (now >= 2 * s.capOf(endpoint)) expect(s.hold(endpoint)).toBe(false);
        }
        expect(s.held).toBe([...held.values()].reduce((a, b) => a + b, 0));
      }),
    );
  });

  it("reads a verdict off an attempt's result", () => {
    expect(verdictOf({ kind: "response", status: 204, durationMs: 1 })).toBe("success");
    expect(verdictOf({ kind: "response", status: 503, durationMs: 1 })).toBe("refused");
    expect(verdictOf({ kind: "error", errorKind: "timeout", durationMs: 1 })).toBe("unreachable");
    expect(verdictOf({ kind: "error", errorKind: "http_status", status: 500, durationMs: 1 })).toBe("refused");
  });
});
