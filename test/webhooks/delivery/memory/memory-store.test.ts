import { describe, expect, it } from "vitest";
import { createEvent } from "../../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../../src/webhooks/delivery/memory/index";
import {
  defaultDeliveryConfig,
  initialDeliveryState,
  transition,
} from "../../../../src/webhooks/delivery/state-machine";
import { scheduleBackoff } from "../../../../src/webhooks/retry/backoff";
import { endpointFixture, storeContract } from "../store-contract";

storeContract("memory", async (options) => {
  const endpoints = createMemoryEndpointStore();
  return { endpoints, queue: createMemoryDeliveryQueue({ endpoints, now: options?.now }) };
});

describe("memory queue", () => {
  it("parses ids whole: an id with anything after it finds nothing (regression: parseInt read dlv_…_0%00 as dlv_…_0)", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    await endpoints.create(endpointFixture());
    const [id] = (await queue.publish(createEvent({ type: "r.created", data: {} }))).deliveryIds;
    expect(await queue.get(id as string)).toBeDefined();
    for (const suffix of ["\u0000", "x", " ", "0", "%00"]) {
      expect(await queue.get(`${id}${suffix}`)).toBeUndefined();
      expect(await queue.update(`${id}${suffix}`, ["pending"], initialDeliveryState(0))).toBe(false);
    }
    expect(await queue.get((id as string).slice(0, -1))).toBeUndefined();
  });

  it("ranks a delivery whose lease ran out by its lease end among its endpoint's due ones (DeliveryQueue.claim)", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    await endpoints.create(endpointFixture());
    const t0 = 1_700_000_000_000;
    const publish = async (id: string, delayMs: number) =>
      (await queue.publish(createEvent({ id, type: "r.created", data: {} }), { now: t0, delayMs })).deliveryIds[0];
    const crashed = await publish("evt_crashed", 0);
    const later = await publish("evt_later", 1_000);
    expect((await queue.claim({ limit: 1, now: t0, leaseMs: 5_000 })).map((c) => c.id)).toEqual([crashed]);
    // Both due at t0 + 6 s: the one claimed before is due again since its lease end (t0 + 5 s), the other since
    // t0 + 1 s.
    expect((await queue.claim({ limit: 1, now: t0 + 6_000, leaseMs: 5_000 })).map((c) => c.id)).toEqual([later]);
  });

  it("refuses options without an endpoint store, naming it (programmer error)", () => {
    expect(() => createMemoryDeliveryQueue({} as never)).toThrow(/options\.endpoints/);
    expect(() => createMemoryDeliveryQueue(undefined as never)).toThrow(TypeError);
  });

  it("forgets the oldest delivered deliveries past the retention limit", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, retainTerminal: 2 });
    const e = endpointFixture();
    await endpoints.create(e);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(...(await queue.publish(createEvent({ type: "r.created", data: {} }), { now: 0 })).deliveryIds);
    for (const claim of await queue.claim({ limit: 10, now: 0, leaseMs: 100 })) {
      await queue.complete(
        claim,
        transition(claim.state, { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } }, 1).state,
      );
    }
    expect(await queue.get(ids[0]!)).toBeUndefined();
    expect(await queue.get(ids[1]!)).toBeUndefined();
    expect((await queue.get(ids[3]!))?.state.status).toBe("delivered");
    expect((await queue.list(e.id)).map((d) => d.id)).toEqual([ids[3], ids[2]]);
  });

  describe("retention of terminal deliveries (fake clock)", () => {
    const delivered = { kind: "response", status: 200, durationMs: 1 } as const;
    const failed = { kind: "response", status: 500, durationMs: 1 } as const;

    async function setup(options: { retainTerminal?: number; retainTerminalMs?: number } = {}) {
      let now = 0;
      const endpoints = createMemoryEndpointStore();
      const queue = createMemoryDeliveryQueue({ endpoints, now: () => now, ...options });
      const endpoint = endpointFixture();
      await endpoints.create(endpoint);
      const publish = async () =>
        (await queue.publish(createEvent({ type: "r.created", data: {} }), { now })).deliveryIds[0] as string;
      // Claims one delivery and completes it with `result`; a single-attempt schedule exhausts on a failure.
      const attempt = async (id: string, result: typeof delivered | typeof failed) => {
        const claims = await queue.claim({ limit: 100, now, leaseMs: 10 });
        // The others go back as they were, due again at once.
        for (const other of claims) if (other.id !== id) await queue.complete(other, other.state);
        const claim = claims.find((c) => c.id === id);
        if (claim === undefined) throw new Error(`${id} not due`);
        const config = { ...defaultDeliveryConfig, retry: scheduleBackoff([0], 0) };
        await queue.complete(claim, transition(claim.state, { type: "attempt", result }, now, config).state);
      };
      return { queue, endpoint, publish, attempt, at: (ms: number) => (now = ms) };
    }

    it("forgets delivered and exhausted deliveries retainTerminalMs after they ended, oldest first", async () => {
      const { queue, publish, attempt, at } = await setup({ retainTerminalMs: 1_000 });
      const first = await publish();
      const second = await publish();
      const pending = await publish();
      await attempt(first, delivered); // ends at 0
      at(500);
      await attempt(second, failed); // exhausted at 500
      expect((await queue.get(second))?.state.status).toBe("exhausted");
      at(999);
      await publish();
      expect(await queue.get(first)).toBeDefined();
      at(1_000);
      await publish();
      expect(await queue.get(first)).toBeUndefined();
      expect((await queue.get(second))?.state.status).toBe("exhausted");
      at(1_500);
      await publish();
      expect(await queue.get(second)).toBeUndefined();
      // A scheduled delivery is never forgotten, however old.
      at(10_000_000);
      await publish();
      expect((await queue.get(pending))?.state.status).toBe("pending");
    });

    it("a manual retry takes a delivery out of retention; it counts again from its new end", async () => {
      const { queue, publish, attempt, at } = await setup({ retainTerminalMs: 1_000 });
      const id = await publish();
      await attempt(id, failed); // exhausted at 0
      at(900);
      const exhausted = (await queue.get(id))?.state;
      const retried = transition(exhausted!, { type: "manual_retry" }, 900);
      expect(await queue.update(id, ["exhausted"], retried.state, 900)).toBe(true);
      at(1_200);
      await publish();
      expect((await queue.get(id))?.state.status).toBe("pending");
      at(1_300);
      await attempt(id, delivered); // ends again at 1,300
      at(2_299);
      await publish();
      expect((await queue.get(id))?.state.status).toBe("delivered");
      at(2_300);
      await publish();
      expect(await queue.get(id)).toBeUndefined();
    });

    it("keeps at most retainTerminal terminal deliveries, exhausted ones included", async () => {
      const { queue, endpoint, publish, attempt } = await setup({ retainTerminal: 2 });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await publish());
      await attempt(ids[0]!, failed);
      await attempt(ids[1]!, delivered);
      await attempt(ids[2]!, failed);
      expect(await queue.get(ids[0]!)).toBeUndefined();
      expect((await queue.get(ids[1]!))?.state.status).toBe("delivered");
      expect((await queue.get(ids[2]!))?.state.status).toBe("exhausted");
      expect((await queue.get(ids[3]!))?.state.status).toBe("pending");
      expect((await queue.list(endpoint.id)).map((d) => d.id)).toEqual([ids[3], ids[2], ids[1]]);
    });

    it("a long run stays bounded: 5,000 events delivered, only the retained ones kept", async () => {
      const { queue, endpoint, publish, attempt, at } = await setup({ retainTerminal: 100, retainTerminalMs: 60_000 });
      let firstId = "";
      for (let i = 0; i < 5_000; i++) {
        at(i * 1_000);
        const id = await publish();
        firstId ||= id;
        await attempt(id, delivered);
      }
      const kept = await queue.list(endpoint.id, { limit: 1_000 });
      expect(kept.length).toBe(60);
      expect(await queue.get(firstId)).toBeUndefined();
    });

    it("an event whose deliveries were all forgotten can be published again", async () => {
      const { queue, attempt, at } = await setup({ retainTerminalMs: 10 });
      const event = createEvent({ type: "r.created", data: {} });
      const [id] = (await queue.publish(event, { now: 0 })).deliveryIds;
      expect((await queue.publish(event, { now: 0 })).deliveryIds).toEqual([]);
      await attempt(id!, delivered);
      at(10);
      expect((await queue.publish(event, { now: 10 })).deliveryIds).toHaveLength(1);
    });

    // Regression: the retention walks the ended deliveries in the order they ended and stopped at the first not yet
    // expired. After the clock stepped back (NTP correcting it, a VM resumed), one dated before the step stood in front
    // of every delivery ended after it, which all outlived retainTerminalMs by as long as the step (a clock a year
    // ahead: a year), and it itself outlived it by as long.
    describe("a clock that steps back", () => {
      it("keeps no delivery ended after the step past retainTerminalMs", async () => {
        const { queue, publish, attempt, at } = await setup({ retainTerminalMs: 1_000 });
        const ahead = await publish();
        const after = await publish();
        const pending = await publish();
        at(1_000_000_000); // a clock far ahead
        await attempt(ahead, delivered);
        at(0); // set right
        await attempt(after, delivered);
        at(999);
        await publish();
        expect((await queue.get(after))?.state.status).toBe("delivered");
        at(1_000);
        await publish();
        expect(await queue.get(after)).toBeUndefined();
        // It ended before the step: by the clock as it reads now, no later than 0.
        expect(await queue.get(ahead)).toBeUndefined();
        expect((await queue.get(pending))?.state.status).toBe("pending");
      });

      it("keeps no delivery dated ahead past retainTerminalMs after the step, when none ends after it", async () => {
        const { queue, publish, attempt, at } = await setup({ retainTerminalMs: 1_000 });
        const ahead = await publish();
        at(1_000_000_000);
        await attempt(ahead, delivered);
        at(0);
        await publish(); // the queue reads its clock
        at(1_000);
        await publish();
        expect(await queue.get(ahead)).toBeUndefined();
      });

      it("past retainTerminal forgets the delivery that ended first, though it is dated later", async () => {
        const { queue, publish, attempt, at } = await setup({ retainTerminal: 1 });
        const first = await publish();
        const second = await publish();
        at(1_000_000_000);
        await attempt(first, delivered);
        at(0);
        await attempt(second, delivered);
        expect(await queue.get(first)).toBeUndefined();
        expect((await queue.get(second))?.state.status).toBe("delivered");
      });
    });

    it("refuses a negative retention (programmer error)", () => {
      const endpoints = createMemoryEndpointStore();
      expect(() => createMemoryDeliveryQueue({ endpoints, retainTerminal: -1 })).toThrow(TypeError);
      expect(() => createMemoryDeliveryQueue({ endpoints, retainTerminalMs: Number.NaN })).toThrow(TypeError);
    });
  });

  it("pages the attempt log after a line trimmed past logLimit: the lines older than it, none of the newer", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, logLimit: 4 });
    const endpoint = endpointFixture();
    await endpoints.create(endpoint);
    await queue.publish(createEvent({ type: "r.created", data: {} }), { now: 0 });
    let n = 0;
    // One more line: the delivery claimed and put back as it was, due again at once.
    const log = async () => {
      const [claim] = await queue.claim({ limit: 1, now: 0, leaseMs: 10 });
      if (claim === undefined) throw new Error("not due");
      n++;
      const line = { deliveryId: claim.id, endpointId: endpoint.id, eventId: claim.eventId, attempt: n };
      const outcome = {
        startedAt: n,
        durationMs: 1,
        status: 503,
        errorKind: "http_status",
        response: `r${n}`,
      } as const;
      await queue.complete(claim, claim.state, { ...line, ...outcome });
    };
    const responses = async (startingAfter?: string) =>
      (await queue.attempts({ endpointId: endpoint.id, startingAfter })).map((line) => line.response);
    for (let i = 0; i < 4; i++) await log();
    const [, r3, r2] = await queue.attempts({ endpointId: endpoint.id });
    expect(await responses(r3?.id)).toEqual(["r2", "r1"]);
    // Past 1.25 × logLimit the oldest go: r1 and r2.
    await log();
    await log();
    expect(await responses()).toEqual(["r6", "r5", "r4", "r3"]);
    expect(await responses(r3?.id)).toEqual([]);
    // The cursor's own line is gone: still placed by its id, so not the newest lines again.
    expect(await responses(r2?.id)).toEqual([]);
    const [, r5] = await queue.attempts({ endpointId: endpoint.id });
    expect(await responses(r5?.id)).toEqual(["r4", "r3"]);
  });

  it("modify writes nothing for an empty patch: the stored object stays the one read", async () => {
    const endpoints = createMemoryEndpointStore();
    const e = endpointFixture();
    await endpoints.create(e);
    const before = await endpoints.get(e.id);
    expect(await endpoints.modify(e.id, () => ({ description: undefined }))).toBe(before);
    expect(await endpoints.get(e.id)).toBe(before);
    await endpoints.modify(e.id, () => ({ description: "written" }));
    expect(await endpoints.get(e.id)).not.toBe(before);
  });

  it("update without now reads the queue's clock, as PostgreSQL's does: a delivery leased on that clock is not taken (regression: it read Date.now, and a fake clock's lease looked long over)", async () => {
    const endpoints = createMemoryEndpointStore();
    const T = 1_000_000;
    const queue = createMemoryDeliveryQueue({ endpoints, now: () => T });
    await endpoints.create(endpointFixture());
    const [id] = (await queue.publish(createEvent({ type: "u.created", data: {} }), { now: T })).deliveryIds;
    const [claim] = await queue.claim({ limit: 1, now: T, leaseMs: 60_000 });
    expect(claim?.id).toBe(id);
    const retried = transition(claim!.state, { type: "manual_retry" }, T).state;
    expect(await queue.update(id as string, ["pending"], retried)).toBe(false);
    expect(await queue.update(id as string, ["pending"], retried, T + 60_000)).toBe(true);
  });

  it("tells subscribers when something may be due sooner", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    await endpoints.create(endpointFixture());
    let calls = 0;
    const off = queue.subscribe?.(() => calls++);
    await queue.publish(createEvent({ type: "s.created", data: {} }));
    off?.();
    await queue.publish(createEvent({ type: "s.created", data: {} }));
    expect(calls).toBe(1);
  });
});
