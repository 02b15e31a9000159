import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../src/webhooks/delivery/attempt";
import { type AttemptVerdict, DeliveryScheduler, verdictOf } from "../../../src/webhooks/delivery/delivery-scheduler";

const config = { concurrency: 8, endpointConcurrency: 4, lookahead: 4, batch: 2 };

// A held delivery's attempt ends with `verdict` and its outcome is stored; without a verdict, it goes back unsent.
function done(s: DeliveryScheduler, endpoint: string, verdict: AttemptVerdict | undefined): void {
  if (verdict !== undefined) s.storing(endpoint, verdict);
  s.finish(endpoint, verdict !== undefined);
}

// A scheduler whose endpoint "a" grew its cap to 3 with two successes, and what runs one more attempt on it.
function grownToThree() {
  const s = new DeliveryScheduler(config);
  const run = (verdict: AttemptVerdict) => {
    expect(s.hold("a")).toBe(true);
    done(s, "a", verdict);
  };
  run("success");
  run("success");
  expect(s.capOf("a")).toBe(3);
  return { s, run };
}

describe("DeliveryScheduler (issue 15)", () => {
  it("starts an endpoint at one, adds one per success up to its cap, halves on a failure, drops to one unanswered", () => {
    const s = new DeliveryScheduler(config);
    const run = (verdict: AttemptVerdict) => {
      expect(s.hold("a")).toBe(true);
      done(s, "a", verdict);
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
      done(s, "grown", "success");
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
      done(s, "a", "success");
    }
    s.claimRequest();
    for (let i = 0; i < 16; i++) expect(s.hold("a")).toBe(true);
    for (let i = 0; i < 8; i++) expect(s.takeEndpointSlot("a")).toBe(true);
    expect(s.wantsClaim(false)).toBe(false);
    expect(s.wantsClaim(true)).toBe(true); // a publish: any room is worth a claim
    const finishOne = () => {
      s.freeEndpointSlot("a");
      s.takeEndpointSlot("a"); // the next waiter takes the turn
      done(s, "a", "success");
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
    done(s, "b", "success");
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

  it("keeps every endpoint's held deliveries within its cap whatever the outcomes, outcomes being stored too (property)", () => {
    const step = fc.record({
      endpoint: fc.constantFrom("a", "b", "c"),
      action: fc.constantFrom("hold", "store", "stored", "hand back"),
      verdict: fc.constantFrom<AttemptVerdict>("success", "refused", "unreachable"),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const s = new DeliveryScheduler(config);
        // Per endpoint: held and not yet storing, and storing.
        const waiting = new Map<string, number>();
        const storing = new Map<string, number>();
        const count = (m: Map<string, number>, e: string) => m.get(e) ?? 0;
        for (const { endpoint, action, verdict } of steps) {
          if (action === "hold") {
            if (s.hold(endpoint)) waiting.set(endpoint, count(waiting, endpoint) + 1);
          } else if (action === "store" && count(waiting, endpoint) > 0) {
            s.storing(endpoint, verdict);
            waiting.set(endpoint, count(waiting, endpoint) - 1);
            storing.set(endpoint, count(storing, endpoint) + 1);
          } else if (action === "stored" && count(storing, endpoint) > 0) {
            s.finish(endpoint, true);
            storing.set(endpoint, count(storing, endpoint) - 1);
          } else if (action === "hand back" && count(waiting, endpoint) > 0) {
            s.finish(endpoint, false);
            waiting.set(endpoint, count(waiting, endpoint) - 1);
          }
          const cap = s.capOf(endpoint);
          expect(cap).toBeGreaterThanOrEqual(1);
          expect(cap).toBeLessThanOrEqual(config.endpointConcurrency);
          // Outcomes being stored count against the endpoint past one cap's worth: at twice its cap, nothing new.
          const occupying = count(waiting, endpoint) + Math.max(0, count(storing, endpoint) - cap);
          if (occupying >= 2 * cap) expect(s.hold(endpoint)).toBe(false);
        }
        const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
        expect(s.held).toBe(total(waiting) + total(storing));
        // Never more than the slots, the look-ahead and one concurrency's worth of outcomes being stored.
        expect(s.held).toBeLessThanOrEqual(2 * config.concurrency + config.lookahead);
      }),
    );
  });

  it("leaves room for the next claims while outcomes are stored, up to its concurrency of them", () => {
    const s = new DeliveryScheduler({ ...config, endpointConcurrency: 8, batch: 4 });
    for (let i = 0; i < 7; i++) done(s, "a", "success"); // cap 8
    s.claimRequest();
    for (let i = 0; i < 12; i++) expect(s.hold(`e${i}`)).toBe(true);
    expect(s.claimRequest()).toBeUndefined(); // 8 slots and 4 ahead: full
    for (let i = 0; i < 8; i++) s.storing(`e${i}`, "success");
    // Eight outcomes being written (a durable queue's round trip and commit) hold no claim back.
    expect(s.wantsClaim(false)).toBe(true);
    expect(s.claimRequest()?.limit).toBe(8);
    for (let i = 0; i < 8; i++) expect(s.hold(`f${i}`)).toBe(true);
    expect(s.held).toBe(20);
    // Past the concurrency's worth, outcomes being stored count again: a store that falls behind holds claims back.
    s.storing("e8", "success");
    expect(s.claimRequest()).toBeUndefined();
    s.finish("e0", true);
    expect(s.claimRequest()?.limit).toBe(1); // e1..e8 storing, f0..f7 and e9..e11 held: 11 against 12
  });

  it("lets an endpoint's outcomes being stored leave room for one cap's worth of its next deliveries, no more", () => {
    const s = new DeliveryScheduler(config);
    expect(s.hold("a")).toBe(true);
    expect(s.hold("a")).toBe(true);
    expect(s.hold("a")).toBe(false); // cap 1: one to send, one waiting
    s.storing("a", "refused"); // the cap stays 1
    expect(s.claimRequest()?.endpointLimits?.has("a")).toBe(false); // room 1 again, the default
    expect(s.hold("a")).toBe(true);
    s.storing("a", "unreachable");
    // Two outcomes being stored against a cap of 1: the second counts.
    expect(s.claimRequest()?.endpointLimits?.get("a")).toBe(0);
    expect(s.hold("a")).toBe(false);
    s.finish("a", true);
    expect(s.hold("a")).toBe(true);
  });

  it("grows its look-ahead while claims leave slots idle, up to its concurrency, and shrinks it when they stop", () => {
    const s = new DeliveryScheduler({ concurrency: 16, endpointConcurrency: 16, lookahead: 4, batch: 4 });
    const claimWhile = (slotGoesIdle: boolean) => {
      const request = s.claimRequest();
      if (slotGoesIdle) {
        expect(s.takeSlot()).toBe(true);
        s.freeSlot(); // an attempt ended and nothing was waiting to go out
      }
      s.claimed();
      return request?.limit;
    };
    expect(s.lookahead).toBe(4);
    expect(claimWhile(true)).toBe(16 + 4);
    expect(s.lookahead).toBe(8);
    for (let i = 0; i < 5; i++) claimWhile(true);
    expect(s.lookahead).toBe(16); // never past the concurrency
    expect(s.claimRequest()?.limit).toBe(32);
    s.claimed();
    expect(s.lookahead).toBe(15); // that claim left no slot idle
    for (let i = 0; i < 20; i++) claimWhile(false);
    expect(s.lookahead).toBe(4); // never below the configured one
    // A slot idle with no claim out (nothing to claim, say) grows nothing.
    expect(s.takeSlot()).toBe(true);
    s.freeSlot();
    claimWhile(false);
    expect(s.lookahead).toBe(4);
  });

  it("reads a verdict off an attempt's result", () => {
    expect(verdictOf({ kind: "response", status: 204, durationMs: 1 })).toBe("success");
    expect(verdictOf({ kind: "response", status: 503, durationMs: 1 })).toBe("refused");
    expect(verdictOf({ kind: "error", errorKind: "timeout", durationMs: 1 })).toBe("unreachable");
    expect(verdictOf({ kind: "error", errorKind: "http_status", status: 500, durationMs: 1 })).toBe("refused");
    expect(verdictOf({ kind: "error", errorKind: "url_refused", durationMs: 0 })).toBe("withheld");
  });

  it("leaves an endpoint's cap as it was on a withheld attempt (its URL refused by our policy)", () => {
    const { s, run } = grownToThree();
    run("withheld");
    expect(s.capOf("a")).toBe(3);
  });

  // Regression: a run of `proxy` failures (our egress proxy down) or `request_invalid` ones (nothing was sent) cut
  // every endpoint's cap to 1, as if each endpoint had stopped answering.
  describe("attempts that say nothing of the endpoint leave its cap as it was, however many in a row", () => {
    const results = {
      proxy: { kind: "error", errorKind: "proxy", message: "proxy refused the tunnel (502)", durationMs: 2 },
      request_invalid: { kind: "error", errorKind: "request_invalid", message: "no signing keys", durationMs: 0 },
      connection_refused: { kind: "error", errorKind: "connection_refused", durationMs: 2 },
    } as const;
    const capAfter = (result: AttemptResult) => {
      const { s, run } = grownToThree();
      for (let i = 0; i < 20; i++) run(verdictOf(result));
      return s.capOf("a");
    };

    it.each(["proxy", "request_invalid"] as const)("%s is withheld: the cap stays", (kind) => {
      expect(verdictOf(results[kind])).toBe("withheld");
      expect(capAfter(results[kind])).toBe(3);
    });

    it("connection_refused is the endpoint's (unanswered): the cap drops to 1", () => {
      expect(verdictOf(results.connection_refused)).toBe("unreachable");
      expect(capAfter(results.connection_refused)).toBe(1);
    });
  });
});
