import { describe, expect, it } from "vitest";
import type { CircuitBoard } from "../../../../src/webhooks/delivery/circuit-board";
import { type CircuitState, closedCircuit } from "../../../../src/webhooks/delivery/circuit-breaker";
import type { ClaimedDelivery } from "../../../../src/webhooks/delivery/delivery-queue";
import type { WebhookEndpoint } from "../../../../src/webhooks/delivery/endpoint";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import { probeHeldBack, receivesClaim } from "../../../../src/webhooks/delivery/node/delivery-admission";
import { EndpointLines } from "../../../../src/webhooks/delivery/node/endpoint-lines";
import { workerSettings } from "../../../../src/webhooks/delivery/node/worker-options";
import { initialDeliveryState } from "../../../../src/webhooks/delivery/state-machine";
import { receivesFor } from "../../../../src/webhooks/delivery/tenant";
import { endpointFixture } from "../store-contract";
import { fakeDispatcher } from "./fake-dispatcher";

/** Whose event a claim says it carries: a tenant's, the operator's, or unknown (a legacy row, a silent queue). */
type Whose = { readonly tenant: string } | "operator" | "unknown";

const claimOf = (whose: Whose): ClaimedDelivery => ({
  id: "dlv_1",
  eventId: "evt_1",
  eventType: "order.created",
  endpointId: "we_1",
  ...(typeof whose === "object" ? { tenant: whose.tenant } : whose === "operator" ? { operatorEvent: true } : {}),
  payload: "{}",
  createdAt: 0,
  state: initialDeliveryState(0),
  leaseToken: "lease",
  leaseUntil: 1_000,
});

const endpoints: Record<string, Partial<WebhookEndpoint>> = {
  "acme's": { tenant: "acme" },
  "globex's": { tenant: "globex" },
  "the operator's": { tenant: null },
  "the operator's with allTenants": { tenant: null, allTenants: true },
};

// [whose event, endpoint, sent?]: the fan-out rule of publish (tenant.ts receivesFor) for the known cases.
const cases: readonly [Whose, keyof typeof endpoints, boolean][] = [
  [{ tenant: "acme" }, "acme's", true],
  [{ tenant: "acme" }, "globex's", false],
  [{ tenant: "acme" }, "the operator's", false],
  [{ tenant: "acme" }, "the operator's with allTenants", true],
  ["operator", "acme's", false],
  ["operator", "the operator's", true],
  ["operator", "the operator's with allTenants", true],
  // Unknown: a PostgreSQL row stored before delivery@14 (tenant NULL), or a queue that does not set operatorEvent.
  ["unknown", "acme's", true],
  ["unknown", "the operator's", true],
  ["unknown", "the operator's with allTenants", true],
];

describe("receivesClaim: whether the worker may send a claimed delivery to its endpoint as read now", () => {
  it.each(cases)("a claim of %j to %s endpoint: %s", (whose, to, sent) => {
    expect(receivesClaim(endpointFixture(endpoints[to]), claimOf(whose))).toBe(sent);
  });

  it("agrees with the fan-out at publish for every known case (receivesFor)", () => {
    for (const [whose, to] of cases) {
      if (whose === "unknown") continue;
      const endpoint = endpointFixture(endpoints[to]);
      const tenant = whose === "operator" ? null : whose.tenant;
      expect(receivesClaim(endpoint, claimOf(whose)), `${JSON.stringify(whose)} to ${to}`).toBe(
        receivesFor(endpoint, tenant),
      );
    }
  });

  it("takes a claim's tenant over operatorEvent: a queue that sets both is checked as the tenant's", () => {
    const both = { ...claimOf({ tenant: "acme" }), operatorEvent: true };
    expect(receivesClaim(endpointFixture({ tenant: "acme" }), both)).toBe(true);
    expect(receivesClaim(endpointFixture({ tenant: null }), both)).toBe(false);
  });
});

describe("probeHeldBack with a shared board: a probe that never went out", () => {
  const T0 = 1_700_000_000_000;
  const HOLD = 60_000;
  const circuit = { window: 1, minimumAttempts: 1, failureRatio: 1, coolDownMs: 30_000 };

  // A worker's settings and its line of endpoint "we_1", on a memory queue's board, the circuit open until T0.
  async function world() {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, now: () => T0 });
    const settings = workerSettings({ queue, endpoints, dispatcher: fakeDispatcher().dispatcher, circuit });
    const board = settings.board as CircuitBoard;
    await board.open("we_1", T0);
    const line = new EndpointLines(endpoints, 0).lineOf("we_1");
    // Half-open here, as admission leaves it when it wins the probe.
    const won: CircuitState = { ...closedCircuit, status: "half_open", openedAt: T0 };
    line.circuit = won;
    return { settings, board, line, won };
  }

  it("gives back the worker's own probe: the next is anyone's from retryAt", async () => {
    const { settings, board, line, won } = await world();
    expect(await board.takeProbe("we_1", T0, T0 + HOLD)).toBe(true);
    await probeHeldBack(settings, line, T0 + HOLD, won, T0 + 500);
    expect(await board.openUntil("we_1")).toBe(T0 + 500);
    expect(line.sharedOpenUntil).toBe(T0 + 500);
    expect(line.circuit.status).toBe("open");
    expect(await board.takeProbe("we_1", T0 + 500, T0 + 500 + HOLD)).toBe(true);
  });

  // Before: the give-back was an unconditional open(), so a worker whose probe waited past its hold (for a slot, for
  // the endpoint's turn) re-opened a circuit another worker's probe had closed meanwhile.
  it("leaves closed a circuit that another worker's probe closed after this one's hold ran out", async () => {
    const { settings, board, line, won } = await world();
    expect(await board.takeProbe("we_1", T0, T0 + HOLD)).toBe(true); // this worker's
    expect(await board.takeProbe("we_1", T0 + HOLD, T0 + 2 * HOLD)).toBe(true); // another's, past the hold
    await board.close("we_1"); // the other's probe succeeded
    await probeHeldBack(settings, line, T0 + HOLD, won, T0 + HOLD + 10);
    expect(await board.openUntil("we_1")).toBeUndefined();
    // Read again at the next admission, which then closes this worker's own circuit too; not re-opened meanwhile.
    expect(line.sharedOpenUntil).toBeUndefined();
    expect(line.sharedAt).toBe(Number.NEGATIVE_INFINITY);
    expect(line.circuit).toBe(won);
  });

  it("leaves another worker's probe out when this one's hold ran out", async () => {
    const { settings, board, line, won } = await world();
    expect(await board.takeProbe("we_1", T0, T0 + HOLD)).toBe(true);
    expect(await board.takeProbe("we_1", T0 + HOLD, T0 + 2 * HOLD)).toBe(true);
    await probeHeldBack(settings, line, T0 + HOLD, won, T0 + HOLD + 10);
    expect(await board.takeProbe("we_1", T0 + HOLD + 10, T0 + 3 * HOLD)).toBe(false);
  });
});
