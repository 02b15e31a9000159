import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DeliveryQueue } from "../../../src/webhooks/delivery/delivery-queue";
import { activeSecrets, type WebhookEndpoint } from "../../../src/webhooks/delivery/endpoint";
import { createEndpointAdmin } from "../../../src/webhooks/delivery/endpoint-admin";
import { createEndpointSchema } from "../../../src/webhooks/delivery/endpoint-schema";
import type { EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { defaultDeliveryConfig, transition } from "../../../src/webhooks/delivery/state-machine";

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
  return { endpoints, queue, admin, create };
}

describe("createEndpointAdmin", () => {
  describe("re-enabling an endpoint whose stored URL the policy now refuses (it would be disabled url_refused again)", () => {
    // Stored under the old policy (no `ports`); the admin's policy is today's.
    async function storedBefore(ports: number[]) {
      const endpoints = createMemoryEndpointStore();
      const queue = createMemoryDeliveryQueue({ endpoints });
      const before = createEndpointAdmin({ endpoints, queue, resolve: false, now: () => T0 });
      const created = await before.create({ url: "https://hooks.example.com:8443/in", enabled_events: ["*"] });
      if (!created.ok) throw new Error(created.code);
      const { deliveryIds } = await queue.publish(createEvent({ type: "order.paid", data: {} }), { now: T0 });
      const [claim] = await queue.claim({ limit: 1, now: T0, leaseMs: 1_000 });
      await queue.complete(claim!, transition(claim!.state, { type: "endpoint_disabled" }, T0).state);
      await endpoints.update(created.value.id, { status: "disabled", disabledReason: "url_refused", disabledAt: T0 });
      const admin = createEndpointAdmin({ endpoints, queue, resolve: false, now: () => T0, urlPolicy: { ports } });
      return { endpoints, queue, admin, id: created.value.id, deliveryId: deliveryIds[0]! };
    }

    it("is refused as registration refuses the URL; nothing is written, the parked deliveries stay parked", async () => {
      const { endpoints, queue, admin, id, deliveryId } = await storedBefore([443]);
      expect(await admin.update(id, { status: "enabled" })).toMatchObject({ ok: false, code: "invalid_url" });
      expect(await endpoints.get(id)).toMatchObject({ status: "disabled", disabledReason: "url_refused" });
      expect((await queue.get(deliveryId))?.state).toMatchObject({
        status: "exhausted",
        lastErrorKind: "endpoint_disabled",
      });
    });

    it("re-enables, retrying the parked deliveries, once the policy allows the URL again or with a new URL", async () => {
      const allowed = await storedBefore([443, 8443]);
      expect(await allowed.admin.update(allowed.id, { status: "enabled" })).toMatchObject({ ok: true });
      expect((await allowed.queue.get(allowed.deliveryId))?.state.status).toBe("pending");
      const moved = await storedBefore([443]);
      const update = { status: "enabled" as const, url: "https://hooks.example.com/in" };
      expect(await moved.admin.update(moved.id, update)).toMatchObject({ ok: true, value: { status: "enabled" } });
      expect((await moved.queue.get(moved.deliveryId))?.state.status).toBe("pending");
    });
  });

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
        await expect(admin.rotateSecret(e.id, { graceMs })).rejects.toThrow(/rotateSecret: graceMs must be/);
        expect((await endpoints.get(e.id))?.secrets).toEqual(e.secrets);
      },
    );

    it("answers endpoint_not_found for no such endpoint", async () => {
      const { admin } = setup();
      expect(await admin.rotateSecret("we_missing")).toEqual({ ok: false, code: "endpoint_not_found" });
    });

    it("rotates to a secret given (kept from another sender): it signs from now, the old one through the grace period; given again, it is listed once", async () => {
      const { endpoints, admin, create } = setup();
      const e = await create();
      const given = `whsec_${Buffer.alloc(24, 1).toString("base64")}`;
      const rotated = await admin.rotateSecret(e.id, { secret: given, graceMs: 1_000 });
      if (!rotated.ok) throw new Error(rotated.code);
      expect(rotated.value.secrets.map((s) => s.secret)).toEqual([e.secrets[0]?.secret, given]);
      expect(activeSecrets(rotated.value, T0 + 1_000)).toEqual([given]);
      const again = await admin.rotateSecret(e.id, { secret: given });
      if (!again.ok) throw new Error(again.code);
      expect(again.value.secrets.filter((s) => s.secret === given)).toEqual([{ secret: given, expiresAt: null }]);
      expect((await endpoints.get(e.id))?.secrets).toEqual(again.value.secrets);
    });

    it.each([
      "whsec_short",
      `whsec_${Buffer.alloc(23).toString("base64")}`,
      `whsec_${Buffer.alloc(65).toString("base64")}`,
      `${Buffer.alloc(32).toString("base64")}`,
      `whsk_${Buffer.alloc(32).toString("base64")}`,
      `whsec_${Buffer.alloc(32).toString("base64")}\n`,
      // Stray bits in the last character: not the canonical text of any bytes.
      `whsec_${Buffer.alloc(32).toString("base64").slice(0, 42)}B=`,
    ])("refuses the secret %j with a TypeError, keeping the old one (create too)", async (secret) => {
      const { endpoints, admin, create } = setup();
      const e = await create();
      await expect(admin.rotateSecret(e.id, { secret })).rejects.toThrow(/rotateSecret: secret must be whsec_/);
      expect((await endpoints.get(e.id))?.secrets).toEqual(e.secrets);
      await expect(admin.create({ url: "https://a.example/h", enabled_events: ["*"], secret })).rejects.toThrow(
        /create: secret must be whsec_/,
      );
    });
  });

  describe("update, atomic in the store", () => {
    // An admin whose resolver runs `during` while it resolves a host: a write that lands between a read of the
    // endpoint and the update's write.
    function resolving(during: (host: string) => Promise<void>, addresses: Record<string, string> = {}) {
      const endpoints = createMemoryEndpointStore();
      const queue = createMemoryDeliveryQueue({ endpoints });
      const looked: string[] = [];
      const admin = createEndpointAdmin({
        endpoints,
        queue,
        now: () => T0,
        resolve: async (host) => {
          looked.push(host);
          await during(host);
          return [{ address: addresses[host] ?? "93.184.216.34", family: 4 }];
        },
      });
      const create = async () => {
        const created = await admin.create({ url: "https://a.example/in", enabled_events: ["*"] });
        if (!created.ok) throw new Error(created.code);
        return created.value;
      };
      return { endpoints, queue, admin, looked, create };
    }

    it("decides re-enabling on the endpoint as stored: a disable that landed after an earlier read is undone, its parked deliveries retried (regression: stayed disabled)", async () => {
      let id = "";
      const { endpoints, queue, admin, create } = resolving(async () => {
        if (id === "") return;
        await admin.disable(id, "manual");
        // A worker finds it disabled and parks the delivery.
        const [claim] = await queue.claim({ limit: 1, now: T0, leaseMs: 1_000 });
        await queue.complete(claim!, transition(claim!.state, { type: "endpoint_disabled" }, T0).state);
      });
      const e = await create();
      id = e.id;
      const { deliveryIds } = await queue.publish(createEvent({ type: "order.paid", data: {} }), { now: T0 });
      const updated = await admin.update(e.id, { url: "https://b.example/in", status: "enabled" });
      expect(updated).toMatchObject({ ok: true, value: { url: "https://b.example/in", status: "enabled" } });
      expect(await endpoints.get(e.id)).toMatchObject({ status: "enabled", disabledReason: null });
      expect((await queue.get(deliveryIds[0]!))?.state).toMatchObject({ status: "pending", attempts: 0 });
    });

    it("checks again, and never writes, a URL the function names only once the endpoint changed", async () => {
      let id = "";
      const { endpoints, admin, looked, create } = resolving(
        async (host) => {
          if (id !== "" && host === "b.example") await endpoints.update(id, { description: "moved" });
        },
        { "evil.example": "10.0.0.8" },
      );
      const e = await create();
      id = e.id;
      const to = (current: WebhookEndpoint) => ({
        url: current.description === "moved" ? "https://evil.example/in" : "https://b.example/in",
      });
      expect(await admin.update(e.id, to)).toMatchObject({ ok: false, code: "unresolvable_host" });
      expect(looked).toEqual(["a.example", "b.example", "evil.example"]);
      expect(await endpoints.get(e.id)).toMatchObject({ url: "https://a.example/in", description: "moved" });
      // Unchanged since: the URL checked is written.
      expect(await admin.update(e.id, () => ({ url: "https://c.example/in" }))).toMatchObject({
        ok: true,
        value: { url: "https://c.example/in" },
      });
      expect(looked.at(-1)).toBe("c.example");
    });

    it("rejects with what the function threw, writing nothing", async () => {
      const { endpoints, admin, create } = setup();
      const e = await create({ team: "a" });
      const thrown = new Error("refused");
      await expect(
        admin.update(e.id, () => {
          throw thrown;
        }),
      ).rejects.toBe(thrown);
      expect(await endpoints.get(e.id)).toEqual(e);
      expect(await admin.update("we_missing", () => ({ description: "x" }))).toEqual({
        ok: false,
        code: "endpoint_not_found",
      });
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

  it("refuses a store without modify at construction (an EndpointStore written before it joined the interface)", () => {
    const { endpoints } = setup();
    const { modify: _, ...old } = endpoints;
    const queue = createMemoryDeliveryQueue({ endpoints });
    expect(() => createEndpointAdmin({ endpoints: old as EndpointStore, queue, resolve: false })).toThrow(/modify/);
  });

  it("refuses a store without deleteChecked at construction, rather than fail at the first conditional delete", () => {
    const { endpoints } = setup();
    const { deleteChecked: _, ...old } = endpoints;
    const queue = createMemoryDeliveryQueue({ endpoints });
    expect(() => createEndpointAdmin({ endpoints: old as EndpointStore, queue, resolve: false })).toThrow(
      /deleteChecked/,
    );
  });

  describe("delete", () => {
    it("with a check, deletes only when it returns: given the endpoint as stored, it refuses by throwing, nothing deleted", async () => {
      const { endpoints, admin, create } = setup();
      const e = await create({ plan: "free" });
      await admin.update(e.id, { metadata: { plan: "pro" } });
      const refused = new Error("changed since read");
      const unchangedSince = (seen: WebhookEndpoint) => (current: WebhookEndpoint) => {
        if (current.metadata["plan"] !== seen.metadata["plan"]) throw refused;
      };
      await expect(admin.delete(e.id, { check: unchangedSince(e) })).rejects.toBe(refused);
      expect(await endpoints.get(e.id)).toBeDefined();
      expect(await admin.delete(e.id, { check: unchangedSince((await endpoints.get(e.id))!) })).toBe(true);
      expect(await endpoints.get(e.id)).toBeUndefined();
      expect(await admin.delete(e.id, { check: () => {} })).toBe(false);
    });

    it("without a check (or with check undefined), deletes whatever is stored", async () => {
      const { endpoints, admin, create } = setup();
      for (const options of [undefined, {}, { check: undefined }]) {
        const e = await create();
        expect(await admin.delete(e.id, options)).toBe(true);
        expect(await endpoints.get(e.id)).toBeUndefined();
      }
      expect(await admin.delete("we_missing")).toBe(false);
    });

    it("refuses a new endpoint the id of a deleted one whose deliveries the queue keeps, a newId that repeats being misuse (regression: another tenant's new endpoint of that id was sent and listed them)", async () => {
      const endpoints = createMemoryEndpointStore();
      const queue = createMemoryDeliveryQueue({ endpoints });
      const ids = ["we_same", "we_same", "we_same", "we_other"];
      const admin = createEndpointAdmin({ endpoints, queue, resolve: false, now: () => T0, newId: () => ids.shift()! });
      const input = { url: "https://hooks.example.com/in", enabled_events: ["*"] };
      const acme = await admin.create(input, { tenant: "acme" });
      expect(acme.ok && acme.value.id).toBe("we_same");
      // Deleted at once, with no delivery kept: its id may come again.
      expect(await admin.delete("we_same")).toBe(true);
      const again = await admin.create(input, { tenant: "acme" });
      expect(again.ok && again.value.id).toBe("we_same");
      await queue.publish(createEvent({ type: "order.created", data: { of: "acme" } }), { now: T0, tenant: "acme" });
      expect(await admin.delete("we_same")).toBe(true);
      await expect(admin.create(input, { tenant: "globex" })).rejects.toThrow(
        /EndpointAdmin.create: newId gave "we_same", an id the queue keeps deliveries or log lines of/,
      );
      expect(await endpoints.get("we_same")).toBeUndefined();
      // The next id is a new one.
      const globex = await admin.create(input, { tenant: "globex" });
      expect(globex.ok && globex.value.id).toBe("we_other");
      expect(await queue.list("we_other")).toEqual([]);
    });

    describe("the reused-id guard reads the queue only for a custom newId (default ids are random and never repeat)", () => {
      // The memory queue, with its reads counted.
      function countingQueue() {
        const endpoints = createMemoryEndpointStore();
        const queue = createMemoryDeliveryQueue({ endpoints });
        const reads = { list: 0, attempts: 0 };
        const counted: DeliveryQueue = {
          ...queue,
          list: (...args) => {
            reads.list++;
            return queue.list(...args);
          },
          attempts: (...args) => {
            reads.attempts++;
            return queue.attempts(...args);
          },
        };
        return { endpoints, queue, counted, reads };
      }
      const input = { url: "https://hooks.example.com/in", enabled_events: ["*"] };

      it("the default newId: create reads no delivery and no log line", async () => {
        const { endpoints, counted, reads } = countingQueue();
        const admin = createEndpointAdmin({ endpoints, queue: counted, resolve: false, now: () => T0 });
        for (const tenant of [undefined, "acme"]) {
          const created = await admin.create(input, { tenant });
          expect(created.ok).toBe(true);
        }
        expect(reads).toEqual({ list: 0, attempts: 0 });
      });

      it("a custom newId: create still refuses an id the queue keeps deliveries of, and reads the queue", async () => {
        const { endpoints, queue, counted, reads } = countingQueue();
        const ids = ["we_same", "we_same", "we_next"];
        const admin = createEndpointAdmin({
          endpoints,
          queue: counted,
          resolve: false,
          now: () => T0,
          newId: () => ids.shift()!,
        });
        expect((await admin.create(input)).ok).toBe(true);
        await queue.publish(createEvent({ type: "order.created", data: {} }), { now: T0 });
        expect(await admin.delete("we_same")).toBe(true);
        await expect(admin.create(input)).rejects.toThrow(/EndpointAdmin.create: newId gave "we_same"/);
        expect(reads.list).toBeGreaterThan(0);
        const next = await admin.create(input);
        expect(next.ok && next.value.id).toBe("we_next");
      });
    });
  });

  // Regression: the memory queue's list stopped at the first delivery older than `since` in publication order, so a
  // delivery created inside the window but published after an older one was never replayed.
  it("replay retries every failed delivery created since, whatever order they were published in", async () => {
    const { queue, admin, create } = setup();
    const e = await create();
    for (const at of [T0, T0 - 3_600_000]) {
      await queue.publish(createEvent({ type: "order.created", data: { at } }), { now: at });
    }
    for (const c of await queue.claim({ limit: 10, now: T0, leaseMs: 60_000 })) {
      const failed = { kind: "response", status: 500, durationMs: 1 } as const;
      const noRetry = { ...defaultDeliveryConfig, retry: () => undefined };
      await queue.complete(c, transition(c.state, { type: "attempt", result: failed }, T0, noRetry).state);
    }
    expect(await admin.replay(e.id, T0 - 60_000)).toEqual({ ok: true, value: { replayed: 1, hasMore: false } });
  });

  // Regression: create and update stored `headers` unchecked, so a caller bypassing the API could store
  // `Webhook-Signature` (sent as a forged second signature) or `Content-Type` beside the delivery's own.
  describe("headers, checked as the API checks them (RFC 9110 §5.1: names ignore case)", () => {
    const url = "https://hooks.example.com/in";

    it.each([["Webhook-Signature"], ["Content-Type"], ["USER-AGENT"], ["bad name"]])(
      "create refuses %s with a TypeError naming it, storing nothing",
      async (name) => {
        const { endpoints, admin } = setup();
        await expect(admin.create({ url, enabled_events: ["*"], headers: { [name]: "v" } })).rejects.toThrow(
          new RegExp(`EndpointAdmin.create: headers/${name}: `),
        );
        expect(await endpoints.list({ limit: 10 })).toEqual([]);
      },
    );

    it("create keeps the names in lower case, and refuses two that differ only in case", async () => {
      const { admin } = setup();
      const created = await admin.create({ url, enabled_events: ["*"], headers: { "X-Gateway-Key": "k_1" } });
      expect(created.ok && created.value.headers).toEqual({ "x-gateway-key": "k_1" });
      await expect(admin.create({ url, enabled_events: ["*"], headers: { "X-A": "1", "x-a": "2" } })).rejects.toThrow(
        TypeError,
      );
    });

    it("update refuses an owned name, given as fields or by a function, and leaves the endpoint as it was", async () => {
      const { endpoints, admin, create } = setup();
      const e = await create();
      await expect(admin.update(e.id, { headers: { "Webhook-Id": "x" } })).rejects.toThrow(/headers\/Webhook-Id: /);
      await expect(admin.update(e.id, () => ({ headers: { "Content-Type": "text/plain" } }))).rejects.toThrow(
        TypeError,
      );
      expect((await endpoints.get(e.id))?.headers).toEqual({});
      const updated = await admin.update(e.id, { headers: { "X-Route": "eu" } });
      expect(updated.ok && updated.value.headers).toEqual({ "x-route": "eu" });
    });

    it("law: the admin accepts exactly the headers the API's schema accepts, and stores what it parses", async () => {
      const name = fc.constantFrom("X-Key", "x-key", "Webhook-Signature", "content-type", "Traceparent", "a b", "X-Ok");
      const value = fc.constantFrom("v", "two words", "", "line\r\nbreak");
      await fc.assert(
        fc.asyncProperty(fc.dictionary(name, value, { maxKeys: 4 }), async (headers) => {
          const { admin } = setup();
          const parsed = createEndpointSchema.safeParse({ url, enabled_events: ["*"], headers });
          const created = admin.create({ url, enabled_events: ["*"], headers });
          if (parsed.success) await expect(created).resolves.toMatchObject({ value: { headers: parsed.data.headers } });
          else await expect(created).rejects.toThrow(parsed.error.issues[0]?.message);
        }),
      );
    });
  });

  // Regression: create and update stored `metadata` and `description` unchecked, so a caller bypassing the API stored
  // a number as the description, a 10,000-key or non-string metadata, or a "constructor" key the API refuses.
  describe("metadata and description, checked as the API checks them", () => {
    const url = "https://hooks.example.com/in";
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));

    it.each([
      ["a description that is no string", { description: 42 }, /EndpointAdmin.create: description: /],
      ["a description over 512 characters", { description: "d".repeat(513) }, /EndpointAdmin.create: description: /],
      ["metadata that is no object", { metadata: "plan=pro" }, /EndpointAdmin.create: metadata: /],
      ["a metadata value that is no string", { metadata: { plan: 1 } }, /EndpointAdmin.create: metadata\/plan: /],
      ["a metadata value over 500 characters", { metadata: { plan: "p".repeat(501) } }, /metadata\/plan: /],
      ["a metadata key over 40 characters", { metadata: { ["k".repeat(41)]: "v" } }, /metadata\/k{41}: /],
      ["a reserved metadata key", { metadata: { constructor: "x" } }, /metadata\/constructor: /],
      ["more than 50 metadata keys", { metadata: many }, /EndpointAdmin.create: metadata: /],
    ])("create refuses %s with a TypeError naming it, storing nothing", async (_name, fields, message) => {
      const { endpoints, admin } = setup();
      const input = { url, enabled_events: ["*"], ...(fields as object) };
      await expect(admin.create(input)).rejects.toThrow(TypeError);
      await expect(admin.create(input)).rejects.toThrow(message);
      expect(await endpoints.list({ limit: 10 })).toEqual([]);
    });

    it("update refuses them, given as fields or by a function, and leaves the endpoint as it was", async () => {
      const { endpoints, admin, create } = setup();
      const e = await create({ plan: "free" });
      await expect(admin.update(e.id, { metadata: { plan: 1 } as unknown as Record<string, string> })).rejects.toThrow(
        /EndpointAdmin.update: metadata\/plan: /,
      );
      await expect(admin.update(e.id, { description: 7 as unknown as string })).rejects.toThrow(
        /EndpointAdmin.update: description: /,
      );
      await expect(admin.update(e.id, () => ({ metadata: many }))).rejects.toThrow(TypeError);
      const stored = await endpoints.get(e.id);
      expect([stored?.metadata, stored?.description]).toEqual([{ plan: "free" }, ""]);
      const updated = await admin.update(e.id, { metadata: { plan: "pro" }, description: "Orders" });
      expect(updated.ok && [updated.value.metadata, updated.value.description]).toEqual([{ plan: "pro" }, "Orders"]);
    });
  });

  // Regression: create and update stored `enabled_events` unchecked, so a JavaScript caller handing the admin a string
  // stored its characters as patterns ("order.created" became ["o", "r", "d", "e", …]), and a pattern the API refuses
  // ("Order Created", "order.*.x") or an empty list stored an endpoint that never receives anything.
  describe("enabled_events, checked as the API checks them", () => {
    const url = "https://hooks.example.com/in";

    it.each([
      ["a string, not a list", "order.created", /enabled_events: /],
      ["an empty list", [], /enabled_events: /],
      ["a pattern the grammar refuses", ["order.created", "Order Created"], /enabled_events\/1: /],
      ["a wildcard inside", ["order.*.x"], /enabled_events\/0: /],
      ["not a string", [42], /enabled_events\/0: /],
      ["more than 256", Array.from({ length: 257 }, (_, i) => `order.e${i}`), /enabled_events: /],
      ["none", undefined, /enabled_events: /],
    ])("create refuses %s with a TypeError naming it, storing nothing", async (_name, enabled, message) => {
      const { endpoints, admin } = setup();
      await expect(admin.create({ url, enabled_events: enabled as string[] })).rejects.toThrow(TypeError);
      await expect(admin.create({ url, enabled_events: enabled as string[] })).rejects.toThrow(message);
      expect(await endpoints.list({ limit: 10 })).toEqual([]);
    });

    it("update refuses them, given as fields or by a function, and leaves the endpoint as it was", async () => {
      const { endpoints, admin, create } = setup();
      const e = await create();
      await expect(admin.update(e.id, { enabled_events: "order.created" as unknown as string[] })).rejects.toThrow(
        /EndpointAdmin.update: enabled_events: /,
      );
      await expect(admin.update(e.id, () => ({ enabled_events: ["order..x"] }))).rejects.toThrow(TypeError);
      expect((await endpoints.get(e.id))?.enabledEvents).toEqual(["*"]);
      const updated = await admin.update(e.id, { enabled_events: ["order.*", "order.*", "invoice.paid"] });
      expect(updated.ok && updated.value.enabledEvents).toEqual(["order.*", "invoice.paid"]);
    });

    it("law: the admin accepts exactly the lists the API's schema accepts, and stores them without repeats", async () => {
      const pattern = fc.constantFrom("*", "order.*", "order.created", "order", "Order.created", "*.x", "order.");
      await fc.assert(
        fc.asyncProperty(fc.array(pattern, { maxLength: 4 }), async (enabled) => {
          const { admin } = setup();
          const parsed = createEndpointSchema.safeParse({ url, enabled_events: enabled });
          const created = admin.create({ url, enabled_events: enabled });
          if (parsed.success) {
            await expect(created).resolves.toMatchObject({ value: { enabledEvents: [...new Set(enabled)] } });
          } else {
            await expect(created).rejects.toThrow(parsed.error.issues[0]?.message);
          }
        }),
      );
    });
  });
});
