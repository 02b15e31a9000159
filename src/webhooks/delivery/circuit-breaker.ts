import { DELIVERY_DEFAULTS } from "./defaults";

/** Tunables of the per-endpoint circuit breaker. */
export interface CircuitConfig {
  /** Outcomes remembered (1..32). @default 20 */
  window: number;
  /** Outcomes needed before the circuit may open. @default 10 */
  minimumAttempts: number;
  /** Share of failures in the window that opens the circuit. @default 0.8 */
  failureRatio: number;
  /** How long an open circuit waits before letting one probe through, in ms. @default 30_000 */
  coolDownMs: number;
}

/** The state of one endpoint's circuit; a small plain value (the window is a bit mask). */
export interface CircuitState {
  readonly status: "closed" | "open" | "half_open";
  /** Bit i set = the i-th most recent outcome failed. */
  readonly failures: number;
  /** Outcomes in the window (≤ window). */
  readonly count: number;
  /** Epoch ms when the circuit last opened, or when the half-open probe went out. */
  readonly openedAt: number;
}

/** The default circuit configuration. */
export const defaultCircuitConfig: CircuitConfig = {
  window: DELIVERY_DEFAULTS.circuitWindow,
  minimumAttempts: DELIVERY_DEFAULTS.circuitMinimumAttempts,
  failureRatio: DELIVERY_DEFAULTS.circuitFailureRatio,
  coolDownMs: DELIVERY_DEFAULTS.circuitCoolDownMs,
};

/** A closed circuit with an empty window. */
export const closedCircuit: CircuitState = { status: "closed", failures: 0, count: 0, openedAt: 0 };

function popcount(value: number): number {
  let v = value >>> 0;
  let n = 0;
  while (v !== 0) {
    v &= v - 1;
    n++;
  }
  return n;
}

/**
 * Whether an attempt may go out now. An open circuit past its cool-down turns half-open and lets exactly one probe
 * through; until the probe reports, others wait.
 */
export function circuitAllows(
  state: CircuitState,
  now: number,
  config: CircuitConfig = defaultCircuitConfig,
): { allowed: true; state: CircuitState } | { allowed: false; retryAt: number; state: CircuitState } {
  if (state.status === "closed") return { allowed: true, state };
  // After the cool-down one probe goes out; a probe that never reported is replaced after another cool-down.
  if (now >= state.openedAt + config.coolDownMs) {
    return { allowed: true, state: { ...state, status: "half_open", openedAt: now } };
  }
  const retryAt =
    state.status === "open" ? state.openedAt + config.coolDownMs : now + Math.min(config.coolDownMs, 1_000);
  return { allowed: false, retryAt, state };
}

/** Records an attempt's outcome: a half-open probe closes or re-opens the circuit; a closed one opens past the ratio. */
export function circuitRecord(
  state: CircuitState,
  success: boolean,
  now: number,
  config: CircuitConfig = defaultCircuitConfig,
): CircuitState {
  if (state.status === "half_open") {
    return success ? closedCircuit : { status: "open", failures: state.failures, count: state.count, openedAt: now };
  }
  if (state.status === "open") return state;
  const mask = config.window >= 32 ? 0xffffffff : (1 << config.window) - 1;
  const failures = (((state.failures << 1) | (success ? 0 : 1)) & mask) >>> 0;
  const count = Math.min(config.window, state.count + 1);
  // The share itself, not `failures >= ratio * count`: 0.28 * 25 is 7.000000000000001, and 7 of 25 is 28 %.
  if (count >= config.minimumAttempts && popcount(failures) / count >= config.failureRatio) {
    return { status: "open", failures, count, openedAt: now };
  }
  return { status: "closed", failures, count, openedAt: state.openedAt };
}
