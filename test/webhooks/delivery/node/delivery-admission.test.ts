import { describe, expect, it } from "vitest";
import type { ClaimedDelivery } from "../../../../src/webhooks/delivery/delivery-queue";
import type { WebhookEndpoint } from "../../../../src/webhooks/delivery/endpoint";
import { receivesClaim } from "../../../../src/webhooks/delivery/node/delivery-admission";
import { initialDeliveryState } from "../../../../src/webhooks/delivery/state-machine";
import { receivesFor } from "../../../../src/webhooks/delivery/tenant";
import { endpointFixture } from "../store-contract";

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
