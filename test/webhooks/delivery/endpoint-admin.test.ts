import { describe, expect, it } from "vitest";
import { activeSecrets } from "../../../src/webhooks/delivery/endpoint";
import { createEndpointAdmin } from "../../../src/webhooks/delivery/endpoint-admin";
import type { EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";

const T0 = 1_700_000_000_000;

function setup() {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  let n = 0;
  const admin = createEndpointAdmin({
    endpoints,
    queue,
    resolve: false,
    now: () => T0,
    generateSecret: () => `whsec_${String(++n).padStart(32, "0")}`,
  });
  const create = async (metadata?: Record<string, string>) => {
    const created = await admin.create({ url: "https://hooks.example.com/in", enabled_events: ["*"], metadata });
    if (!created.ok) throw new Error(created.code);
    return created.value;
  };
  return { endpoints, admin, create };
}

describe("createEndpointAdmin", () => {
  describe("rotateSecret", () => {
    it("two rotations at once both keep their secret (regression: the second write dropped the first's secret)", async () => {
      const { endpoints, admin, create } = setup();
      const e = await create();
      const results = await Promise.all([admin.rotateSecret(e.id), admin.rotateSecret(e.id)]);
      const active = activeSecrets((await endpoints.get(e.id))!, T0);
      for (const result of results) {
        if (!result.ok) throw new Error(result.code);
        expect(active).toContain(result.value.secrets.at(-1)?.secret);
      }
      expect(active).toHaveLength(3);
    });

    it.each([Number.NaN, -1, Number.POSITIVE_INFINITY, "60000" as unknown as number])(
      "refuses graceMs %s with a TypeError naming it, keeping the old secret (regression: reported ok, old secret dropped)",
      async (graceMs) => {
        const { endpoints, admin, create } = setup();
        const e = await create();
        await expect(admin.rotateSecret(e.id, graceMs)).rejects.toThrow(/rotateSecret: graceMs must be/);
        expect((await endpoints.get(e.id))?.secrets).toEqual(e.secrets);
      },
    );

    it("answers endpoint_not_found for no such endpoint", async () => {
      const { admin } = setup();
      expect(await admin.rotateSecret("we_missing")).toEqual({ ok: false, code: "endpoint_not_found" });
    });
  });

  it("keeps a copy of the metadata it was given (regression: the memory store shared the caller's object)", async () => {
    const { endpoints, admin, create } = setup();
    const metadata: Record<string, string> = { team: "billing" };
    const e = await create(metadata);
    metadata["team"] = "changed";
    const patch: Record<string, string> = { plan: "pro" };
    await admin.update(e.id, { metadata: patch });
    patch["plan"] = "changed";
    expect((await endpoints.get(e.id))?.metadata).toEqual({ plan: "pro" });
  });

  it("refuses a rate limit the pacer cannot run, given without the schema (a TypeError, nothing stored)", async () => {
    const { endpoints, admin, create } = setup();
    const input = { url: "https://hooks.example.com/in", enabled_events: ["*"] };
    await expect(admin.create({ ...input, rate_limit: 1e-300 })).rejects.toThrow(/rate_limit must be/);
    expect(await endpoints.list({ limit: 10 })).toEqual([]);
    const e = await create();
    await expect(admin.update(e.id, { rate_limit: 1e-9 })).rejects.toThrow(/rate_limit must be/);
    expect((await endpoints.get(e.id))?.rateLimit).toBeNull();
  });

  it("refuses a store without updateSecrets at construction (an EndpointStore written before it joined the interface)", () => {
    const { endpoints } = setup();
    const { updateSecrets: _, ...old } = endpoints;
    const queue = createMemoryDeliveryQueue({ endpoints });
    expect(() => createEndpointAdmin({ endpoints: old as EndpointStore, queue, resolve: false })).toThrow(
      /updateSecrets/,
    );
  });
});
