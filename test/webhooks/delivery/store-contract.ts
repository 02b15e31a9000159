import { Buffer } from "node:buffer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AttemptInput } from "../../../src/webhooks/delivery/attempt";
import { AttemptCursorError } from "../../../src/webhooks/delivery/attempt-cursor";
import { DELIVERY_DEFAULTS } from "../../../src/webhooks/delivery/defaults";
import type { ClaimedDelivery, DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import type { WebhookEndpoint } from "../../../src/webhooks/delivery/endpoint";
import { createEndpointAdmin } from "../../../src/webhooks/delivery/endpoint-admin";
import type { EndpointPatch, EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { WebhookDeliveryError } from "../../../src/webhooks/delivery/errors";
import { createEvent, type WebhookEvent } from "../../../src/webhooks/delivery/event";
import {
  type DeliveryEvent,
  type DeliveryState,
  defaultDeliveryConfig,
  initialDeliveryState,
  transition,
} from "../../../src/webhooks/delivery/state-machine";

/** What a contract run needs: fresh, empty stores. */
export interface StoreFixture {
  endpoints: EndpointStore;
  queue: DeliveryQueue;
  close?: () => Promise<void>;
}

let seq = 0;
export function endpointFixture(patch: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  seq++;
  return {
    id: `we_${seq}_${Math.random().toString(36).slice(2, 8)}`,
    url: "https://hooks.example.com/in",
    enabledEvents: ["*"],
    secrets: [{ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", expiresAt: null }],
    status: "enabled",
    disabledReason: null,
    disabledAt: null,
    description: "",
    metadata: {},
    headers: {},
    rateLimit: null,
    failingSince: null,
    createdAt: 1_000 + seq,
    tenant: null,
    allTenants: false,
    ...patch,
  };
}

const T0 = 1_700_000_000_000;
const delivered200 = { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } } as const;

/** How a contract run wants its stores: `now` is the queue's own clock (the retention's), when given. */
export interface StoreFixtureOptions {
  now?: () => number;
}

/** The one contract every EndpointStore + DeliveryQueue pair passes. */
export function storeContract(name: string, make: (options?: StoreFixtureOptions) => Promise<StoreFixture>): void {
  describe(`${name}: endpoint store contract`, () => {
    let f: StoreFixture;
    beforeAll(async () => {
      f = await make();
    });
    afterAll(async () => {
      await f.close?.();
    });

    it("creates, gets, updates and deletes", async () => {
      const e = endpointFixture({ metadata: { team: "a" }, rateLimit: 2.5 });
      await f.endpoints.create(e);
      expect(await f.endpoints.get(e.id)).toEqual(e);
      const updated = await f.endpoints.update(e.id, { status: "disabled", disabledReason: "manual", disabledAt: 5 });
      expect(updated).toMatchObject({
        id: e.id,
        status: "disabled",
        disabledReason: "manual",
        disabledAt: 5,
        rateLimit: 2.5,
      });
      expect(await f.endpoints.update("we_missing", { description: "x" })).toBeUndefined();
      expect(await f.endpoints.delete(e.id)).toBe(true);
      expect(await f.endpoints.delete(e.id)).toBe(false);
      expect(await f.endpoints.get(e.id)).toBeUndefined();
    });

    it.each(["manual", "gone", "failing", "url_refused"] as const)(
      "keeps every disabled reason as written, read back by get and list: %s",
      async (disabledReason) => {
        const e = endpointFixture();
        await f.endpoints.create(e);
        await f.endpoints.update(e.id, { status: "disabled", disabledReason, disabledAt: 5 });
        expect(await f.endpoints.get(e.id)).toMatchObject({ status: "disabled", disabledReason });
        const listed = (await f.endpoints.list({ limit: 100 })).find((row) => row.id === e.id);
        expect(listed).toMatchObject({ disabledReason });
      },
    );

    it("lists oldest first, page by page", async () => {
      const made = [endpointFixture(), endpointFixture(), endpointFixture()];
      for (const e of made) await f.endpoints.create(e);
      const first = await f.endpoints.list({ limit: 100 });
      const ids = first.map((e) => e.id).filter((id) => made.some((m) => m.id === id));
      expect(ids).toEqual(made.map((e) => e.id));
      const after = await f.endpoints.list({ limit: 1, startingAfter: made[0]?.id });
      expect(after.map((e) => e.id)).toEqual([made[1]?.id]);
      expect(await f.endpoints.list({ limit: 0 })).toEqual([]);
    });

    it("lists and finds subscribers by creation time, not in the order they were stored (regression: the memory store listed them as stored)", async () => {
      const tenant = `created_${endpointFixture().id}`;
      // Stored newest first, as an import from another sender's newest-first list would.
      const [c, b, a] = [3, 2, 1].map((n) =>
        endpointFixture({ tenant, createdAt: 500 + n, enabledEvents: ["created.*"] }),
      ) as [WebhookEndpoint, WebhookEndpoint, WebhookEndpoint];
      for (const e of [c, b, a]) await f.endpoints.create(e);
      const ids = (list: readonly WebhookEndpoint[]) => list.map((e) => e.id);
      const mine = new Set([a.id, b.id, c.id]);
      expect(ids(await f.endpoints.list({ limit: 10, tenant }))).toEqual([a.id, b.id, c.id]);
      expect(ids(await f.endpoints.list({ limit: 10_000 })).filter((id) => mine.has(id))).toEqual([a.id, b.id, c.id]);
      expect(ids(await f.endpoints.list({ limit: 1, tenant, startingAfter: a.id }))).toEqual([b.id]);
      expect(ids(await f.endpoints.list({ limit: 10_000, startingAfter: b.id })).filter((id) => mine.has(id))).toEqual([
        c.id,
      ]);
      expect(ids(await f.endpoints.subscribed("created.one", tenant))).toEqual([a.id, b.id, c.id]);
      // A write keeps its place; a deletion leaves the others in theirs.
      await f.endpoints.modify(a.id, () => ({ description: "changed" }));
      await f.endpoints.recordOutcome(c.id, false, 1_000);
      await f.endpoints.delete(b.id);
      expect(ids(await f.endpoints.list({ limit: 10, tenant }))).toEqual([a.id, c.id]);
      expect(ids(await f.endpoints.list({ limit: 10, tenant, startingAfter: a.id }))).toEqual([c.id]);
      expect(await f.endpoints.list({ limit: 10, tenant, startingAfter: b.id })).toEqual([]);
      for (const e of [a, c]) await f.endpoints.delete(e.id);
      expect(await f.endpoints.list({ limit: 10, tenant })).toEqual([]);
    });

    it("refuses a list limit that is not an integer of 0 or more, and a since that is not a finite number, in every store alike", async () => {
      const e = endpointFixture();
      await f.endpoints.create(e);
      for (const limit of [2.5, -1, Number.NaN]) {
        await expect(f.endpoints.list({ limit })).rejects.toThrow(/EndpointStore.list: limit/);
        await expect(f.queue.list(e.id, { limit })).rejects.toThrow(/DeliveryQueue.list: limit/);
        await expect(f.queue.attempts({ endpointId: e.id, limit })).rejects.toThrow(/DeliveryQueue.attempts: limit/);
      }
      for (const since of [Number.NaN, Number.POSITIVE_INFINITY, "1700000000000" as unknown as number]) {
        await expect(f.queue.list(e.id, { since })).rejects.toThrow(
          /DeliveryQueue.list: since must be a finite number of epoch milliseconds, got/,
        );
      }
    });

    it("refuses times and counts that are not numbers in publish, claim and renew, in every store alike", async () => {
      // NaN compares false with everything: in memory a NaN due time or lease end would hide a delivery for good.
      const e = endpointFixture({ enabledEvents: ["guard.checked"] });
      await f.endpoints.create(e);
      const event = createEvent({ type: "guard.checked", data: {}, now: T0 });
      const publishes: [Record<string, number>, string][] = [
        [{ delayMs: Number.NaN }, "delayMs"],
        [{ delayMs: -1 }, "delayMs"],
        [{ now: Number.NaN }, "now"],
        [{ now: Number.POSITIVE_INFINITY }, "now"],
      ];
      for (const [options, name] of publishes) {
        await expect(f.queue.publish(event, options)).rejects.toThrow(`DeliveryQueue.publish: ${name} must be`);
      }
      expect(await f.queue.list(e.id)).toEqual([]);
      const claim = { limit: 10, now: T0, leaseMs: 1_000 };
      const claims: [Record<string, unknown>, string][] = [
        [{ limit: 1.5 }, "limit"],
        [{ limit: Number.NaN }, "limit"],
        [{ now: Number.NaN }, "now"],
        [{ leaseMs: Number.NaN }, "leaseMs"],
        [{ leaseMs: -5 }, "leaseMs"],
        // A lease of 0 ends as it starts: the delivery would be due again within the same claim.
        [{ leaseMs: 0 }, "leaseMs"],
        [{ perEndpoint: -1 }, "perEndpoint"],
        [{ endpointLimits: new Map([[e.id, Number.NaN]]) }, `endpointLimits of ${e.id}`],
      ];
      for (const [patch, name] of claims) {
        await expect(f.queue.claim({ ...claim, ...patch })).rejects.toThrow(`DeliveryQueue.claim: ${name} must be`);
      }
      await expect(f.queue.renew([], Number.NaN, 1_000)).rejects.toThrow("DeliveryQueue.renew: now must be");
      await expect(f.queue.renew([], T0, Number.NaN)).rejects.toThrow("DeliveryQueue.renew: leaseMs must be");
      await expect(f.queue.renew([], T0, 0)).rejects.toThrow("DeliveryQueue.renew: leaseMs must be a positive number");
      // Nothing was written: the event publishes once the options are right.
      await f.queue.publish(event, { now: T0 });
      expect((await f.queue.list(e.id)).map((d) => d.eventId)).toEqual([event.id]);
    });

    it("finds the enabled endpoints subscribed to a type, wildcards included", async () => {
      const exact = endpointFixture({ enabledEvents: ["sub.created"] });
      const resource = endpointFixture({ enabledEvents: ["sub.*"] });
      const other = endpointFixture({ enabledEvents: ["other.created"] });
      const off = endpointFixture({ enabledEvents: ["sub.created"], status: "disabled" });
      for (const e of [exact, resource, other, off]) await f.endpoints.create(e);
      const found = (await f.endpoints.subscribed("sub.created", null)).map((e) => e.id);
      expect(found).toContain(exact.id);
      expect(found).toContain(resource.id);
      expect(found).not.toContain(other.id);
      expect(found).not.toContain(off.id);
      for (const e of [exact, resource, other, off]) await f.endpoints.delete(e.id);
    });

    it("finds subscribers as they are after every write, asked before and after it", async () => {
      const a = endpointFixture({ enabledEvents: ["follow.created"] });
      const b = endpointFixture({ enabledEvents: ["other.created"] });
      // Other tests' endpoints may share the store (a "*" among them): only these two count.
      const ours = <T extends { id: string }>(found: readonly T[]) =>
        found.filter((e) => e.id === a.id || e.id === b.id);
      const ids = async () =>
        ours(await f.endpoints.subscribed("follow.created", null))
          .map((e) => e.id)
          .sort();
      expect(await ids()).toEqual([]);
      await f.endpoints.create(a);
      await f.endpoints.create(b);
      expect(await ids()).toEqual([a.id]);
      await f.endpoints.update(b.id, { enabledEvents: ["follow.*"] });
      expect(await ids()).toEqual([a.id, b.id].sort());
      await f.endpoints.update(a.id, { status: "disabled" });
      expect(await ids()).toEqual([b.id]);
      // A caller may change the array it got: the next caller's is whole.
      (await f.endpoints.subscribed("follow.created", null)).length = 0;
      expect(await ids()).toEqual([b.id]);
      expect(ours(await f.endpoints.subscribed("follow.created", null))[0]?.failingSince).toBeNull();
      await f.endpoints.recordOutcome(b.id, false, 10);
      expect(ours(await f.endpoints.subscribed("follow.created", null))[0]?.failingSince).toBe(10);
      await f.endpoints.delete(b.id);
      expect(await ids()).toEqual([]);
      await f.endpoints.delete(a.id);
    });

    it("keeps an endpoint's headers through create, update and modify; an empty set by default", async () => {
      const e = endpointFixture({ headers: { "x-gateway-key": "k_1", "x-route": "eu west" } });
      await f.endpoints.create(e);
      expect((await f.endpoints.get(e.id))?.headers).toEqual({ "x-gateway-key": "k_1", "x-route": "eu west" });
      expect((await f.endpoints.update(e.id, { headers: { "x-route": "us" } }))?.headers).toEqual({ "x-route": "us" });
      const added = await f.endpoints.modify(e.id, (current) => ({ headers: { ...current.headers, "x-more": "1" } }));
      expect(added?.headers).toEqual({ "x-route": "us", "x-more": "1" });
      expect((await f.endpoints.subscribed("*.any", null)).find((s) => s.id === e.id)?.headers).toEqual(added?.headers);
      const plain = endpointFixture();
      await f.endpoints.create(plain);
      expect((await f.endpoints.get(plain.id))?.headers).toEqual({});
      for (const x of [e, plain]) await f.endpoints.delete(x.id);
    });

    // Regression: the memory store kept a NUL or a lone surrogate that PostgreSQL refused with its own error (or, in a
    // text column, stored as U+FFFD): a program tested on memory failed, or read back other text, in production.
    it("refuses text PostgreSQL cannot keep (U+0000, a lone surrogate) in every field, with a TypeError naming it; nothing is written", async () => {
      const bad: [keyof EndpointPatch, unknown][] = [
        ["url", "https://hooks.example.com/\u0000"],
        ["description", "a\u0000b"],
        ["description", "a\ud800b"],
        ["enabledEvents", ["order.*", "x\udc00"]],
        ["metadata", { plan: "a\u0000" }],
        ["metadata", { "k\u0000": "v" }],
        ["headers", { "x-a": "\ud83d" }],
        ["secrets", [{ secret: "whsec_\u0000", expiresAt: null }]],
      ];
      const kept = endpointFixture({ description: "kept" });
      await f.endpoints.create(kept);
      for (const [field, value] of bad) {
        const e = endpointFixture({ [field]: value });
        await expect(f.endpoints.create(e), `create ${field}`).rejects.toThrow(
          expect.objectContaining({ name: "TypeError", message: expect.stringContaining(field) }),
        );
        expect(await f.endpoints.get(e.id), `create ${field}`).toBeUndefined();
        await expect(f.endpoints.update(kept.id, { [field]: value }), `update ${field}`).rejects.toThrow(TypeError);
        await expect(
          f.endpoints.modify(kept.id, () => ({ [field]: value })),
          `modify ${field}`,
        ).rejects.toThrow(TypeError);
        expect(await f.endpoints.get(kept.id), `after ${field}`).toEqual(kept);
      }
      await f.endpoints.delete(kept.id);
    });

    describe("tenants", () => {
      it("keeps each endpoint's tenant through every write; a patch naming a tenant changes nothing", async () => {
        const owned = endpointFixture({ tenant: "acme", enabledEvents: ["keep.created"] });
        const own = endpointFixture({ enabledEvents: ["keep.created"] });
        await f.endpoints.create(owned);
        await f.endpoints.create(own);
        expect(await f.endpoints.get(owned.id)).toEqual(owned);
        expect((await f.endpoints.get(own.id))?.tenant).toBeNull();
        const moved = { description: "moved", tenant: "globex" } as EndpointPatch;
        expect(await f.endpoints.update(owned.id, moved)).toMatchObject({ description: "moved", tenant: "acme" });
        expect(await f.endpoints.modify(owned.id, () => moved)).toMatchObject({ tenant: "acme" });
        await f.endpoints.recordOutcome(owned.id, false, 7);
        expect(await f.endpoints.get(owned.id)).toMatchObject({ tenant: "acme", failingSince: 7 });
        expect((await f.endpoints.subscribed("keep.created", "globex")).map((e) => e.id)).toEqual([]);
        for (const e of [owned, own]) await f.endpoints.delete(e.id);
      });

      it("lists one tenant's endpoints (null: those without one), page by page; another tenant's cursor gives an empty page", async () => {
        const tenant = `list_${endpointFixture().id}`;
        const mine = [endpointFixture({ tenant }), endpointFixture({ tenant }), endpointFixture({ tenant })];
        const theirs = endpointFixture({ tenant: `${tenant}_other` });
        const operator = endpointFixture();
        // Interleaved in creation order: a tenant's page skips the others' endpoints.
        for (const e of [mine[0], theirs, mine[1], operator, mine[2]] as WebhookEndpoint[]) await f.endpoints.create(e);
        const ids = (list: readonly WebhookEndpoint[]) => list.map((e) => e.id);
        expect(ids(await f.endpoints.list({ limit: 10, tenant }))).toEqual(ids(mine));
        expect(ids(await f.endpoints.list({ limit: 2, tenant }))).toEqual(ids(mine.slice(0, 2)));
        expect(ids(await f.endpoints.list({ limit: 2, tenant, startingAfter: mine[0]?.id }))).toEqual(
          ids(mine.slice(1)),
        );
        expect(await f.endpoints.list({ limit: 2, tenant, startingAfter: mine[2]?.id })).toEqual([]);
        expect(await f.endpoints.list({ limit: 10, tenant, startingAfter: theirs.id })).toEqual([]);
        expect(await f.endpoints.list({ limit: 10, tenant, startingAfter: operator.id })).toEqual([]);
        expect(await f.endpoints.list({ limit: 10, tenant: `${tenant}_none` })).toEqual([]);
        const operators = ids(await f.endpoints.list({ limit: 10_000, tenant: null }));
        expect(operators).toContain(operator.id);
        expect(operators.some((id) => id === theirs.id || mine.some((e) => e.id === id))).toBe(false);
        // Without a tenant, every endpoint.
        const all = ids(await f.endpoints.list({ limit: 10_000 }));
        for (const e of [...mine, theirs, operator]) expect(all).toContain(e.id);
        for (const e of [...mine, theirs, operator]) await f.endpoints.delete(e.id);
      });

      it("finds the subscribers of one tenant only: a tenant's event never reaches another's endpoints or the operator's", async () => {
        const acme = endpointFixture({ tenant: "acme", enabledEvents: ["split.*"] });
        const acmeOff = endpointFixture({ tenant: "acme", enabledEvents: ["split.created"], status: "disabled" });
        const globex = endpointFixture({ tenant: "globex", enabledEvents: ["split.created"] });
        const operator = endpointFixture({ enabledEvents: ["split.created"] });
        for (const e of [acme, acmeOff, globex, operator]) await f.endpoints.create(e);
        const ids = async (tenant: string | null) =>
          (await f.endpoints.subscribed("split.created", tenant)).map((e) => e.id);
        expect(await ids("acme")).toEqual([acme.id]);
        expect(await ids("globex")).toEqual([globex.id]);
        expect(await ids("initech")).toEqual([]);
        expect(await ids(null)).toContain(operator.id);
        expect(await ids(null)).not.toContain(acme.id);
        // Asked before and after a write of another tenant's endpoint: each tenant's answer follows its own writes.
        await f.endpoints.update(globex.id, { enabledEvents: ["other.created"] });
        expect(await ids("globex")).toEqual([]);
        expect(await ids("acme")).toEqual([acme.id]);
        await f.endpoints.delete(acme.id);
        expect(await ids("acme")).toEqual([]);
        for (const e of [acmeOff, globex, operator]) await f.endpoints.delete(e.id);
      });

      it("keeps a tenant within maxPerTenant endpoints, atomically: of concurrent creations exactly the room is stored; a deletion frees a place", async () => {
        const tenant = `limit_${endpointFixture().id}`;
        const made = Array.from({ length: 12 }, () => endpointFixture({ tenant }));
        // Another tenant's and the operator's endpoints count for nothing, and have no limit of their own here.
        for (const e of [endpointFixture({ tenant: `${tenant}_other` }), endpointFixture(), endpointFixture()]) {
          expect(await f.endpoints.create(e, { maxPerTenant: 1 })).toBe(true);
        }
        const created = await Promise.all(made.map((e) => f.endpoints.create(e, { maxPerTenant: 5 })));
        expect(created.filter(Boolean)).toHaveLength(5);
        const stored = await f.endpoints.list({ limit: 100, tenant });
        expect(stored.map((e) => e.id).sort()).toEqual(
          made
            .filter((_, i) => created[i])
            .map((e) => e.id)
            .sort(),
        );
        const refused = made.find((_, i) => !created[i]) as WebhookEndpoint;
        expect(await f.endpoints.get(refused.id)).toBeUndefined();
        expect(await f.endpoints.create(refused, { maxPerTenant: 5 })).toBe(false);
        // Without a limit (the store's default) it is stored; then the limit counts it.
        const extra = endpointFixture({ tenant });
        expect(await f.endpoints.create(extra)).toBe(true);
        expect(await f.endpoints.create(refused, { maxPerTenant: 6 })).toBe(false);
        expect(await f.endpoints.delete(extra.id)).toBe(true);
        expect(await f.endpoints.delete(extra.id)).toBe(false);
        expect(await f.endpoints.create(refused, { maxPerTenant: 6 })).toBe(true);
        // A failed creation (the id taken) takes no place.
        await expect(f.endpoints.create({ ...refused }, { maxPerTenant: 100 })).rejects.toThrow();
        expect(await f.endpoints.create(endpointFixture({ tenant }), { maxPerTenant: 7 })).toBe(true);
        expect(await f.endpoints.create(endpointFixture({ tenant }), { maxPerTenant: 7 })).toBe(false);
        for (const limit of [0, -1, 1.5, Number.NaN]) {
          await expect(f.endpoints.create(endpointFixture({ tenant }), { maxPerTenant: limit })).rejects.toThrow(
            "EndpointStore.create: maxPerTenant must be a positive integer",
          );
        }
        expect(await f.endpoints.create(endpointFixture({ tenant }), { maxPerTenant: Number.POSITIVE_INFINITY })).toBe(
          true,
        );
        for (const e of await f.endpoints.list({ limit: 100, tenant })) await f.endpoints.delete(e.id);
      });

      it("finds an operator's endpoint with allTenants for every tenant's event and the operator's, oldest first; a tenant's endpoint cannot have it", async () => {
        const all = endpointFixture({ allTenants: true, enabledEvents: ["every.*"] });
        const acme = endpointFixture({ tenant: "acme", enabledEvents: ["every.created"] });
        const operator = endpointFixture({ enabledEvents: ["every.created"] });
        const allOff = endpointFixture({ allTenants: true, enabledEvents: ["every.created"], status: "disabled" });
        for (const e of [all, acme, operator, allOff]) await f.endpoints.create(e);
        expect(await f.endpoints.get(all.id)).toEqual(all);
        const ids = async (tenant: string | null) =>
          (await f.endpoints.subscribed("every.created", tenant)).map((e) => e.id);
        expect(await ids("acme")).toEqual([all.id, acme.id]);
        expect(await ids("globex")).toEqual([all.id]);
        expect(await ids(null)).toEqual(expect.arrayContaining([all.id, operator.id]));
        expect(await ids(null)).not.toContain(acme.id);
        // A write of the operator's endpoint shows in every tenant's answer.
        await f.endpoints.update(all.id, { enabledEvents: ["other.created"] });
        expect(await ids("acme")).toEqual([acme.id]);
        expect(await ids("globex")).toEqual([]);
        // allTenants is set at creation only.
        const patch = { allTenants: true, description: "x" } as EndpointPatch;
        expect(await f.endpoints.update(operator.id, patch)).toMatchObject({ allTenants: false, description: "x" });
        const owned = endpointFixture({ tenant: "acme", allTenants: true });
        await expect(f.endpoints.create(owned)).rejects.toThrow(
          "only an endpoint without a tenant (the operator's) may have allTenants",
        );
        expect(await f.endpoints.get(owned.id)).toBeUndefined();
        for (const e of [all, acme, operator, allOff]) await f.endpoints.delete(e.id);
      });

      it("refuses a tenant that cannot name one, storing nothing", async () => {
        for (const tenant of ["", "a b", "x".repeat(256), "caf\u00e9", "nul\u0000"]) {
          const e = endpointFixture({ tenant });
          await expect(f.endpoints.create(e), JSON.stringify(tenant)).rejects.toThrow(
            "EndpointStore.create: tenant must be 1 to 255 printable ASCII characters",
          );
          expect(await f.endpoints.get(e.id)).toBeUndefined();
        }
      });
    });

    it("keeps createdAt, disabledAt and failingSince as whole milliseconds, a fraction dropped, in every store alike (regression: memory kept x.4 exactly, PostgreSQL read it back rounded)", async () => {
      const e = endpointFixture({ createdAt: T0 + 0.6 });
      await f.endpoints.create(e);
      expect((await f.endpoints.get(e.id))?.createdAt).toBe(T0);
      const disabled = await f.endpoints.update(e.id, {
        status: "disabled",
        disabledReason: "manual",
        disabledAt: T0 + 5.5,
      });
      expect(disabled?.disabledAt).toBe(T0 + 5);
      expect((await f.endpoints.get(e.id))?.disabledAt).toBe(T0 + 5);
      expect(await f.endpoints.recordOutcome(e.id, false, T0 + 7.9)).toBe(T0 + 7);
      expect((await f.endpoints.get(e.id))?.failingSince).toBe(T0 + 7);
      await f.endpoints.delete(e.id);
    });

    it("records health: a failure sets failingSince once, a success clears it", async () => {
      const e = endpointFixture();
      await f.endpoints.create(e);
      expect(await f.endpoints.recordOutcome(e.id, false, 10)).toBe(10);
      expect(await f.endpoints.recordOutcome(e.id, false, 20)).toBe(10);
      expect(await f.endpoints.recordOutcome(e.id, true, 30)).toBeNull();
      expect(await f.endpoints.recordOutcome("we_missing", true, 30)).toBeUndefined();
      await f.endpoints.delete(e.id);
    });

    describe("modify: an atomic read-modify-write", () => {
      it("rotates the secrets atomically: concurrent rotations each keep theirs (regression: a read-modify-write lost one)", async () => {
        const e = endpointFixture();
        await f.endpoints.create(e);
        const added = Array.from({ length: 8 }, (_, i) => `whsec_concurrent_${i}`);
        const results = await Promise.all(
          added.map((secret) =>
            f.endpoints.modify(e.id, (current) => ({ secrets: [...current.secrets, { secret, expiresAt: null }] })),
          ),
        );
        for (const [i, result] of results.entries()) expect(result?.secrets.map((s) => s.secret)).toContain(added[i]);
        const stored = (await f.endpoints.get(e.id))?.secrets.map((s) => s.secret);
        expect(stored?.slice().sort()).toEqual([e.secrets[0]?.secret, ...added].sort());
        await f.endpoints.delete(e.id);
      });

      it("keeps every key of 50 concurrent calls each adding its own metadata key (regression: merge patches read {} and the last write won)", async () => {
        const e = endpointFixture({ metadata: { kept: "yes" } });
        await f.endpoints.create(e);
        const keys = Array.from({ length: 50 }, (_, i) => `k${i}`);
        await Promise.all(
          keys.map((key) => f.endpoints.modify(e.id, (current) => ({ metadata: { ...current.metadata, [key]: key } }))),
        );
        expect((await f.endpoints.get(e.id))?.metadata).toEqual({
          kept: "yes",
          ...Object.fromEntries(keys.map((key) => [key, key])),
        });
        await f.endpoints.delete(e.id);
      });

      it("applies the patch as update does: an undefined field left alone, a key that is no field ignored", async () => {
        const e = endpointFixture({ description: "kept", rateLimit: 3 });
        await f.endpoints.create(e);
        const patch = { description: undefined, rateLimit: 4, id: "we_other", createdAt: 1, nothing: "x" };
        const updated = await f.endpoints.modify(e.id, () => patch as EndpointPatch);
        expect(updated).toEqual({ ...e, rateLimit: 4 });
        expect(await f.endpoints.get(e.id)).toEqual({ ...e, rateLimit: 4 });
        await f.endpoints.delete(e.id);
      });

      it("writes nothing and rejects with what next threw", async () => {
        const e = endpointFixture({ description: "before" });
        await f.endpoints.create(e);
        const thrown = new Error("refused by next");
        await expect(
          f.endpoints.modify(e.id, () => {
            throw thrown;
          }),
        ).rejects.toBe(thrown);
        // Not an Error: whatever was thrown, as it was.
        await expect(
          f.endpoints.modify(e.id, () => {
            throw "a string";
          }),
        ).rejects.toBe("a string");
        expect(await f.endpoints.get(e.id)).toEqual(e);
        await f.endpoints.delete(e.id);
      });

      it("answers undefined for no such endpoint, without calling next", async () => {
        let called = false;
        const missing = await f.endpoints.modify("we_missing", () => {
          called = true;
          return { description: "x" };
        });
        expect(missing).toBeUndefined();
        expect(called).toBe(false);
      });

      it("writes nothing for an empty patch and answers the endpoint as read", async () => {
        const e = endpointFixture({ enabledEvents: ["empty.created"] });
        await f.endpoints.create(e);
        const before = await f.endpoints.subscribed("empty.created", null);
        expect(await f.endpoints.modify(e.id, () => ({}))).toEqual(e);
        expect(await f.endpoints.modify(e.id, () => ({ description: undefined }))).toEqual(e);
        expect(await f.endpoints.get(e.id)).toEqual(e);
        expect(await f.endpoints.subscribed("empty.created", null)).toEqual(before);
        await f.endpoints.delete(e.id);
      });
    });

    describe("deleteChecked: an atomic conditional delete", () => {
      // What the endpoint API's If-Match does: refuse unless the endpoint is still the one the caller read.
      const unchangedSince = (seen: WebhookEndpoint | undefined) => (current: WebhookEndpoint) => {
        if (JSON.stringify(current) !== JSON.stringify(seen)) throw new Error("changed since read");
      };

      it("deletes when check returns, handing it the endpoint as stored; the tenant's place is freed", async () => {
        const e = endpointFixture({ tenant: "acme_delete_checked", metadata: { team: "a" } });
        expect(await f.endpoints.create(e, { maxPerTenant: 1 })).toBe(true);
        const given: WebhookEndpoint[] = [];
        expect(await f.endpoints.deleteChecked(e.id, (current) => void given.push(current))).toBe(true);
        expect(given.at(-1)).toEqual(e);
        expect(await f.endpoints.get(e.id)).toBeUndefined();
        const subscribers = await f.endpoints.subscribed("order.created", "acme_delete_checked");
        expect(subscribers.map((x) => x.id)).not.toContain(e.id);
        const next = endpointFixture({ tenant: "acme_delete_checked" });
        expect(await f.endpoints.create(next, { maxPerTenant: 1 })).toBe(true);
        await f.endpoints.delete(next.id);
      });

      it("deletes nothing and rejects with what check threw", async () => {
        const e = endpointFixture({ description: "kept" });
        await f.endpoints.create(e);
        const thrown = new Error("refused by check");
        await expect(
          f.endpoints.deleteChecked(e.id, () => {
            throw thrown;
          }),
        ).rejects.toBe(thrown);
        // Not an Error: whatever was thrown, as it was.
        await expect(
          f.endpoints.deleteChecked(e.id, () => {
            throw "a string";
          }),
        ).rejects.toBe("a string");
        expect(await f.endpoints.get(e.id)).toEqual(e);
        expect((await f.endpoints.list({ limit: 1_000 })).map((x) => x.id)).toContain(e.id);
        await f.endpoints.delete(e.id);
      });

      it("answers false for no such endpoint, without calling check", async () => {
        let called = false;
        expect(
          await f.endpoints.deleteChecked("we_missing", () => {
            called = true;
          }),
        ).toBe(false);
        expect(called).toBe(false);
      });

      it("checks the endpoint as stored, not as the caller read it: a write landing after the read is refused, nothing deleted (regression: the API's DELETE checked If-Match on its read, then deleted what had changed)", async () => {
        const e = endpointFixture({ description: "read" });
        await f.endpoints.create(e);
        const seen = await f.endpoints.get(e.id);
        // Another writer, between the caller's read and its delete.
        await f.endpoints.modify(e.id, () => ({ description: "written after the read" }));
        await expect(f.endpoints.deleteChecked(e.id, unchangedSince(seen))).rejects.toThrow("changed since read");
        expect((await f.endpoints.get(e.id))?.description).toBe("written after the read");
        // Read again, the check holds.
        expect(await f.endpoints.deleteChecked(e.id, unchangedSince(await f.endpoints.get(e.id)))).toBe(true);
        expect(await f.endpoints.get(e.id)).toBeUndefined();
      });

      it("of a write and a conditional delete at once, one acts on what the other left: never a deleted endpoint whose write was answered as stored", async () => {
        for (let round = 0; round < 10; round++) {
          const e = endpointFixture({ description: "original" });
          await f.endpoints.create(e);
          const seen = await f.endpoints.get(e.id);
          const [written, deleted] = await Promise.allSettled([
            f.endpoints.modify(e.id, () => ({ description: `write ${round}` })),
            f.endpoints.deleteChecked(e.id, unchangedSince(seen)),
          ]);
          const stored = await f.endpoints.get(e.id);
          if (deleted.status === "fulfilled") {
            // Deleted first: the write found nothing.
            expect(deleted.value, `round ${round}`).toBe(true);
            expect(written, `round ${round}`).toEqual({ status: "fulfilled", value: undefined });
            expect(stored, `round ${round}`).toBeUndefined();
          } else {
            // Written first: the check saw the write and refused.
            expect(written.status === "fulfilled" && written.value?.description, `round ${round}`).toBe(
              `write ${round}`,
            );
            expect(stored?.description, `round ${round}`).toBe(`write ${round}`);
            await f.endpoints.delete(e.id);
          }
        }
      });
    });

    describe("watch: told of this store's own writes, once done (optional)", () => {
      // What a listener saw: the id, and what a read started inside the listener found.
      const watching = (store: EndpointStore) => {
        const seen: { id: string; read: Promise<WebhookEndpoint | undefined> }[] = [];
        const unwatch = store.watch?.((id) => void seen.push({ id, read: store.get(id) })) ?? (() => {});
        // Every read the listener started settles before the test ends, checked or not: none is still running when
        // the suite drops the schema it reads.
        const stop = async () => {
          unwatch();
          await Promise.allSettled(seen.map((x) => x.read));
        };
        return { seen, stop, ids: () => seen.map((x) => x.id) };
      };

      it("tells the id after create, update, modify, delete and deleteChecked; a read inside the listener sees the write", async ({
        skip,
      }) => {
        if (f.endpoints.watch === undefined) return skip("this store has no watch");
        const e = endpointFixture({ description: "created" });
        const w = watching(f.endpoints);
        try {
          await f.endpoints.create(e);
          expect(w.ids()).toEqual([e.id]);
          expect(await w.seen[0]?.read).toEqual(e);
          await f.endpoints.update(e.id, { description: "updated" });
          expect(w.ids()).toEqual([e.id, e.id]);
          expect((await w.seen[1]?.read)?.description).toBe("updated");
          await f.endpoints.modify(e.id, () => ({ description: "modified" }));
          expect(w.ids()).toHaveLength(3);
          expect((await w.seen[2]?.read)?.description).toBe("modified");
          expect(await f.endpoints.delete(e.id)).toBe(true);
          expect(w.ids()).toHaveLength(4);
          expect(await w.seen[3]?.read).toBeUndefined();
          const checked = endpointFixture();
          await f.endpoints.create(checked);
          expect(await f.endpoints.deleteChecked(checked.id, () => {})).toBe(true);
          expect(w.ids()).toEqual([e.id, e.id, e.id, e.id, checked.id, checked.id]);
          expect(await w.seen[5]?.read).toBeUndefined();
        } finally {
          await w.stop();
        }
      });

      // Regression: the stores disagreed on an update that changed nothing (PostgreSQL told it, memory did not). The
      // rule all of them keep: every write call that found its endpoint tells it, once, after the write, whether or not
      // a value changed (PostgreSQL cannot tell an equal value from a new one without reading the row first).
      it("tells an update or modify that found the endpoint once, even when nothing changed", async ({ skip }) => {
        if (f.endpoints.watch === undefined) return skip("this store has no watch");
        const e = endpointFixture({ description: "same" });
        await f.endpoints.create(e);
        const w = watching(f.endpoints);
        try {
          const writes: [string, () => Promise<unknown>][] = [
            ["an equal value", () => f.endpoints.update(e.id, { description: "same" })],
            ["an empty patch", () => f.endpoints.update(e.id, {})],
            ["only undefined fields", () => f.endpoints.update(e.id, { description: undefined })],
            ["modify, an equal value", () => f.endpoints.modify(e.id, () => ({ description: "same" }))],
            ["modify, an empty patch", () => f.endpoints.modify(e.id, () => ({}))],
          ];
          for (const [i, [name, write]] of writes.entries()) {
            expect(await write(), name).toEqual(e);
            expect(w.ids(), name).toEqual(Array(i + 1).fill(e.id));
            expect(await w.seen[i]?.read, name).toEqual(e);
          }
        } finally {
          await w.stop();
        }
        await f.endpoints.delete(e.id);
      });

      it("tells nothing for recordOutcome, nor for a write that failed or was refused", async ({ skip }) => {
        if (f.endpoints.watch === undefined) return skip("this store has no watch");
        const e = endpointFixture({ tenant: "acme_watch_refused" });
        await f.endpoints.create(e, { maxPerTenant: 1 });
        const w = watching(f.endpoints);
        try {
          await f.endpoints.recordOutcome(e.id, false, 5);
          await f.endpoints.recordOutcome(e.id, true, 6);
          expect(await f.endpoints.update("we_missing", { description: "x" })).toBeUndefined();
          expect(await f.endpoints.modify("we_missing", () => ({ description: "x" }))).toBeUndefined();
          expect(await f.endpoints.delete("we_missing")).toBe(false);
          expect(await f.endpoints.deleteChecked("we_missing", () => {})).toBe(false);
          const refused = new Error("refused");
          await expect(
            f.endpoints.modify(e.id, () => {
              throw refused;
            }),
          ).rejects.toBe(refused);
          await expect(
            f.endpoints.deleteChecked(e.id, () => {
              throw refused;
            }),
          ).rejects.toBe(refused);
          const over = endpointFixture({ tenant: "acme_watch_refused" });
          expect(await f.endpoints.create(over, { maxPerTenant: 1 })).toBe(false);
          await expect(f.endpoints.create(endpointFixture({ id: e.id }))).rejects.toThrow();
          expect(w.ids()).toEqual([]);
        } finally {
          await w.stop();
        }
        await f.endpoints.delete(e.id);
      });

      it("stops calling once the returned function is called; the same function watched twice is two watches", async ({
        skip,
      }) => {
        if (f.endpoints.watch === undefined) return skip("this store has no watch");
        const e = endpointFixture();
        await f.endpoints.create(e);
        const calls: string[] = [];
        const listener = (id: string) => void calls.push(id);
        const first = f.endpoints.watch(listener);
        const second = f.endpoints.watch(listener);
        try {
          await f.endpoints.update(e.id, { description: "both" });
          expect(calls).toEqual([e.id, e.id]);
          first();
          first(); // stopping twice stops nothing more: the second watch still hears
          await f.endpoints.update(e.id, { description: "second only" });
          expect(calls).toHaveLength(3);
          second();
          await f.endpoints.update(e.id, { description: "none" });
          await f.endpoints.delete(e.id);
          expect(calls).toHaveLength(3);
        } finally {
          first();
          second();
        }
      });

      it("a listener that throws neither stops the others nor fails the write", async ({ skip }) => {
        if (f.endpoints.watch === undefined) return skip("this store has no watch");
        const e = endpointFixture({ description: "before" });
        const calls: string[] = [];
        const stops = [
          f.endpoints.watch(() => {
            throw new Error("a listener's bug");
          }),
          f.endpoints.watch((id) => void calls.push(id)),
        ];
        try {
          expect(await f.endpoints.create(e)).toBe(true);
          expect((await f.endpoints.update(e.id, { description: "after" }))?.description).toBe("after");
          expect(await f.endpoints.delete(e.id)).toBe(true);
          expect(calls).toEqual([e.id, e.id, e.id]);
          expect(await f.endpoints.get(e.id)).toBeUndefined();
        } finally {
          for (const stop of stops) stop();
        }
      });
    });

    it("keeps copies: changing what was handed to create or update, or what get returned, changes nothing stored (regression: the memory store kept metadata by reference)", async () => {
      const metadata: Record<string, string> = { team: "billing" };
      const enabledEvents = ["copy.created"];
      const e = endpointFixture({ metadata, enabledEvents });
      await f.endpoints.create(e);
      metadata["team"] = "changed";
      enabledEvents.push("copy.deleted");
      const patched: Record<string, string> = { plan: "pro" };
      await f.endpoints.update(e.id, { metadata: patched });
      patched["plan"] = "changed";
      const got = await f.endpoints.get(e.id);
      try {
        (got?.metadata as Record<string, string>)["plan"] = "mutated"; // a frozen object throws: also fine
      } catch {}
      const stored = await f.endpoints.get(e.id);
      expect(stored?.metadata).toEqual({ plan: "pro" });
      expect(stored?.enabledEvents).toEqual(["copy.created"]);
      await f.endpoints.delete(e.id);
    });

    it("update leaves a field given as undefined as it is (regression: the memory store wiped it, PostgreSQL skipped it)", async () => {
      const e = endpointFixture({ description: "kept", metadata: { k: "v" }, rateLimit: 3 });
      await f.endpoints.create(e);
      const updated = await f.endpoints.update(e.id, {
        description: undefined,
        metadata: undefined,
        rateLimit: undefined,
        url: "https://other.example.com/in",
      });
      const expected = { description: "kept", metadata: { k: "v" }, rateLimit: 3, url: "https://other.example.com/in" };
      expect(updated).toMatchObject(expected);
      expect(await f.endpoints.get(e.id)).toMatchObject(expected);
      await f.endpoints.delete(e.id);
    });

    it("lists nothing after a startingAfter that names no endpoint, deleted or never one (the API answers 400 invalid_cursor)", async () => {
      const made = [endpointFixture(), endpointFixture(), endpointFixture()];
      for (const e of made) await f.endpoints.create(e);
      await f.endpoints.delete(made[1]?.id as string);
      expect(await f.endpoints.list({ limit: 10, startingAfter: made[1]?.id })).toEqual([]);
      expect(await f.endpoints.list({ limit: 10, startingAfter: "we_never" })).toEqual([]);
      for (const e of [made[0], made[2]]) await f.endpoints.delete(e?.id as string);
    });
  });

  describe(`${name}: delivery queue contract`, () => {
    let f: StoreFixture;
    let a: WebhookEndpoint;
    let b: WebhookEndpoint;
    beforeAll(async () => {
      f = await make();
      a = endpointFixture({ enabledEvents: ["q.*"] });
      b = endpointFixture({ enabledEvents: ["q.created"] });
      await f.endpoints.create(a);
      await f.endpoints.create(b);
    });
    afterAll(async () => {
      await f.close?.();
    });

    it("finds no record by an id with trailing characters (an id is matched whole, issue 16)", async () => {
      const event = createEvent({ type: "q.created", data: { n: 0 }, now: T0 });
      const [id] = (await f.queue.publish(event, { now: T0 })).deliveryIds as [string];
      expect((await f.queue.get(id))?.id).toBe(id);
      for (const suffix of ["0", "_0", "x", " ", "%00"]) {
        expect(await f.queue.get(`${id}${suffix}`), suffix).toBeUndefined();
        expect(await f.endpoints.get(`${a.id}${suffix}`), suffix).toBeUndefined();
      }
      expect(await f.queue.get(id.slice(0, -1))).toBeUndefined();
      // Leave the queue empty for the next case.
      for (const c of await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 })) {
        await f.queue.complete(
          c,
          transition(c.state, { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } }, T0).state,
        );
      }
    });

    it("publish fans out to every subscribed endpoint, once per event id", async () => {
      const event = createEvent({ type: "q.created", data: { n: 1 }, now: T0 });
      const { deliveryIds } = await f.queue.publish(event, { now: T0 });
      expect(deliveryIds).toHaveLength(2);
      expect((await f.queue.publish(event, { now: T0 })).deliveryIds).toEqual([]);
      const got = await f.queue.get(deliveryIds[0] as string);
      expect(JSON.parse(got?.payload ?? "null")).toEqual(event);
      expect(got?.state).toEqual(initialDeliveryState(T0));
      expect((await f.queue.publish(createEvent({ type: "z.none", data: {} }), { now: T0 })).deliveryIds).toEqual([]);
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 });
      expect(claimed).toHaveLength(2);
      for (const c of claimed) {
        await f.queue.complete(
          c,
          transition(c.state, { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } }, T0).state,
        );
      }
    });

    it("keeps times as whole milliseconds, a fraction dropped on the way in, so due times and lease ends agree in every queue (regression: memory kept x.4 exactly, PostgreSQL read it back rounded)", async () => {
      // A clock like performance.timeOrigin + performance.now(): every time below carries a fraction.
      // An endpoint of its own: the attempt line below stays out of the other cases' logs.
      const c = endpointFixture({ enabledEvents: ["frac.*"] });
      await f.endpoints.create(c);
      const event = createEvent({ type: "frac.created", data: {}, now: T0 });
      const [id] = (await f.queue.publish(event, { now: T0 + 0.6, delayMs: 10.7 })).deliveryIds as [string];
      const published = await f.queue.get(id);
      expect(published?.createdAt).toBe(T0);
      expect(published?.state.nextAttemptAt).toBe(T0 + 11);
      expect((await f.queue.list(c.id, { eventId: event.id, since: T0 + 0.9 })).map((d) => d.id)).toEqual([id]);
      expect(await f.queue.nextDueAt()).toBe(T0 + 11);
      expect(await f.queue.claim({ limit: 10, now: T0 + 10.9, leaseMs: 1_000 })).toEqual([]);
      // Due at T0 + 11, not T0 + 11.3: a claim at T0 + 11.05 takes it.
      const [claim] = await f.queue.claim({ limit: 10, now: T0 + 11.05, leaseMs: 1_000.3 });
      expect(claim?.id).toBe(id);
      expect(claim?.leaseUntil).toBe(T0 + 1_011);
      expect(await f.queue.nextDueAt()).toBe(T0 + 1_011);
      expect(await f.queue.renew([claim as ClaimedDelivery], T0 + 12.4, 1_000.3)).toEqual([id]);
      expect(await f.queue.nextDueAt()).toBe(T0 + 1_012);
      const failed = transition(
        (claim as ClaimedDelivery).state,
        { type: "attempt", result: { kind: "response", status: 500, durationMs: 1 } },
        T0 + 20.6,
      ).state;
      const attempt: AttemptInput = {
        deliveryId: id,
        endpointId: c.id,
        eventId: event.id,
        attempt: 1,
        startedAt: T0 + 20.6,
        durationMs: 1,
        status: 500,
        errorKind: null,
        response: null,
      };
      await f.queue.complete(claim as ClaimedDelivery, { ...failed, nextAttemptAt: T0 + 2_000.5 }, attempt);
      const retried = await f.queue.get(id);
      expect(retried?.state.nextAttemptAt).toBe(T0 + 2_000);
      expect(retried?.state.lastAttemptAt).toBe(T0 + 20);
      expect((await f.queue.attempts({ endpointId: c.id, deliveryId: id })).map((l) => l.startedAt)).toEqual([T0 + 20]);
      expect(await f.queue.nextDueAt()).toBe(T0 + 2_000);
      // Leave the queue empty for the next case: delivered at a fraction, read back whole.
      const [again] = await f.queue.claim({ limit: 10, now: T0 + 2_000.2, leaseMs: 1_000 });
      expect(again?.id).toBe(id);
      const done = transition((again as ClaimedDelivery).state, delivered200, T0 + 2_000.7).state;
      expect(await f.queue.complete(again as ClaimedDelivery, done)).toBe(true);
      expect((await f.queue.get(id))?.state.deliveredAt).toBe(T0 + 2_000);
    });

    it("publishes an event for a tenant to that tenant's subscribed endpoints only, and one without a tenant to the operator's only", async () => {
      const acme = endpointFixture({ tenant: "acme", enabledEvents: ["tenant.*"] });
      const globex = endpointFixture({ tenant: "globex", enabledEvents: ["tenant.created"] });
      const operator = endpointFixture({ enabledEvents: ["tenant.created"] });
      for (const e of [acme, globex, operator]) await f.endpoints.create(e);
      const targets = async (tenant: string | undefined) => {
        const event = createEvent({ type: "tenant.created", data: { tenant: tenant ?? null }, now: T0 });
        const { deliveryIds } = await f.queue.publish(event, tenant === undefined ? { now: T0 } : { now: T0, tenant });
        const records = await Promise.all(deliveryIds.map((id) => f.queue.get(id)));
        return records.map((record) => record?.endpointId);
      };
      expect(await targets("acme")).toEqual([acme.id]);
      expect(await targets("globex")).toEqual([globex.id]);
      expect(await targets("initech")).toEqual([]);
      expect(await targets(undefined)).toEqual([operator.id]);
      // An operator's endpoint with allTenants gets every tenant's events and the operator's.
      const all = endpointFixture({ allTenants: true, enabledEvents: ["tenant.created"] });
      await f.endpoints.create(all);
      expect((await targets("acme")).sort()).toEqual([acme.id, all.id].sort());
      expect(await targets("initech")).toEqual([all.id]);
      expect((await targets(undefined)).sort()).toEqual([operator.id, all.id].sort());
      await f.endpoints.delete(all.id);
      for (const tenant of ["", "a b", "x".repeat(256)]) {
        const event = createEvent({ type: "tenant.created", data: {}, now: T0 });
        await expect(f.queue.publish(event, { now: T0, tenant }), JSON.stringify(tenant)).rejects.toThrow(
          "DeliveryQueue.publish: tenant must be 1 to 255 printable ASCII characters",
        );
        expect((await f.queue.publish(event, { now: T0, tenant: "acme" })).deliveryIds).toHaveLength(1);
      }
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 100, now: T0, leaseMs: 1_000 });
      expect(claimed).toHaveLength(11);
      for (const c of claimed) await f.queue.complete(c, transition(c.state, delivered200, T0).state);
      for (const e of [acme, globex, operator]) await f.endpoints.delete(e.id);
    });

    it("de-duplicates an event id per tenant: another tenant's event of the same id is another event, the operator's too (regression: tenant B's evt_1 was dropped because tenant A had published an evt_1)", async () => {
      const acme = endpointFixture({ tenant: "acme", enabledEvents: ["seq.*"] });
      const globex = endpointFixture({ tenant: "globex", enabledEvents: ["seq.*"] });
      const operator = endpointFixture({ enabledEvents: ["seq.*"] });
      const all = endpointFixture({ allTenants: true, enabledEvents: ["seq.*"] });
      for (const e of [acme, globex, operator, all]) await f.endpoints.create(e);
      // Each tenant's events numbered by the provider's app on a sequence of its own: the same ids in every tenant.
      const id = `evt_seq_${acme.id}`;
      const targets = async (tenant: string | undefined, n = 0) => {
        const event = createEvent({ id, type: "seq.created", data: { n }, now: T0 });
        const { deliveryIds } = await f.queue.publish(event, { now: T0, tenant });
        const records = await Promise.all(deliveryIds.map((d) => f.queue.get(d)));
        return records.map((record) => record?.endpointId).sort();
      };
      expect(await targets("acme")).toEqual([acme.id, all.id].sort());
      expect(await targets("globex")).toEqual([globex.id, all.id].sort());
      expect(await targets(undefined)).toEqual([operator.id, all.id].sort());
      // The same id in the same scope again: a no-op, whatever the data.
      expect(await targets("acme", 1)).toEqual([]);
      expect(await targets("globex", 1)).toEqual([]);
      expect(await targets(undefined, 1)).toEqual([]);
      // Two publishes of one id in one scope at once keep each pair once; another scope's at the same time its own.
      const raced = await Promise.all([targets("initech"), targets("initech"), targets("hooli")]);
      expect(raced.flat().filter((e) => e === all.id)).toHaveLength(2);
      // The endpoint that receives every tenant's events has one delivery of the id per scope.
      const listed = await f.queue.list(all.id, { eventId: id });
      expect(listed.map((d) => d.tenant ?? null).sort()).toEqual(["acme", "globex", "hooli", "initech", null]);
      expect(new Set(listed.map((d) => JSON.parse(d.payload).data.n))).toEqual(new Set([0]));
      expect(await f.queue.list(acme.id, { eventId: id })).toHaveLength(1);
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 100, now: T0, leaseMs: 1_000 });
      expect(claimed).toHaveLength(8);
      expect(claimed.filter((c) => c.endpointId !== all.id).map((c) => c.tenant ?? null)).toEqual(
        expect.arrayContaining(["acme", "globex", null]),
      );
      for (const c of claimed) await f.queue.complete(c, transition(c.state, delivered200, T0).state);
      for (const e of [acme, globex, operator, all]) await f.endpoints.delete(e.id);
    });

    it("says whose event a claimed delivery carries: a tenant's (tenant) or the operator's (operatorEvent), which the worker checks against its endpoint; get and list keep the record's shape (regression: the operator's read as of an unknown tenant)", async () => {
      const all = endpointFixture({ allTenants: true, enabledEvents: ["whose.*"] });
      await f.endpoints.create(all);
      const published = new Map<string, string | null>();
      for (const tenant of ["acme", undefined]) {
        const event = createEvent({ type: "whose.created", data: {}, now: T0 });
        const [id] = (await f.queue.publish(event, { now: T0, tenant })).deliveryIds as [string];
        published.set(id, tenant ?? null);
      }
      const claimed = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 });
      expect(claimed).toHaveLength(2);
      for (const c of claimed) {
        const tenant = published.get(c.id);
        expect([c.tenant, c.operatorEvent], String(tenant)).toEqual(
          tenant === null ? [undefined, true] : [tenant, undefined],
        );
        // Only the claim says so: a record read otherwise is the same for the operator's event as before.
        expect(await f.queue.get(c.id)).not.toHaveProperty("operatorEvent");
      }
      for (const d of await f.queue.list(all.id)) expect(d).not.toHaveProperty("operatorEvent");
      // Leave the queue empty for the next case.
      for (const c of claimed) await f.queue.complete(c, transition(c.state, delivered200, T0).state);
      await f.endpoints.delete(all.id);
    });

    it("publishes to one endpoint alone with endpointId, whatever it subscribes to, if it is enabled and receives the tenant's events", async () => {
      const acme = endpointFixture({ tenant: "acme", enabledEvents: ["other.thing"] });
      const acmeToo = endpointFixture({ tenant: "acme", enabledEvents: ["*"] });
      const operator = endpointFixture({ enabledEvents: ["other.thing"] });
      const all = endpointFixture({ allTenants: true, enabledEvents: ["other.thing"] });
      const off = endpointFixture({ tenant: "acme", enabledEvents: ["*"], status: "disabled" });
      for (const e of [acme, acmeToo, operator, all, off]) await f.endpoints.create(e);
      const sent = async (endpointId: string, tenant?: string) => {
        const event = createEvent({ type: "only.tested", data: { endpointId }, now: T0 });
        const { deliveryIds } = await f.queue.publish(event, { now: T0, endpointId, tenant });
        const records = await Promise.all(deliveryIds.map((id) => f.queue.get(id)));
        return records.map((record) => [record?.endpointId, record?.eventId === event.id]);
      };
      // Not subscribed to the type, and another of the tenant's endpoints subscribed to every type gets nothing.
      expect(await sent(acme.id, "acme")).toEqual([[acme.id, true]]);
      expect(await sent(operator.id)).toEqual([[operator.id, true]]);
      expect(await sent(all.id, "acme")).toEqual([[all.id, true]]);
      expect(await sent(all.id)).toEqual([[all.id, true]]);
      // Another tenant's endpoint, the operator's (without allTenants) for a tenant, a tenant's for the operator,
      // a disabled one, one that does not exist: nothing.
      expect(await sent(acme.id, "globex")).toEqual([]);
      expect(await sent(operator.id, "acme")).toEqual([]);
      expect(await sent(acme.id)).toEqual([]);
      expect(await sent(off.id, "acme")).toEqual([]);
      expect(await sent("we_missing", "acme")).toEqual([]);
      for (const endpointId of ["", "a b", "x".repeat(256)]) {
        const event = createEvent({ type: "only.tested", data: {}, now: T0 });
        await expect(f.queue.publish(event, { now: T0, endpointId }), JSON.stringify(endpointId)).rejects.toThrow(
          "DeliveryQueue.publish: endpointId must be an endpoint id",
        );
      }
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 100, now: T0, leaseMs: 1_000 });
      expect(claimed).toHaveLength(4);
      for (const c of claimed) await f.queue.complete(c, transition(c.state, delivered200, T0).state);
      for (const e of [acme, acmeToo, operator, all, off]) await f.endpoints.delete(e.id);
    });

    it("lists an endpoint's delivery of one event with eventId, beside status and since; another endpoint's event, or none, gives an empty page", async () => {
      const mine = endpointFixture({ enabledEvents: ["find.*"] });
      const theirs = endpointFixture({ enabledEvents: ["find.*"] });
      for (const e of [mine, theirs]) await f.endpoints.create(e);
      const events = [0, 1, 2].map((i) => createEvent({ type: "find.me", data: { i }, now: T0 + i }));
      for (const [i, event] of events.entries()) await f.queue.publish(event, { now: T0 + i });
      const only = createEvent({ type: "find.me", data: {}, now: T0 });
      await f.queue.publish(only, { now: T0 + 5, endpointId: theirs.id });
      const found = await f.queue.list(mine.id, { eventId: events[1]?.id });
      expect(found.map((d) => [d.eventId, d.endpointId])).toEqual([[events[1]?.id, mine.id]]);
      expect(await f.queue.list(mine.id, { eventId: only.id })).toEqual([]);
      expect(await f.queue.list(mine.id, { eventId: "evt_none" })).toEqual([]);
      expect(await f.queue.list(mine.id, { eventId: events[1]?.id, status: ["delivered"] })).toEqual([]);
      expect(await f.queue.list(mine.id, { eventId: events[0]?.id, since: T0 + 1 })).toEqual([]);
      expect(await f.queue.list(mine.id, { eventId: events[1]?.id, startingAfter: found[0]?.id })).toEqual([]);
      await expect(f.queue.list(mine.id, { eventId: 7 as unknown as string })).rejects.toThrow(
        /DeliveryQueue.list: eventId must be an event id/,
      );
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 10, now: T0 + 10, leaseMs: 1_000 });
      expect(claimed).toHaveLength(7);
      for (const c of claimed) await f.queue.complete(c, transition(c.state, delivered200, T0 + 10).state);
      for (const e of [mine, theirs]) await f.endpoints.delete(e.id);
    });

    it("refuses an event over maxPayloadBytes (1 MiB of JSON by default) with payload_too_large, queuing nothing; one of exactly 1 MiB is queued", async () => {
      const e = endpointFixture({ enabledEvents: ["big.*"] });
      await f.endpoints.create(e);
      const limit = DELIVERY_DEFAULTS.maxPayloadBytes;
      // An event whose JSON is `bytes` long: a string of "x" and `wide` two-byte characters.
      const sized = (bytes: number, wide = 0) => {
        const shell = Buffer.byteLength(JSON.stringify(createEvent({ type: "big.sized", data: { s: "" }, now: T0 })));
        return createEvent({
          type: "big.sized",
          data: { s: "é".repeat(wide) + "x".repeat(bytes - shell - 2 * wide) },
          now: T0,
        });
      };
      expect(Buffer.byteLength(JSON.stringify(sized(limit + 1)))).toBe(limit + 1);
      const refused = f.queue.publish(sized(limit + 1), { now: T0 });
      await expect(refused).rejects.toBeInstanceOf(WebhookDeliveryError);
      await expect(f.queue.publish(sized(limit + 1, 1_000), { now: T0 })).rejects.toMatchObject({
        code: "payload_too_large",
      });
      expect(await f.queue.list(e.id)).toEqual([]);
      // Counted in bytes, not characters: 400,000 two-byte characters are 800,000 bytes, under the limit.
      expect((await f.queue.publish(sized(limit, 400_000), { now: T0 })).deliveryIds).toHaveLength(1);
      expect((await f.queue.publish(sized(limit), { now: T0 })).deliveryIds).toHaveLength(1);
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 });
      expect(claimed).toHaveLength(2);
      for (const c of claimed) await f.queue.complete(c, transition(c.state, delivered200, T0).state);
      await f.endpoints.delete(e.id);
    });

    it("refuses an event id no delivery can carry with invalid_event, queuing nothing, in every queue alike (regression: an id with a '.' was claimed and handed back at every lease end, never signed; U+0000 failed on PostgreSQL alone)", async () => {
      const e = endpointFixture({ enabledEvents: ["badid.*"] });
      await f.endpoints.create(e);
      const refused = [
        "ord_1.v2",
        "evt\u0000x",
        "evt_1\r\nx-injected: 1",
        " evt_1",
        "evt_1\t",
        "ēvt_1",
        "",
        "e".repeat(256),
      ];
      for (const id of refused) {
        const event = { ...createEvent({ type: "badid.sent", data: {}, now: T0 }), id };
        await expect(f.queue.publish(event, { now: T0 }), JSON.stringify(id)).rejects.toMatchObject({
          code: "invalid_event",
        });
      }
      expect(await f.queue.list(e.id)).toEqual([]);
      for (const sendable of ["e".repeat(255), "evt 1", "évt_1", "x"]) {
        const event = { ...createEvent({ type: "badid.sent", data: {}, now: T0 }), id: sendable };
        const [id] = (await f.queue.publish(event, { now: T0 })).deliveryIds as [string];
        expect((await f.queue.get(id))?.eventId).toBe(sendable);
      }
      // Leave the queue empty for the next case.
      for (const c of await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 })) {
        await f.queue.complete(c, transition(c.state, delivered200, T0).state);
      }
      await f.endpoints.delete(e.id);
    });

    it("refuses an event type createEvent would refuse with invalid_event, queuing nothing, in every queue alike (regression: a megabyte of dots cost its length squared in patterns)", async () => {
      const e = endpointFixture({ enabledEvents: ["*"] });
      await f.endpoints.create(e);
      for (const type of ["a.".repeat(100_000), "Order.Created", "order", "order.*", "", 42]) {
        const event = { ...createEvent({ type: "badtype.sent", data: {}, now: T0 }), type } as WebhookEvent;
        await expect(f.queue.publish(event, { now: T0 }), String(type).slice(0, 20)).rejects.toMatchObject({
          code: "invalid_event",
        });
      }
      expect(await f.queue.list(e.id)).toEqual([]);
      await f.endpoints.delete(e.id);
    });

    it("claims fairly between endpoints: a backlog of one endpoint does not hold back another's due delivery (issue 15)", async () => {
      const busy = endpointFixture({ enabledEvents: ["fair.busy"] });
      const quiet = endpointFixture({ enabledEvents: ["fair.quiet"] });
      const capped = endpointFixture({ enabledEvents: ["fair.capped"] });
      for (const e of [busy, quiet, capped]) await f.endpoints.create(e);
      const now = T0 + 50_000;
      for (let i = 0; i < 40; i++)
        await f.queue.publish(createEvent({ type: "fair.busy", data: { i } }), { now: now - 1_000 + i });
      await f.queue.publish(createEvent({ type: "fair.quiet", data: {} }), { now });
      for (let i = 0; i < 3; i++) await f.queue.publish(createEvent({ type: "fair.capped", data: { i } }), { now });
      const limits = new Map([[capped.id, 1]]);
      const claimed = await f.queue.claim({ limit: 10, now, leaseMs: 1_000, perEndpoint: 4, endpointLimits: limits });
      const count = (id: string) => claimed.filter((c) => c.endpointId === id).length;
      expect(count(busy.id)).toBe(4);
      expect(count(quiet.id)).toBe(1);
      expect(count(capped.id)).toBe(1);
      // Oldest due first within the busy endpoint.
      const busyEvents = claimed.filter((c) => c.endpointId === busy.id).map((c) => JSON.parse(c.payload).data.i);
      expect(busyEvents).toEqual([0, 1, 2, 3]);
      // An endpoint with no room gives nothing; the others keep their turns.
      const next = await f.queue.claim({
        limit: 100,
        now,
        leaseMs: 1_000,
        perEndpoint: 100,
        endpointLimits: new Map([[capped.id, 0]]),
      });
      expect(next.filter((c) => c.endpointId === capped.id)).toEqual([]);
      expect(next.filter((c) => c.endpointId === busy.id)).toHaveLength(36);
      for (const c of [...claimed, ...next]) await f.queue.complete(c, transition(c.state, delivered200, now).state);
      for (const c of await f.queue.claim({ limit: 100, now, leaseMs: 1_000 })) {
        await f.queue.complete(c, transition(c.state, delivered200, now).state);
      }
      for (const e of [busy, quiet, capped]) await f.endpoints.delete(e.id);
    });

    it("gives an endpoint with room for one its oldest free due delivery: the next while the oldest is in flight, each to one of concurrent claims, none before it is due", async () => {
      const e = endpointFixture({ enabledEvents: ["one.room"] });
      const other = endpointFixture({ enabledEvents: ["one.other"] });
      for (const x of [e, other]) await f.endpoints.create(x);
      const now = T0 + 70_000;
      for (let i = 0; i < 6; i++) {
        await f.queue.publish(createEvent({ type: "one.room", data: { i } }), { now: now - 1_000 + i });
      }
      const mine = (claims: readonly ClaimedDelivery[]) => claims.filter((c) => c.endpointId === e.id);
      const order = (claims: readonly ClaimedDelivery[]) => mine(claims).map((c) => JSON.parse(c.payload).data.i);
      const one = { limit: 10, now, leaseMs: 1_000, perEndpoint: 1 };
      const first = await f.queue.claim(one);
      expect(order(first)).toEqual([0]);
      // The oldest is leased: the next due one, by perEndpoint and by a room of 1 in endpointLimits alike.
      const second = await f.queue.claim(one);
      expect(order(second)).toEqual([1]);
      const third = await f.queue.claim({ ...one, perEndpoint: 4, endpointLimits: new Map([[e.id, 1]]) });
      expect(order(third)).toEqual([2]);
      // Concurrent claims never share a delivery.
      const together = await Promise.all([f.queue.claim(one), f.queue.claim(one), f.queue.claim(one)]);
      const ids = together.flatMap((claims) => mine(claims).map((c) => c.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThanOrEqual(1);
      const all = [...first, ...second, ...third, ...together.flat()];
      for (const c of all) await f.queue.complete(c, transition(c.state, delivered200, now).state);
      for (const c of await f.queue.claim({ limit: 100, now, leaseMs: 1_000 })) {
        await f.queue.complete(c, transition(c.state, delivered200, now).state);
      }
      // An endpoint whose only delivery is not yet due gives nothing until it is.
      await f.queue.publish(createEvent({ type: "one.other", data: {} }), { now, delayMs: 5_000 });
      const early = await f.queue.claim({ ...one, now: now + 1_000 });
      expect(early.filter((c) => c.endpointId === other.id)).toEqual([]);
      const onTime = await f.queue.claim({ ...one, now: now + 6_000 });
      expect(onTime.filter((c) => c.endpointId === other.id)).toHaveLength(1);
      for (const c of [...early, ...onTime]) await f.queue.complete(c, transition(c.state, delivered200, now).state);
      for (const x of [e, other]) await f.endpoints.delete(x.id);
    });

    it("renews the leases still held, so a slow attempt is not claimed again (issue 15)", async () => {
      const now = T0 + 60_000;
      const event = createEvent({ type: "q.created", data: { renew: true } });
      await f.queue.publish(event, { now });
      const claimed = (await f.queue.claim({ limit: 10, now, leaseMs: 1_000 })).filter((c) => c.eventId === event.id);
      expect(claimed).toHaveLength(2);
      const [kept, dropped] = claimed as [ClaimedDelivery, ClaimedDelivery];
      expect(await f.queue.renew([kept], now + 900, 1_000)).toEqual([kept.id]);
      // Past the first lease, only the delivery whose lease was not renewed is due again.
      const again = await f.queue.claim({ limit: 10, now: now + 1_500, leaseMs: 1_000 });
      expect(again.map((c) => c.id)).toEqual([dropped.id]);
      // A lease taken over by another claim is not renewed for the old holder.
      expect(await f.queue.renew([dropped], now + 1_600, 1_000)).toEqual([]);
      expect(await f.queue.complete(kept, transition(kept.state, delivered200, now).state)).toBe(true);
      const [retaken] = again as [ClaimedDelivery];
      expect(await f.queue.complete(retaken, transition(retaken.state, delivered200, now).state)).toBe(true);
    });

    it("round-trips the publisher's traceparent on get, list and claim; refuses a malformed one", async () => {
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const event = createEvent({ type: "q.created", data: { n: 2 }, now: T0 });
      const { deliveryIds } = await f.queue.publish(event, { now: T0, traceparent });
      expect(deliveryIds).toHaveLength(2);
      const plain = createEvent({ type: "q.created", data: { n: 3 }, now: T0 });
      const [plainId] = (await f.queue.publish(plain, { now: T0 })).deliveryIds as [string];
      expect((await f.queue.get(deliveryIds[0] as string))?.traceparent).toBe(traceparent);
      expect((await f.queue.get(plainId))?.traceparent).toBeUndefined();
      expect((await f.queue.list(b.id)).find((d) => d.eventId === event.id)?.traceparent).toBe(traceparent);
      const bad = createEvent({ type: "q.created", data: {}, now: T0 });
      for (const value of ["", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "ff-" + traceparent.slice(3)]) {
        await expect(f.queue.publish(bad, { now: T0, traceparent: value }), value).rejects.toThrow(TypeError);
      }
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 });
      expect(claimed.filter((c) => c.eventId === event.id).map((c) => c.traceparent)).toEqual([
        traceparent,
        traceparent,
      ]);
      for (const c of claimed) {
        await f.queue.complete(
          c,
          transition(c.state, { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } }, T0).state,
        );
      }
    });

    // W3C Trace Context §3.3: tracestate travels beside traceparent, stored with the delivery as it is.
    it("round-trips the publisher's tracestate beside its traceparent on get, list and claim; refuses an invalid one", async () => {
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const event = createEvent({ type: "q.created", data: { n: 4 }, now: T0 });
      // Optional white space around members and empty members are not kept (§3.3.1.1).
      const published = await f.queue.publish(event, {
        now: T0,
        traceparent,
        tracestate: " congo=t61rcWkgMzE ,, rojo=00f067aa0ba902b7\t",
      });
      const kept = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
      expect(published.deliveryIds).toHaveLength(2);
      expect((await f.queue.get(published.deliveryIds[0] as string))?.tracestate).toBe(kept);
      expect((await f.queue.list(b.id)).find((d) => d.eventId === event.id)?.tracestate).toBe(kept);
      // Without one (or with an empty list, §3.3.1.1), none is stored.
      const plain = createEvent({ type: "q.created", data: { n: 5 }, now: T0 });
      const [plainId] = (await f.queue.publish(plain, { now: T0, traceparent, tracestate: " , " })).deliveryIds as [
        string,
      ];
      expect(await f.queue.get(plainId)).not.toHaveProperty("tracestate");
      const member = (i: number) => `k${i}=v`;
      const refused: [string, { traceparent?: string; tracestate: string }][] = [
        ["without a traceparent", { tracestate: kept }],
        ["a member that is not key=value", { traceparent, tracestate: "congo" }],
        ["an upper-case key", { traceparent, tracestate: "Congo=1" }],
        ["a value with =", { traceparent, tracestate: "congo=a=b" }],
        ["a control character", { traceparent, tracestate: "congo=a\r\nx-injected: 1" }],
        ["a key twice", { traceparent, tracestate: "congo=1,rojo=2,congo=3" }],
        [
          "33 members (§3.3.1.1: 32 at most)",
          { traceparent, tracestate: Array.from({ length: 33 }, (_, i) => member(i)).join(",") },
        ],
        ["513 characters (§3.3.1.5)", { traceparent, tracestate: `a=${"x".repeat(255)},b=${"y".repeat(253)}` }],
      ];
      const bad = createEvent({ type: "q.created", data: {}, now: T0 });
      for (const [why, options] of refused) {
        await expect(f.queue.publish(bad, { now: T0, ...options }), why).rejects.toThrow(TypeError);
      }
      expect(await f.queue.list(b.id, { eventId: bad.id })).toEqual([]);
      // 32 members and 512 characters are kept whole.
      const full = Array.from({ length: 32 }, (_, i) => member(i)).join(",");
      const long = `a=${"x".repeat(255)},b=${"y".repeat(252)}`;
      expect(long).toHaveLength(512);
      const atLimits = createEvent({ type: "q.created", data: { n: 6 }, now: T0 });
      const wide = createEvent({ type: "q.created", data: { n: 7 }, now: T0 });
      const [fullId] = (await f.queue.publish(atLimits, { now: T0, traceparent, tracestate: full })).deliveryIds as [
        string,
      ];
      const [longId] = (await f.queue.publish(wide, { now: T0, traceparent, tracestate: long })).deliveryIds as [
        string,
      ];
      expect((await f.queue.get(fullId))?.tracestate).toBe(full);
      expect((await f.queue.get(longId))?.tracestate).toBe(long);
      // Leave the queue empty for the next case.
      const claimed = await f.queue.claim({ limit: 20, now: T0, leaseMs: 1_000 });
      expect(claimed.filter((c) => c.eventId === event.id).map((c) => c.tracestate)).toEqual([kept, kept]);
      for (const c of claimed) {
        await f.queue.complete(
          c,
          transition(c.state, { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } }, T0).state,
        );
      }
    });

    it("claims due deliveries oldest first, each once per lease; an expired lease is reclaimed", async () => {
      const early = createEvent({ type: "q.updated", data: {}, now: T0 });
      const late = createEvent({ type: "q.updated", data: {}, now: T0 });
      await f.queue.publish(late, { now: T0, delayMs: 50 });
      await f.queue.publish(early, { now: T0, delayMs: 10 });
      expect(await f.queue.nextDueAt()).toBe(T0 + 10);
      expect(await f.queue.claim({ limit: 10, now: T0 + 5, leaseMs: 1_000 })).toEqual([]);
      const first = await f.queue.claim({ limit: 10, now: T0 + 100, leaseMs: 1_000 });
      expect(first.map((c) => c.eventId)).toEqual([early.id, late.id]);
      expect(await f.queue.claim({ limit: 10, now: T0 + 200, leaseMs: 1_000 })).toEqual([]);
      // The worker died: after the lease the deliveries are due again, with a new lease.
      const again = await f.queue.claim({ limit: 10, now: T0 + 1_200, leaseMs: 1_000 });
      expect(again.map((c) => c.id).sort()).toEqual(first.map((c) => c.id).sort());
      const stale = first[0]!;
      const fresh = again.find((c) => c.id === stale.id)!;
      const delivered = transition(
        stale.state,
        { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } },
        T0 + 1_300,
      ).state;
      expect(await f.queue.complete(stale, delivered)).toBe(false);
      expect(await f.queue.complete(fresh, delivered)).toBe(true);
      expect((await f.queue.get(stale.id))?.state.status).toBe("delivered");
      const other = again.find((c) => c.id !== stale.id)!;
      await f.queue.complete(other, delivered);
      expect(await f.queue.nextDueAt()).toBeUndefined();
    });

    it("counts a leased delivery as due at its lease end, renewals included, and never before (issue 15)", async () => {
      const now = T0 + 120_000;
      const due = createEvent({ type: "q.created", data: { lease: "due" }, now });
      const later = createEvent({ type: "q.created", data: { lease: "later" }, now });
      await f.queue.publish(due, { now });
      await f.queue.publish(later, { now, delayMs: 5_000 });
      expect(await f.queue.nextDueAt()).toBe(now);
      const claimed = await f.queue.claim({ limit: 10, now, leaseMs: 1_000 });
      expect(claimed.map((c) => c.eventId)).toEqual([due.id, due.id]);
      // In flight: the earliest due is a lease end, not the claimed deliveries' own due time.
      expect(await f.queue.nextDueAt()).toBe(now + 1_000);
      expect((await f.queue.get(claimed[0]!.id))?.state.nextAttemptAt).toBe(now);
      const [kept, dropped] = claimed as [ClaimedDelivery, ClaimedDelivery];
      expect(await f.queue.renew([kept], now + 500, 9_500)).toEqual([kept.id]);
      expect(await f.queue.nextDueAt()).toBe(now + 1_000);
      expect(await f.queue.complete(dropped, transition(dropped.state, delivered200, now).state)).toBe(true);
      expect(await f.queue.nextDueAt()).toBe(now + 5_000);
      expect(await f.queue.claim({ limit: 10, now: now + 1_500, leaseMs: 1_000 })).toEqual([]);
      expect(await f.queue.complete(kept, transition(kept.state, delivered200, now).state)).toBe(true);
      const rest = await f.queue.claim({ limit: 10, now: now + 5_000, leaseMs: 1_000 });
      expect(rest.map((c) => c.eventId)).toEqual([later.id, later.id]);
      for (const c of rest) await f.queue.complete(c, transition(c.state, delivered200, now + 5_000).state);
      expect(await f.queue.nextDueAt()).toBeUndefined();
    });

    it("never makes a delivery due before its due time when renewed from a clock behind the claim's (regression: the memory queue claimed it early)", async () => {
      const e = endpointFixture({ enabledEvents: ["skew.*"] });
      await f.endpoints.create(e);
      const now = T0 + 180_000;
      const event = createEvent({ type: "skew.renewed", data: {}, now });
      await f.queue.publish(event, { now });
      const [claim] = (await f.queue.claim({ limit: 10, now, leaseMs: 60_000 })).filter((c) => c.eventId === event.id);
      // Another worker's clock, 45 s behind, renews for 1 s: the lease ends before the delivery was even due.
      expect(await f.queue.renew([claim as ClaimedDelivery], now - 45_000, 1_000)).toEqual([claim?.id]);
      expect(await f.queue.nextDueAt()).toBe(now);
      const early = await f.queue.claim({ limit: 10, now: now - 10_000, leaseMs: 1_000 });
      expect(early.filter((c) => c.eventId === event.id)).toEqual([]);
      // Due again at its due time, the lease having run out: nothing is lost.
      const again = (await f.queue.claim({ limit: 10, now, leaseMs: 1_000 })).filter((c) => c.eventId === event.id);
      expect(again.map((c) => c.id)).toEqual([claim?.id]);
      for (const c of again) await f.queue.complete(c, transition(c.state, delivered200, now).state);
      await f.endpoints.delete(e.id);
    });

    it("completes claims stored at once each by its own lease, every attempt logged (group commit, issue 15)", async () => {
      const c = endpointFixture({ enabledEvents: ["g.*"] });
      await f.endpoints.create(c);
      for (let i = 0; i < 30; i++)
        await f.queue.publish(createEvent({ type: "g.done", data: { i }, now: T0 }), { now: T0 });
      const first = await f.queue.claim({ limit: 30, now: T0, leaseMs: 1_000 });
      expect(first).toHaveLength(30);
      // Ten leases run out and are taken again: their first holders must be refused, all in the same burst.
      const retaken = await f.queue.claim({ limit: 10, now: T0 + 1_500, leaseMs: 1_000 });
      const stale = new Set(retaken.map((r) => r.id));
      const ok = { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } } as const;
      const line = (claim: (typeof first)[number], n: number): AttemptInput => ({
        deliveryId: claim.id,
        endpointId: c.id,
        eventId: claim.eventId,
        attempt: n,
        startedAt: T0 + 1_600,
        durationMs: 1,
        status: 200,
        errorKind: null,
        response: `r${n}`,
      });
      const answers = await Promise.all([
        ...first.map((claim, i) =>
          f.queue.complete(claim, transition(claim.state, ok, T0 + 1_600).state, line(claim, i + 1)),
        ),
        ...retaken.map((claim) => f.queue.complete(claim, transition(claim.state, ok, T0 + 1_600).state)),
      ]);
      expect(answers.slice(0, 30)).toEqual(first.map((claim) => !stale.has(claim.id)));
      expect(answers.slice(30)).toEqual(retaken.map(() => true));
      for (const claim of first) expect((await f.queue.get(claim.id))?.state.status).toBe("delivered");
      const logged = await f.queue.attempts({ endpointId: c.id, limit: 100 });
      expect(logged).toHaveLength(30);
      // Stored concurrently: every line once, in no promised order.
      expect(logged.map((l) => l.response).sort()).toEqual(first.map((_, i) => `r${i + 1}`).sort());
    });

    it("completes a lease once when its two outcomes go out alone, the first stored, whatever order they reach the database in (regression: on a PostgreSQL server the second could win)", async () => {
      const c = endpointFixture({ enabledEvents: ["twice.*"] });
      await f.endpoints.create(c);
      const failure = { type: "attempt", result: { kind: "response", status: 500, durationMs: 1 } } as const;
      // Nothing else in flight: the PostgreSQL queue sends the first as a batch of its own and the second as another,
      // on another connection, which raced it. A few rounds, as the race went either way.
      for (let round = 0; round < 12; round++) {
        const now = T0 + round;
        const event = createEvent({ type: "twice.sent", data: { round }, now });
        await f.queue.publish(event, { now, endpointId: c.id });
        const [claim] = (await f.queue.claim({ limit: 10, now, leaseMs: 1_000 })).filter((x) => x.eventId === event.id);
        const delivered = transition((claim as ClaimedDelivery).state, delivered200, now).state;
        const failed = transition((claim as ClaimedDelivery).state, failure, now).state;
        const answers = await Promise.all([
          f.queue.complete(claim as ClaimedDelivery, delivered),
          f.queue.complete(claim as ClaimedDelivery, failed),
        ]);
        expect(answers).toEqual([true, false]);
        expect((await f.queue.get((claim as ClaimedDelivery).id))?.state).toEqual(delivered);
      }
      await f.endpoints.delete(c.id);
    });

    it("completes a lease once: of two outcomes stored at once for one claim the first is stored, the second refused, both logged (regression: PostgreSQL answered true to both and kept either)", async () => {
      const c = endpointFixture({ enabledEvents: ["dupe.*"] });
      await f.endpoints.create(c);
      const event = createEvent({ type: "dupe.sent", data: {}, now: T0 });
      const [id] = (await f.queue.publish(event, { now: T0, endpointId: c.id })).deliveryIds as [string];
      for (let i = 0; i < 2; i++) {
        await f.queue.publish(createEvent({ type: "dupe.sent", data: {}, now: T0 }), {
          now: T0 + 1,
          endpointId: c.id,
        });
      }
      const [claim, ...others] = await f.queue.claim({ limit: 3, now: T0 + 1, leaseMs: 1_000 });
      expect(claim?.id).toBe(id);
      expect(others).toHaveLength(2);
      const failure = { type: "attempt", result: { kind: "response", status: 500, durationMs: 1 } } as const;
      const line = (n: number, status: number): AttemptInput => ({
        deliveryId: id,
        endpointId: c.id,
        eventId: event.id,
        attempt: n,
        startedAt: T0 + n,
        durationMs: 1,
        status,
        errorKind: status === 200 ? null : "http_status",
        response: null,
      });
      const delivered = transition(claim!.state, delivered200, T0 + 2).state;
      const failed = transition(claim!.state, failure, T0 + 3).state;
      // Other outcomes first, so that a queue writing outcomes together (PostgreSQL: two batches in flight) takes
      // these two in one batch.
      const answers = await Promise.all([
        ...others.map((o) => f.queue.complete(o, transition(o.state, delivered200, T0 + 2).state)),
        f.queue.complete(claim!, delivered, line(1, 200)),
        f.queue.complete(claim!, failed, line(2, 500)),
      ]);
      expect(answers).toEqual([true, true, true, false]);
      expect((await f.queue.get(id))?.state).toEqual(delivered);
      expect((await f.queue.attempts({ endpointId: c.id })).map((l) => l.status).sort()).toEqual([200, 500]);
      await f.endpoints.delete(c.id);
    });

    it("stores an attempt whose response holds U+0000 (a binary body), as U+FFFD, in every queue alike (regression: PostgreSQL refused the outcome and the delivery went out again at every lease end)", async () => {
      const c = endpointFixture({ enabledEvents: ["nul.*"] });
      await f.endpoints.create(c);
      const event = createEvent({ type: "nul.sent", data: {}, now: T0 });
      const [id] = (await f.queue.publish(event, { now: T0, endpointId: c.id })).deliveryIds as [string];
      const [claim] = await f.queue.claim({ limit: 1, now: T0, leaseMs: 1_000 });
      expect(claim?.id).toBe(id);
      const line: AttemptInput = {
        deliveryId: id,
        endpointId: c.id,
        eventId: event.id,
        attempt: 1,
        startedAt: T0 + 1,
        durationMs: 1,
        status: 200,
        errorKind: null,
        response: "\u0089PNG\u0000\u0001",
      };
      expect(await f.queue.complete(claim!, transition(claim!.state, delivered200, T0 + 2).state, line)).toBe(true);
      expect((await f.queue.get(id))?.state.status).toBe("delivered");
      const [logged] = await f.queue.attempts({ endpointId: c.id });
      expect(logged?.response).toBe("\u0089PNG\uFFFD\u0001");
    });

    it("a failed attempt is stored with its log line and becomes due at the scheduled time", async () => {
      const event = createEvent({ type: "q.updated", data: {}, now: T0 });
      const [id] = (await f.queue.publish(event, { now: T0 })).deliveryIds;
      const [claim] = await f.queue.claim({ limit: 1, now: T0, leaseMs: 1_000 });
      expect(claim?.id).toBe(id);
      const failed = transition(
        claim!.state,
        { type: "attempt", result: { kind: "response", status: 503, durationMs: 7 } },
        T0 + 10,
        {
          ...(await import("../../../src/webhooks/delivery/state-machine")).defaultDeliveryConfig,
          random: () => 0.5,
        },
      ).state;
      const line: AttemptInput = {
        deliveryId: id!,
        endpointId: a.id,
        eventId: event.id,
        attempt: 1,
        startedAt: T0 + 3,
        durationMs: 7,
        status: 503,
        errorKind: "http_status",
        response: "busy",
      };
      expect(await f.queue.complete(claim!, failed, line)).toBe(true);
      expect(await f.queue.nextDueAt()).toBe(T0 + 10 + 5_000);
      expect(await f.queue.attempts({ endpointId: a.id })).toEqual([{ ...line, id: expect.any(String) }]);
      expect(await f.queue.attempts({ endpointId: a.id, deliveryId: "dlv_other" })).toEqual([]);
      expect((await f.queue.list(a.id, { status: ["failed"] })).map((d) => d.id)).toEqual([id]);
      // Park it as exhausted, then a manual retry revives it now.
      const [again] = await f.queue.claim({ limit: 1, now: T0 + 6_000, leaseMs: 1_000 });
      expect(
        await f.queue.update(id!, ["failed"], { ...failed, status: "exhausted", nextAttemptAt: null }, T0 + 6_001),
      ).toBe(false);
      await f.queue.complete(again!, transition(again!.state, { type: "endpoint_disabled" }, T0 + 6_000).state);
      expect(await f.queue.nextDueAt()).toBeUndefined();
      const revived = transition((await f.queue.get(id!))!.state, { type: "manual_retry" }, T0 + 7_000).state;
      expect(await f.queue.update(id!, ["delivered"], revived, T0 + 7_000)).toBe(false);
      expect(await f.queue.update(id!, ["exhausted"], revived, T0 + 7_000)).toBe(true);
      expect(await f.queue.nextDueAt()).toBe(T0 + 7_000);
      const [last] = await f.queue.claim({ limit: 1, now: T0 + 7_000, leaseMs: 1_000 });
      expect(last?.state.attempts).toBe(0);
      await f.queue.complete(
        last!,
        transition(
          last!.state,
          { type: "attempt", result: { kind: "response", status: 204, durationMs: 1 } },
          T0 + 7_001,
        ).state,
      );
    });

    it("lists an endpoint's deliveries newest first, filtered by status and creation time", async () => {
      const e = endpointFixture({ enabledEvents: ["l.created"] });
      await f.endpoints.create(e);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { deliveryIds } = await f.queue.publish(createEvent({ type: "l.created", data: { i } }), {
          now: T0 + i * 1_000,
        });
        ids.push(deliveryIds[0]!);
      }
      expect((await f.queue.list(e.id)).map((d) => d.id)).toEqual([...ids].reverse());
      expect((await f.queue.list(e.id, { since: T0 + 1_000 })).map((d) => d.id)).toEqual([ids[2], ids[1]]);
      expect((await f.queue.list(e.id, { limit: 1 })).map((d) => d.id)).toEqual([ids[2]]);
      expect(await f.queue.list(e.id, { status: ["delivered"] })).toEqual([]);
      const claimed = await f.queue.claim({ limit: 10, now: T0 + 10_000, leaseMs: 1_000 });
      for (const c of claimed)
        await f.queue.complete(
          c,
          transition(
            c.state,
            { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } },
            T0 + 10_000,
          ).state,
        );
    });

    // Regression: the memory queue walked publication order and stopped at the first delivery older than `since`, so
    // with publish's `now` out of order it missed deliveries inside the window, and replay did not retry them.
    it("lists newest first by creation time, not publication order: since, limit and the cursor follow it", async () => {
      const e = endpointFixture({ enabledEvents: ["o.created"] });
      await f.endpoints.create(e);
      const byTime = new Map<number, string>();
      for (const at of [T0 + 5_000, T0 + 1_000, T0 + 3_000, T0 + 4_000, T0 + 2_000]) {
        const { deliveryIds } = await f.queue.publish(createEvent({ type: "o.created", data: { at } }), { now: at });
        byTime.set(at, deliveryIds[0]!);
      }
      const newestFirst = [...byTime.keys()].sort((x, y) => y - x).map((at) => byTime.get(at));
      expect((await f.queue.list(e.id)).map((d) => d.id)).toEqual(newestFirst);
      expect((await f.queue.list(e.id, { since: T0 + 3_000 })).map((d) => d.id)).toEqual(newestFirst.slice(0, 3));
      const paged: (string | undefined)[] = [];
      let after: string | undefined;
      for (let page = await f.queue.list(e.id, { limit: 2 }); page.length > 0; ) {
        paged.push(...page.map((d) => d.id));
        after = page.at(-1)?.id;
        page = await f.queue.list(e.id, { limit: 2, startingAfter: after });
      }
      expect(paged).toEqual(newestFirst);
      expect(
        (await f.queue.list(e.id, { since: T0 + 2_000, startingAfter: byTime.get(T0 + 4_000) })).map((d) => d.id),
      ).toEqual([byTime.get(T0 + 3_000), byTime.get(T0 + 2_000)]);
      await deliverAll(T0 + 10_000);
    });

    // Delivers whatever is due at `now` (nothing stays scheduled for the next case).
    async function deliverAll(now: number): Promise<void> {
      for (const c of await f.queue.claim({ limit: 1_000, now, leaseMs: 1_000 })) {
        await f.queue.complete(c, transition(c.state, delivered200, now).state);
      }
    }

    it("publishing an event id again is a no-op, even after another endpoint subscribed (regression: PostgreSQL fanned it out to the new endpoint)", async () => {
      const first = endpointFixture({ enabledEvents: ["again.created"] });
      await f.endpoints.create(first);
      const event = createEvent({ type: "again.created", data: {}, now: T0 });
      expect((await f.queue.publish(event, { now: T0 })).deliveryIds).toHaveLength(1);
      const later = endpointFixture({ enabledEvents: ["again.*"] });
      await f.endpoints.create(later);
      expect((await f.queue.publish(event, { now: T0 + 1_000 })).deliveryIds).toEqual([]);
      expect(await f.queue.list(later.id)).toEqual([]);
      expect((await f.queue.list(first.id)).map((d) => d.eventId)).toEqual([event.id]);
      // A new event reaches both.
      expect(
        (await f.queue.publish(createEvent({ type: "again.created", data: {} }), { now: T0 })).deliveryIds,
      ).toHaveLength(2);
      await deliverAll(T0 + 1_000);
      for (const e of [first, later]) await f.endpoints.delete(e.id);
    });

    it("refuses a lease under a millisecond, which would end as it starts (regression: memory claimed one delivery 5 times)", async () => {
      const e = endpointFixture({ enabledEvents: ["twice.created"] });
      await f.endpoints.create(e);
      await f.queue.publish(createEvent({ type: "twice.created", data: {} }), { now: T0 });
      // T0 + 1e-6 === T0 in floating point: the lease ends when it starts.
      for (const leaseMs of [1e-6, 0.5]) {
        await expect(f.queue.claim({ limit: 10, now: T0, leaseMs })).rejects.toThrow(TypeError);
      }
      const claimed = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1 });
      expect(claimed).toHaveLength(1);
      await expect(f.queue.renew(claimed, T0, 0.5)).rejects.toThrow(TypeError);
      for (const c of claimed) await f.queue.complete(c, transition(c.state, delivered200, T0).state);
      await f.endpoints.delete(e.id);
    });

    it("pages an endpoint's deliveries with startingAfter, newest first, to the end", async () => {
      const e = endpointFixture({ enabledEvents: ["page.created"] });
      const other = endpointFixture({ enabledEvents: ["page.other"] });
      for (const x of [e, other]) await f.endpoints.create(x);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { deliveryIds } = await f.queue.publish(createEvent({ type: "page.created", data: { i } }), {
          now: T0 + i * 1_000,
        });
        ids.push(deliveryIds[0] as string);
      }
      const [foreign] = (await f.queue.publish(createEvent({ type: "page.other", data: {} }), { now: T0 })).deliveryIds;
      const newestFirst = [...ids].reverse();
      const pages: string[][] = [];
      let after: string | undefined;
      for (let n = 0; n < 5; n++) {
        const page = (await f.queue.list(e.id, { limit: 2, startingAfter: after })).map((d) => d.id);
        pages.push(page);
        if (page.length < 2) break;
        after = page.at(-1);
      }
      expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
      // With the other filters: the page after ids[3] since T0 + 1 s.
      expect((await f.queue.list(e.id, { startingAfter: ids[3], since: T0 + 1_000 })).map((d) => d.id)).toEqual([
        ids[2],
        ids[1],
      ]);
      // A cursor that is not one of this endpoint's deliveries gives an empty page.
      expect(await f.queue.list(e.id, { startingAfter: "dlv_unknown" })).toEqual([]);
      expect(await f.queue.list(e.id, { startingAfter: foreign })).toEqual([]);
      await deliverAll(T0 + 10_000);
      for (const x of [e, other]) await f.endpoints.delete(x.id);
    });

    it("lists by lastErrorKind (parked: exhausted with endpoint_disabled), beside status, since, startingAfter and limit", async () => {
      const e = endpointFixture({ enabledEvents: ["kind.created"] });
      await f.endpoints.create(e);
      // Oldest first: parked, refused, parked, refused, parked, refused, parked, then one parked and queued again
      // (pending, its last error kind kept), a second apart.
      const kinds = ["parked", "refused", "parked", "refused", "parked", "refused", "parked", "retried"] as const;
      const byId = new Map<string, (typeof kinds)[number]>();
      for (const [i, kind] of kinds.entries()) {
        const event = createEvent({ type: "kind.created", data: { i }, now: T0 + i * 1_000 });
        const [id] = (await f.queue.publish(event, { now: T0 + i * 1_000 })).deliveryIds as [string];
        byId.set(id, kind);
      }
      const refused = { type: "attempt", result: { kind: "response", status: 400, durationMs: 1 } } as const;
      const noRetry = { ...defaultDeliveryConfig, retryable: () => false };
      for (const c of await f.queue.claim({ limit: 100, now: T0 + 10_000, leaseMs: 1_000 })) {
        const kind = byId.get(c.id);
        const event: DeliveryEvent =
          kind === "refused" ? refused : kind === undefined ? delivered200 : { type: "endpoint_disabled" };
        await f.queue.complete(c, transition(c.state, event, T0 + 10_000, noRetry).state);
      }
      const [retried] = [...byId].find(([, kind]) => kind === "retried") as [string, string];
      const parked = (await f.queue.get(retried))?.state as DeliveryState;
      expect(parked).toMatchObject({ status: "exhausted", lastErrorKind: "endpoint_disabled" });
      const again = transition(parked, { type: "manual_retry" }, T0 + 20_000).state;
      expect(await f.queue.update(retried, ["exhausted"], again, T0 + 20_000)).toBe(true);
      const newestFirst = (kind: string) =>
        [...byId]
          .filter(([, k]) => k === kind)
          .map(([id]) => id)
          .reverse();
      const ids = (page: readonly { id: string }[]) => page.map((d) => d.id);
      const exhausted = ["exhausted"] as const;
      const parkedIds = newestFirst("parked");
      expect(ids(await f.queue.list(e.id, { status: exhausted, lastErrorKind: "endpoint_disabled" }))).toEqual(
        parkedIds,
      );
      // Without a status: the pending one queued again too, as its last error kind is still endpoint_disabled.
      expect(ids(await f.queue.list(e.id, { lastErrorKind: "endpoint_disabled" }))).toEqual([retried, ...parkedIds]);
      expect(ids(await f.queue.list(e.id, { status: ["pending"], lastErrorKind: "endpoint_disabled" }))).toEqual([
        retried,
      ]);
      expect(ids(await f.queue.list(e.id, { status: exhausted, lastErrorKind: "http_status" }))).toEqual(
        newestFirst("refused"),
      );
      expect(await f.queue.list(e.id, { status: ["delivered"], lastErrorKind: "endpoint_disabled" })).toEqual([]);
      expect(await f.queue.list(e.id, { lastErrorKind: "timeout" })).toEqual([]);
      const since = { status: exhausted, lastErrorKind: "endpoint_disabled", since: T0 + 2_000 } as const;
      expect(ids(await f.queue.list(e.id, since))).toEqual(parkedIds.slice(0, 3));
      expect(ids(await f.queue.list(e.id, { ...since, limit: 1 }))).toEqual(parkedIds.slice(0, 1));
      const paged: string[] = [];
      let after: string | undefined;
      for (let n = 0; n < 5; n++) {
        const page = ids(
          await f.queue.list(e.id, {
            status: exhausted,
            lastErrorKind: "endpoint_disabled",
            limit: 3,
            startingAfter: after,
          }),
        );
        paged.push(...page);
        if (page.length < 3) break;
        after = page.at(-1);
      }
      expect(paged).toEqual(parkedIds);
      // After a cursor of another kind: the parked ones older than it.
      const refusedIds = newestFirst("refused");
      expect(
        ids(
          await f.queue.list(e.id, {
            status: exhausted,
            lastErrorKind: "endpoint_disabled",
            startingAfter: refusedIds[0],
          }),
        ),
      ).toEqual(parkedIds.slice(1));
      await expect(f.queue.list(e.id, { lastErrorKind: "gone" as never })).rejects.toThrow(
        /DeliveryQueue.list: lastErrorKind must be/,
      );
      await deliverAll(T0 + 20_000);
      await f.endpoints.delete(e.id);
    });

    describe("the attempt log, page by page (startingAfter)", () => {
      let e: WebhookEndpoint;
      // The delivery ids, and every line's response ("r1" the oldest) with its id, oldest first.
      let deliveries: [string, string];
      const lines: { id: string; response: string; deliveryId: string }[] = [];
      const responses = (page: readonly { response: string | null }[]) => page.map((line) => line.response);
      const idOf = (response: string) => lines.find((line) => line.response === response)?.id as string;

      beforeAll(async () => {
        e = endpointFixture({ enabledEvents: ["log.created"] });
        await f.endpoints.create(e);
        const published: string[] = [];
        for (let i = 0; i < 2; i++) {
          published.push(
            ...(await f.queue.publish(createEvent({ type: "log.created", data: { i } }), { now: T0 })).deliveryIds,
          );
        }
        deliveries = published as [string, string];
        // Four rounds of two attempts, each claim put back as it was (due again at once): r1 (first delivery), r2
        // (second), r3 (first), … r8 (second).
        let n = 0;
        for (let round = 0; round < 4; round++) {
          const claimed = await f.queue.claim({ limit: 100, now: T0, leaseMs: 1_000 });
          for (const other of claimed) if (other.endpointId !== e.id) await f.queue.complete(other, other.state);
          const claims = claimed.filter((c) => c.endpointId === e.id);
          claims.sort((x, y) => deliveries.indexOf(x.id) - deliveries.indexOf(y.id));
          expect(claims.map((c) => c.id)).toEqual(deliveries);
          for (const claim of claims) {
            n++;
            const line: AttemptInput = {
              deliveryId: claim.id,
              endpointId: e.id,
              eventId: claim.eventId,
              attempt: round + 1,
              startedAt: T0 + n,
              durationMs: 1,
              status: 503,
              errorKind: "http_status",
              response: `r${n}`,
            };
            // An id on the input is not the queue's: the queue gives its own.
            expect(
              await f.queue.complete(claim, claim.state, n === 1 ? ({ ...line, id: "mine" } as AttemptInput) : line),
            ).toBe(true);
          }
        }
        for (const line of (await f.queue.attempts({ endpointId: e.id })).reverse()) {
          lines.push({ id: line.id, response: line.response as string, deliveryId: line.deliveryId });
        }
      });
      afterAll(async () => {
        await deliverAll(T0);
        await f.endpoints.delete(e.id);
      });

      it("gives every line an id of its own", () => {
        expect(responses(lines)).toEqual(["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"]);
        expect(new Set(lines.map((line) => line.id)).size).toBe(8);
        for (const line of lines) expect(typeof line.id === "string" && line.id !== "mine").toBe(true);
      });

      // Pages of `limit` from the start, each after the last line of the one before, until a short page.
      async function walk(query: { deliveryId?: string; limit: number }): Promise<(string | null)[][]> {
        const pages: (string | null)[][] = [];
        let after: string | undefined;
        for (let n = 0; n < 10; n++) {
          const page = await f.queue.attempts({ endpointId: e.id, ...query, startingAfter: after });
          pages.push(responses(page));
          if (page.length < query.limit) break;
          after = page.at(-1)?.id;
        }
        return pages;
      }

      it("pages the endpoint's log to the end, newest first", async () => {
        expect(await walk({ limit: 3 })).toEqual([
          ["r8", "r7", "r6"],
          ["r5", "r4", "r3"],
          ["r2", "r1"],
        ]);
        // A page that ends on the oldest line: the next one is empty.
        expect(await walk({ limit: 4 })).toEqual([["r8", "r7", "r6", "r5"], ["r4", "r3", "r2", "r1"], []]);
      });

      it("pages one delivery's lines to the end, and places a page after any line of the log", async () => {
        expect(await walk({ deliveryId: deliveries[0], limit: 2 })).toEqual([["r7", "r5"], ["r3", "r1"], []]);
        expect(await walk({ deliveryId: deliveries[1], limit: 3 })).toEqual([["r8", "r6", "r4"], ["r2"]]);
        // After a line of the other delivery: this one's older lines.
        const page = await f.queue.attempts({ endpointId: e.id, deliveryId: deliveries[0], startingAfter: idOf("r6") });
        expect(responses(page)).toEqual(["r5", "r3", "r1"]);
        expect(
          await f.queue.attempts({ endpointId: e.id, deliveryId: "dlv_other", startingAfter: idOf("r6") }),
        ).toEqual([]);
      });

      it("refuses a startingAfter that no line could have as its id with an AttemptCursorError, in every queue alike (the API's 400 invalid_cursor)", async () => {
        const malformed = ["", "r1", "att_", "att_x", "att_0", "att_01", "att_1 ", "att_9223372036854775808", 42, null];
        for (const startingAfter of malformed) {
          const query = { endpointId: e.id, startingAfter: startingAfter as string };
          const refused = await f.queue.attempts(query).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(refused, String(startingAfter)).toBeInstanceOf(AttemptCursorError);
          // Still a TypeError, as it was before it had a class of its own.
          expect(refused, String(startingAfter)).toBeInstanceOf(TypeError);
          expect(refused).toMatchObject({ code: "invalid_cursor", startingAfter, message: /startingAfter/ });
        }
        // Well formed but past every line given so far: every line is older.
        const page = await f.queue.attempts({ endpointId: e.id, limit: 2, startingAfter: "att_9223372036854775807" });
        expect(responses(page)).toEqual(["r8", "r7"]);
      });
    });

    it("refuses a state no clock can hold in complete and update alike (regression: PostgreSQL failed 'timestamp out of range', memory kept it)", async () => {
      const e = endpointFixture({ enabledEvents: ["clock.created"] });
      await f.endpoints.create(e);
      const [id] = (await f.queue.publish(createEvent({ type: "clock.created", data: {} }), { now: T0 })).deliveryIds;
      const [claim] = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 });
      expect(claim?.id).toBe(id);
      const failed = { ...claim!.state, status: "failed" as const, attempts: 1, lastAttemptAt: T0 };
      for (const nextAttemptAt of [5.76e20, Number.POSITIVE_INFINITY, Number.NaN, -1e16]) {
        await expect(f.queue.complete(claim!, { ...failed, nextAttemptAt }), String(nextAttemptAt)).rejects.toThrow(
          /DeliveryQueue.complete: nextAttemptAt must be/,
        );
        await expect(
          f.queue.update(id!, ["pending"], { ...failed, nextAttemptAt }, T0 + 5_000),
          String(nextAttemptAt),
        ).rejects.toThrow(/DeliveryQueue.update: nextAttemptAt must be/);
      }
      await expect(f.queue.complete(claim!, { ...failed, attempts: 1.5, nextAttemptAt: T0 })).rejects.toThrow(
        /attempts must be/,
      );
      await expect(f.queue.complete(claim!, { ...failed, status: "lost" as never, nextAttemptAt: T0 })).rejects.toThrow(
        /status must be/,
      );
      // Nothing was stored: the lease still holds, and a sound state completes.
      expect((await f.queue.get(id!))?.state).toEqual(claim!.state);
      expect(await f.queue.complete(claim!, transition(claim!.state, delivered200, T0).state)).toBe(true);
      await f.endpoints.delete(e.id);
    });

    it("refuses an attempt line or state no queue can store in complete, storing nothing, in every queue alike (regression: PostgreSQL failed on its data and the delivery went out again at every lease end, memory kept it; an unknown error kind made the endpoint's log unreadable)", async () => {
      const e = endpointFixture({ enabledEvents: ["line.created"] });
      await f.endpoints.create(e);
      const event = createEvent({ type: "line.created", data: {} });
      const [id] = (await f.queue.publish(event, { now: T0, endpointId: e.id })).deliveryIds as [string];
      const [claim] = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 });
      expect(claim?.id).toBe(id);
      const failure = { type: "attempt", result: { kind: "response", status: 500, durationMs: 1 } } as const;
      const failed = transition(claim!.state, failure, T0 + 2).state;
      const line: AttemptInput = {
        deliveryId: id,
        endpointId: e.id,
        eventId: event.id,
        attempt: 1,
        startedAt: T0 + 1,
        durationMs: 1,
        status: 500,
        errorKind: "http_status",
        response: null,
      };
      const badLines: Partial<Record<keyof AttemptInput, unknown>>[] = [
        { durationMs: Number.NaN },
        { durationMs: Number.POSITIVE_INFINITY },
        { durationMs: 3e9 },
        { status: 3e9 },
        { status: 500.5 },
        { startedAt: Number.NaN },
        { startedAt: 1e17 },
        { attempt: 1.5 },
        { attempt: -1 },
        { errorKind: "bogus" },
        { response: 42 },
      ];
      for (const patch of badLines) {
        await expect(
          f.queue.complete(claim!, failed, { ...line, ...patch } as AttemptInput),
          JSON.stringify(patch),
        ).rejects.toThrow(TypeError);
      }
      for (const patch of [{ lastStatus: 3e9 }, { attempts: 3e9 }]) {
        await expect(f.queue.complete(claim!, { ...failed, ...patch }, line), JSON.stringify(patch)).rejects.toThrow(
          TypeError,
        );
      }
      // Nothing was stored: the lease still holds, no line was logged, and a sound outcome completes.
      expect((await f.queue.get(id))?.state).toEqual(claim!.state);
      expect(await f.queue.attempts({ endpointId: e.id })).toEqual([]);
      // Delivered, so that no later claim of this suite finds it.
      const delivered = transition(claim!.state, delivered200, T0 + 2).state;
      expect(
        await f.queue.complete(claim!, delivered, { ...line, status: 200, errorKind: null, durationMs: 1.6 }),
      ).toBe(true);
      const [logged] = await f.queue.attempts({ endpointId: e.id });
      expect(logged).toMatchObject({ deliveryId: id, durationMs: 2, status: 200, errorKind: null });
      await f.endpoints.delete(e.id);
    });

    it("stores alike the schedule of a retry policy whose delay no clock can hold (regression: 5.76e20 ms re-sent forever on PostgreSQL)", async () => {
      const e = endpointFixture({ enabledEvents: ["absurd.created"] });
      await f.endpoints.create(e);
      const [id] = (await f.queue.publish(createEvent({ type: "absurd.created", data: {} }), { now: T0 })).deliveryIds;
      const failure = { type: "attempt", result: { kind: "response", status: 500, durationMs: 1 } } as const;
      const config = { ...defaultDeliveryConfig, retry: () => 5.76e20 };
      const [claim] = await f.queue.claim({ limit: 10, now: T0, leaseMs: 1_000 });
      expect(claim?.id).toBe(id);
      expect(await f.queue.complete(claim!, transition(claim!.state, failure, T0, config).state)).toBe(true);
      expect((await f.queue.get(id!))?.state).toMatchObject({
        status: "failed",
        nextAttemptAt: T0 + DELIVERY_DEFAULTS.maxRetryDelayMs,
      });
      expect(await f.queue.nextDueAt()).toBe(T0 + DELIVERY_DEFAULTS.maxRetryDelayMs);
      await deliverAll(T0 + DELIVERY_DEFAULTS.maxRetryDelayMs);
      expect(await f.queue.nextDueAt()).toBeUndefined();
      await f.endpoints.delete(e.id);
    });
  });

  describe(`${name}: re-enabling an endpoint`, () => {
    let f: StoreFixture;
    beforeAll(async () => {
      f = await make();
    });
    afterAll(async () => {
      await f.close?.();
    });

    it("retries every delivery parked while it was disabled, past 500 newer exhausted ones (regression: paging stopped at the first page with nothing to retry)", async () => {
      const now = T0 + 10_000;
      const admin = createEndpointAdmin({ endpoints: f.endpoints, queue: f.queue, resolve: false, now: () => now });
      const created = await admin.create({ url: "https://hooks.example.com/in", enabled_events: ["*"] });
      if (!created.ok) throw new Error(created.code);
      const id = created.value.id;
      // An older delivery waiting for its first attempt, then 501 newer ones the consumer refused for good.
      const [parked] = (
        await f.queue.publish(createEvent({ type: "order.created", data: { i: -1 } }), { now: T0, delayMs: 5_000 })
      ).deliveryIds;
      for (let i = 0; i <= 500; i++) {
        await f.queue.publish(createEvent({ type: "order.created", data: { i } }), { now: T0 + 1 + i });
      }
      const refused = { type: "attempt", result: { kind: "response", status: 400, durationMs: 1 } } as const;
      const noRetry = { ...defaultDeliveryConfig, retryable: () => false };
      const claims = await f.queue.claim({ limit: 1_000, now: T0 + 1_000, leaseMs: 60_000 });
      expect(claims).toHaveLength(501);
      await Promise.all(
        claims.map((c) => f.queue.complete(c, transition(c.state, refused, T0 + 1_000, noRetry).state)),
      );
      // Disabled; the worker then finds the old delivery due and parks it.
      expect((await admin.update(id, { status: "disabled" })).ok).toBe(true);
      const [due] = await f.queue.claim({ limit: 10, now: T0 + 6_000, leaseMs: 60_000 });
      expect(due?.id).toBe(parked);
      await f.queue.complete(due!, transition(due!.state, { type: "endpoint_disabled" }, T0 + 6_000).state);
      expect((await admin.update(id, { status: "enabled" })).ok).toBe(true);
      expect((await f.queue.get(parked!))?.state).toMatchObject({ status: "pending", attempts: 0, nextAttemptAt: now });
      // Only the parked one: those the consumer refused stay exhausted.
      expect(await f.queue.list(id, { status: ["pending"], limit: 1_000 })).toHaveLength(1);
      expect(await f.queue.list(id, { status: ["exhausted"], limit: 1_000 })).toHaveLength(501);
    });
  });

  describe(`${name}: retention of ended deliveries (retainTerminalMs, 7 days by default)`, () => {
    const DAY = 86_400_000;

    // Publishes `n` events for `endpoint` at `now` and stores a delivered outcome for each, one at a time.
    async function deliverMany(queue: DeliveryQueue, type: string, n: number, now: number): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        ids.push(...(await queue.publish(createEvent({ type, data: { i }, now }), { now })).deliveryIds);
      }
      const claims = (await queue.claim({ limit: 1_000, now, leaseMs: 60_000 })).filter((c) => ids.includes(c.id));
      expect(claims).toHaveLength(n);
      for (const claim of claims) {
        expect(await queue.complete(claim, transition(claim.state, delivered200, now).state)).toBe(true);
      }
      return ids;
    }

    // Regression: PostgreSQL's purge looked only at the oldest 256 deliveries of the endpoint it had just stored an
    // outcome for: behind 256 older scheduled ones (a backlog, retries far off) it deleted nothing, for good; and an
    // endpoint no outcome was stored for again (disabled, deleted, quiet) kept its ended deliveries for ever.
    it("forgets what ended past the retention behind a backlog of older scheduled deliveries, and of a quiet endpoint; keeps the scheduled ones", async () => {
      let now = T0;
      const f = await make({ now: () => now });
      try {
        const busy = endpointFixture({ enabledEvents: ["ret.*"] });
        const quiet = endpointFixture({ enabledEvents: ["quiet.*"] });
        await f.endpoints.create(busy);
        await f.endpoints.create(quiet);
        const backlog: string[] = [];
        for (let i = 0; i < 300; i++) {
          const event = createEvent({ type: "ret.later", data: { i }, now: T0 });
          backlog.push(...(await f.queue.publish(event, { now: T0, delayMs: 30 * DAY })).deliveryIds);
        }
        now = T0 + 1;
        const quietOld = await deliverMany(f.queue, "quiet.done", 4, now);
        const old = await deliverMany(f.queue, "ret.done", 60, now);
        now = T0 + 8 * DAY;
        // 128 outcomes stored in all (PostgreSQL purges every 64), none of them for the quiet endpoint since.
        const fresh = await deliverMany(f.queue, "ret.done", 64, now);
        for (const id of [...old, ...quietOld]) expect(await f.queue.get(id), id).toBeUndefined();
        for (const id of fresh) expect(await f.queue.get(id), id).toBeDefined();
        const scheduled = await f.queue.list(busy.id, { status: ["pending"], limit: 1_000 });
        expect(scheduled.map((d) => d.id).sort()).toEqual([...backlog].sort());
      } finally {
        await f.close?.();
      }
    });
  });
}
