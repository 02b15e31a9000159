import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AttemptResult, isEndpointAnswer, isSuccessStatus } from "../../../src/webhooks/delivery/attempt";
import type { CircuitBoard } from "../../../src/webhooks/delivery/circuit-board";
import {
  type CircuitConfig,
  type CircuitState,
  circuitRecord,
  closedCircuit,
} from "../../../src/webhooks/delivery/circuit-breaker";
import { createMemoryCircuitBoard } from "../../../src/webhooks/delivery/memory/index";
import { createPostgresCircuitBoard } from "../../../src/webhooks/delivery/postgres/index";
import { databases } from "../../support/databases";
import { deliveryDatabase } from "./delivery-stores";

// A model-based test of the shared circuit breaker: the pure breaker (circuitRecord) judging outcomes and a
// CircuitBoard (circuit-board.ts) sharing its transitions, driven as the worker drives them (attempt-outcome.ts opens
// and closes the board, delivery-admission.ts takes the probe), against a reference model written here that shares
// no code with either: a list of recent outcomes, the documented opening rule, the cool-down and the probe's hold.
// The clock is fake (every call takes its time as a value) and steps back now and then, as a corrected clock does.

const T0 = 1_700_000_000_000;
// Ids that share prefixes, so a board that matched one by another's prefix would mix them up.
const ENDPOINTS = ["we_1", "we_10", "we_1_"] as const;

type Outcome = "success" | "failure" | "timeout" | "refused";
type Command =
  | { op: "record"; endpoint: number; outcome: Outcome }
  | { op: "probe"; endpoint: number; callers: number }
  /**
   * A probe won earlier given back unsent (delivery-admission.ts probeHeldBack): the last one won on the endpoint, or
   * the one before (stale: its hold ran out and another was won since), open again until `retryMs` from now.
   */
  | { op: "release"; endpoint: number; back: number; retryMs: number }
  | { op: "tick"; ms: number }
  /** The clock set to an endpoint's `openUntil` or `probeUntil` in the model, give or take 1 ms: the boundaries. */
  | { op: "jump"; endpoint: number; to: "openUntil" | "probeUntil"; offset: number };

interface Setup {
  readonly config: CircuitConfig;
  /** How long a probe that never reported holds the circuit (the worker's `probeHoldMs`). */
  readonly holdMs: number;
  readonly commands: readonly Command[];
}

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant("record" as const),
      endpoint: fc.nat({ max: ENDPOINTS.length - 1 }),
      outcome: fc.constantFrom<Outcome>("success", "failure", "failure", "timeout", "refused"),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      op: fc.constant("probe" as const),
      endpoint: fc.nat({ max: ENDPOINTS.length - 1 }),
      callers: fc.integer({ min: 1, max: 5 }),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      op: fc.constant("release" as const),
      endpoint: fc.nat({ max: ENDPOINTS.length - 1 }),
      back: fc.constantFrom(0, 0, 1),
      retryMs: fc.constantFrom(0, 1, 700),
    }),
    weight: 2,
  },
  // Forward by as much as a cool-down or a hold and around it; back by a little (a clock corrected by NTP).
  {
    arbitrary: fc.record({ op: fc.constant("tick" as const), ms: fc.constantFrom(1, 299, 300, 999, 1_000, 2_500) }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant("tick" as const), ms: fc.constantFrom(-1, -50, -300, -1_000) }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant("jump" as const),
      endpoint: fc.nat({ max: ENDPOINTS.length - 1 }),
      to: fc.constantFrom("openUntil" as const, "probeUntil" as const),
      offset: fc.constantFrom(-1, 0, 0, 1),
    }),
    weight: 2,
  },
);

const setupArb = (maxLength: number): fc.Arbitrary<Setup> =>
  fc.integer({ min: 1, max: 8 }).chain((window) =>
    fc.record({
      config: fc.record({
        window: fc.constant(window),
        minimumAttempts: fc.integer({ min: 1, max: window }),
        // Whole percents: the share the docs state, which the model compares exactly in integers.
        failureRatio: fc.integer({ min: 1, max: 100 }).map((percent) => percent / 100),
        coolDownMs: fc.constantFrom(1_000, 2_000),
      }),
      holdMs: fc.constantFrom(300, 1_500),
      commands: fc.array(commandArb, { minLength: 1, maxLength, size: "max" }),
    }),
  );

// --- The reference model --------------------------------------------------------------------------------------------

interface ModelCircuit {
  status: "closed" | "open" | "half_open";
  /** The outcomes in the window while closed, oldest first: `true` failed. */
  outcomes: boolean[];
  /** While open or half-open: when the cool-down ends. */
  openUntil: number | undefined;
  /** When the probe out holds the circuit until (a probe that never reported is given again after it). */
  probeUntil: number | undefined;
}

const closedModel = (): ModelCircuit => ({
  status: "closed",
  outcomes: [],
  openUntil: undefined,
  probeUntil: undefined,
});

// The documented rule (CircuitConfig): at least minimumAttempts outcomes, and failures a share ≥ failureRatio of the
// window. In integers: failures / count ≥ percent / 100.
function opens(config: CircuitConfig, outcomes: readonly boolean[]): boolean {
  const failures = outcomes.filter(Boolean).length;
  const percent = Math.round(config.failureRatio * 100);
  return outcomes.length >= config.minimumAttempts && failures * 100 >= percent * outcomes.length;
}

function modelRecord(setup: Setup, circuit: ModelCircuit, outcome: Outcome, now: number): ModelCircuit {
  // Not the endpoint's answer: the circuit does not count it (attempt.ts isEndpointAnswer).
  if (outcome === "refused") return circuit;
  const failed = outcome !== "success";
  const reopen = (outcomes: boolean[]): ModelCircuit => ({
    status: "open",
    outcomes,
    openUntil: now + setup.config.coolDownMs,
    probeUntil: undefined,
  });
  switch (circuit.status) {
    case "half_open":
      // The probe's outcome: closed with an empty window, or open for another cool-down.
      return failed ? reopen(circuit.outcomes) : closedModel();
    case "open":
      // An attempt that went out before the circuit opened and reports late changes nothing.
      return circuit;
    case "closed": {
      const outcomes = [...circuit.outcomes, failed].slice(-setup.config.window);
      return opens(setup.config, outcomes) ? reopen(outcomes) : { ...circuit, outcomes };
    }
  }
}

// --- The system under test: the pure breaker and a board, wired as the worker wires them ---------------------------

const resultOf = (outcome: Outcome): AttemptResult => {
  switch (outcome) {
    case "success":
      return { kind: "response", status: 204, durationMs: 1 };
    case "failure":
      return { kind: "response", status: 503, durationMs: 1 };
    case "timeout":
      return { kind: "error", errorKind: "timeout", durationMs: 1 };
    case "refused":
      return { kind: "error", errorKind: "url_refused", durationMs: 0 };
  }
};

interface BoardUnderTest {
  readonly name: string;
  /** A board, and ids of its own for one run (the PostgreSQL board's table is shared by the runs). */
  open(): Promise<{ board: CircuitBoard; prefix: string }>;
}

// The window's outcomes of a closed CircuitState, oldest first (bit i = the i-th most recent failed).
const windowOf = (state: CircuitState): boolean[] =>
  Array.from({ length: state.count }, (_, i) => ((state.failures >>> (state.count - 1 - i)) & 1) === 1);

async function run(target: BoardUnderTest, setup: Setup): Promise<void> {
  const { config, holdMs } = setup;
  const { board, prefix } = await target.open();
  const ids = ENDPOINTS.map((id) => `${prefix}${id}`);
  const local: CircuitState[] = ids.map(() => closedCircuit);
  const model: ModelCircuit[] = ids.map(() => closedModel());
  // The hold's end of every probe won, per endpoint, in order: what a release names the probe by.
  const won: number[][] = ids.map(() => []);
  let now = T0;
  const steps: string[] = [];
  for (const c of setup.commands) {
    steps.push(JSON.stringify(c));
    const at = `after ${steps.join(" ")} at T0+${now - T0}`;
    if (c.op === "tick") {
      now += c.ms;
    } else if (c.op === "jump") {
      const time = (model[c.endpoint] as ModelCircuit)[c.to];
      if (time !== undefined) now = time + c.offset;
    } else if (c.op === "record") {
      const id = ids[c.endpoint] as string;
      const result = resultOf(c.outcome);
      // attempt-outcome.ts decideOutcome/storeOutcome: the worker's window judges, the board shares the transition.
      if (isEndpointAnswer(result)) {
        const before = local[c.endpoint] as CircuitState;
        const success = result.kind === "response" && isSuccessStatus(result.status);
        const after = circuitRecord(before, success, now, config);
        local[c.endpoint] = after;
        if (after.status !== before.status && after.status === "open") await board.open(id, now + config.coolDownMs);
        if (after.status !== before.status && after.status === "closed") await board.close(id);
      }
      model[c.endpoint] = modelRecord(setup, model[c.endpoint] as ModelCircuit, c.outcome, now);
    } else if (c.op === "release") {
      const id = ids[c.endpoint] as string;
      const probeUntil = (won[c.endpoint] as number[]).at(-1 - c.back);
      if (probeUntil === undefined) continue;
      const until = now + c.retryMs;
      const released = await board.releaseProbe(id, probeUntil, until);
      // Still the caller's: the probe out is that one (no other won since, no outcome opened or closed the circuit).
      const circuit = model[c.endpoint] as ModelCircuit;
      const ours = circuit.status === "half_open" && circuit.probeUntil === probeUntil;
      expect(released, `release of the probe held until T0+${probeUntil - T0} ${at}`).toBe(ours);
      if (ours) {
        model[c.endpoint] = { ...circuit, status: "open", openUntil: until, probeUntil: undefined };
        // probeHeldBack: this worker's breaker open as of a cool-down before `until`, so the next probe goes then.
        const state = local[c.endpoint] as CircuitState;
        local[c.endpoint] = { ...state, status: "open", openedAt: until - config.coolDownMs };
      }
    } else {
      const id = ids[c.endpoint] as string;
      // delivery-admission.ts: every caller past the cool-down asks for the probe at once; one wins it.
      const wins = await Promise.all(Array.from({ length: c.callers }, () => board.takeProbe(id, now, now + holdMs)));
      const circuit = model[c.endpoint] as ModelCircuit;
      const free =
        circuit.status !== "closed" &&
        now >= (circuit.openUntil as number) &&
        (circuit.probeUntil === undefined || now >= circuit.probeUntil);
      expect(wins.filter(Boolean).length, `probes won by ${c.callers} callers ${at}`).toBe(free ? 1 : 0);
      if (wins.some(Boolean)) {
        local[c.endpoint] = { ...(local[c.endpoint] as CircuitState), status: "half_open", openedAt: now };
        (won[c.endpoint] as number[]).push(now + holdMs);
      }
      if (free) model[c.endpoint] = { ...circuit, status: "half_open", probeUntil: now + holdMs };
    }
    // Every endpoint, not only the one the step touched: endpoints never affect each other.
    for (const [n, id] of ids.entries()) {
      const expected = model[n] as ModelCircuit;
      const state = local[n] as CircuitState;
      expect(await board.openUntil(id), `openUntil(${ENDPOINTS[n]}) ${at}`).toBe(expected.openUntil);
      expect(state.status, `the breaker's status of ${ENDPOINTS[n]} ${at}`).toBe(expected.status);
      if (expected.status === "closed") {
        expect(windowOf(state), `the window of ${ENDPOINTS[n]} ${at}`).toEqual(expected.outcomes);
      }
    }
  }
}

// --- The boards -----------------------------------------------------------------------------------------------------

const memory: BoardUnderTest = {
  name: "memory",
  async open() {
    return { board: createMemoryCircuitBoard(), prefix: "" };
  },
};

// A step costs a statement per board call and three for the check: microseconds in memory, ~3 ms on PGlite and
// ~1-2 ms on the server on the 2-core machine. So PostgreSQL runs fewer, shorter sequences (~2-4 s a board).
const RUNS: Record<string, { numRuns: number; maxLength: number }> = {
  memory: { numRuns: 300, maxLength: 60 },
  pglite: { numRuns: 40, maxLength: 40 },
  postgres: { numRuns: 40, maxLength: 40 },
};

describe("CircuitBoard with the pure breaker, against a reference model", () => {
  const postgres = databases().map((backend): BoardUnderTest => {
    const database = deliveryDatabase(backend, { prefix: "model_circuits", max: 8 });
    let schema: string | undefined;
    let runs = 0;
    return {
      name: backend.name,
      async open() {
        schema ??= await database.fresh();
        // One schema for the suite; each run's endpoints have ids of their own, so no run sees another's rows.
        return { board: createPostgresCircuitBoard({ client: database.db, schema }), prefix: `r${runs++}_` };
      },
    };
  });

  describe.each([memory, ...postgres])("$name", (target) => {
    const runs = RUNS[target.name] ?? { numRuns: 30, maxLength: 40 };
    it("opens, probes once and closes as the model says, endpoint by endpoint, whatever the clock does", async () => {
      await fc.assert(
        fc.asyncProperty(setupArb(runs.maxLength), (setup) => run(target, setup)),
        { numRuns: runs.numRuns },
      );
    });
  });
});

describe("the circuit breaker's opening rule", () => {
  // Regression: the rule compared `failures >= failureRatio * count`, and 0.28 * 25 is 7.000000000000001 in floating
  // point, so 7 failures of 25 (exactly 28 %) left a circuit with failureRatio 0.28 closed.
  it("opens at exactly the failure ratio, whatever its floating-point product: 7 failures of 25 at 0.28", () => {
    const config: CircuitConfig = { window: 25, minimumAttempts: 25, failureRatio: 0.28, coolDownMs: 1_000 };
    let state = closedCircuit;
    // 18 successes, then 7 failures: the 25th outcome fills the window with 28 % failures.
    for (let i = 0; i < 25; i++) state = circuitRecord(state, i < 18, T0 + i, config);
    expect(state).toMatchObject({ status: "open", count: 25, openedAt: T0 + 24 });
  });
});
