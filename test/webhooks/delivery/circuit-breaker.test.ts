import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CircuitConfig,
  circuitAllows,
  circuitRecord,
  closedCircuit,
} from "../../../src/webhooks/delivery/circuit-breaker";
import { activeSecrets, rotateSecrets } from "../../../src/webhooks/delivery/endpoint";
import { endpointHealthAfter } from "../../../src/webhooks/delivery/endpoint-health";

const config: CircuitConfig = { window: 10, minimumAttempts: 5, failureRatio: 0.8, coolDownMs: 1_000 };

describe("circuit breaker", () => {
  it("opens when recent attempts mostly fail, probes once after the cool-down, closes on success", () => {
    let state = closedCircuit;
    for (let i = 0; i < 4; i++) state = circuitRecord(state, false, 0, config);
    expect(state.status).toBe("closed");
    state = circuitRecord(state, false, 100, config);
    expect(state.status).toBe("open");
    expect(circuitAllows(state, 500, config)).toMatchObject({ allowed: false, retryAt: 1_100 });
    const probe = circuitAllows(state, 1_100, config);
    expect(probe).toMatchObject({ allowed: true, state: { status: "half_open" } });
    state = probe.state;
    expect(circuitAllows(state, 1_101, config).allowed).toBe(false);
    expect(circuitRecord(state, true, 1_200, config)).toEqual(closedCircuit);
  });

  it("a failed probe re-opens for another cool-down", () => {
    let state = { status: "half_open" as const, failures: 31, count: 5, openedAt: 1_000 };
    state = circuitRecord(state, false, 1_500, config) as typeof state;
    expect(state).toMatchObject({ status: "open", openedAt: 1_500 });
  });

  it("stays closed while fewer than the ratio fail", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 200 }), (outcomes) => {
        let state = closedCircuit;
        const recent: boolean[] = [];
        for (const ok of outcomes) {
          if (state.status !== "closed") return;
          state = circuitRecord(state, ok, 0, config);
          recent.push(ok);
          const window = recent.slice(-config.window);
          const failures = window.filter((x) => !x).length;
          const shouldOpen = window.length >= config.minimumAttempts && failures >= config.failureRatio * window.length;
          expect(state.status).toBe(shouldOpen ? "open" : "closed");
        }
      }),
    );
  });
});

describe("endpoint health", () => {
  it("disables after failing for the whole period with no success, and a success resets it", () => {
    const day = 86_400_000;
    expect(endpointHealthAfter(null, false, 0, 5 * day)).toEqual({ failingSince: 0, disable: false });
    expect(endpointHealthAfter(0, false, 5 * day - 1, 5 * day).disable).toBe(false);
    expect(endpointHealthAfter(0, false, 5 * day, 5 * day).disable).toBe(true);
    expect(endpointHealthAfter(0, true, 6 * day, 5 * day)).toEqual({ failingSince: null, disable: false });
  });
});

describe("secret rotation", () => {
  it("the old secret keeps signing for the grace period, then only the new one", () => {
    const rotated = rotateSecrets([{ secret: "whsec_old", expiresAt: null }], "whsec_new", 1_000, 500);
    expect(activeSecrets({ secrets: rotated }, 1_499)).toEqual(["whsec_old", "whsec_new"]);
    expect(activeSecrets({ secrets: rotated }, 1_500)).toEqual(["whsec_new"]);
    const twice = rotateSecrets(rotated, "whsec_newer", 1_600, 500);
    expect(twice.map((s) => s.secret)).toEqual(["whsec_new", "whsec_newer"]);
  });
});
