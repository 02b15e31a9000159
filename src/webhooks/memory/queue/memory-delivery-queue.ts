import { randomBytes } from "node:crypto";
import type { AttemptRecord } from "../../delivery/attempt";
import type { ClaimedDelivery, DeliveryQueue, DeliveryRecord } from "../../delivery/delivery-queue";
import type { EndpointStore } from "../../delivery/endpoint-store";
import { type DeliveryState, initialDeliveryState, isScheduled } from "../../delivery/state-machine";
import { DeliveryColumns } from "./delivery-columns";
import { DueHeap } from "./due-heap";

/** Options of {@link createMemoryDeliveryQueue}. */
export interface MemoryDeliveryQueueOptions {
  /** Where `publish` finds the subscribed endpoints. */
  endpoints: EndpointStore;
  /** Delivered deliveries kept for the log and look-ups; the oldest are forgotten first. @default 100_000 */
  retainDelivered?: number;
  /** Attempt log lines kept per endpoint. @default 1_000 */
  logLimit?: number;
}

interface EndpointEntry {
  readonly id: string;
  /** Deliveries, oldest first, as `generation · 2^31 + slot` (a double array: 8 bytes each). */
  refs: number[];
  live: number;
  log: AttemptRecord[];
}

const SLOT_BITS = 2 ** 31;
const GENERATIONS = 2 ** 20;

/**
 * The in-memory {@link DeliveryQueue} (embedded default; lost on restart). Every scheduled delivery sits in one
 * binary heap keyed by due time, so a worker needs one wake-up timer, not one per delivery; delivery state lives in
 * parallel typed arrays (about 100 bytes a delivery).
 * @example
 * const endpoints = createMemoryEndpointStore();
 * const queue = createMemoryDeliveryQueue({ endpoints });
 */
export function createMemoryDeliveryQueue(options: MemoryDeliveryQueueOptions): DeliveryQueue {
  const { endpoints } = options;
  const retain = options.retainDelivered ?? 100_000;
  const logLimit = options.logLimit ?? 1_000;
  const cols = new DeliveryColumns();
  const heap = new DueHeap();
  const freeSlots: number[] = [];
  let nextSlot = 0;
  // Events: one row per published event, shared by its deliveries.
  const eventIds: (string | undefined)[] = [];
  const eventTypes: (string | undefined)[] = [];
  const payloads: (string | undefined)[] = [];
  const eventCreatedAt: number[] = [];
  const eventRefs: number[] = [];
  const freeEvents: number[] = [];
  const eventByKey = new Map<string, number>();
  // Endpoints, interned.
  const endpointList: EndpointEntry[] = [];
  const endpointByKey = new Map<string, number>();
  const delivered: number[] = [];
  let deliveredHead = 0;
  const listeners = new Set<() => void>();
  const prefix = `dlv_${randomBytes(6).toString("base64url").replace(/[-_]/g, "x")}`;
  let leaseCounter = 0;

  const notify = () => {
    for (const listener of listeners) listener();
  };
  const idOf = (slot: number) => `${prefix}${slot.toString(36)}_${(cols.generation[slot] as number).toString(36)}`;
  const refOf = (slot: number) => (cols.generation[slot] as number) * SLOT_BITS + slot;
  const live = (ref: number) => {
    const slot = ref % SLOT_BITS;
    return slot < nextSlot && cols.status[slot] !== 0 && refOf(slot) === ref ? slot : -1;
  };
  function slotOf(id: string): number {
    // `complete` resolves every claim through its id: slices, no split array.
    const cut = id.indexOf("_", prefix.length);
    if (cut < 0 || !id.startsWith(prefix)) return -1;
    const slot = Number.parseInt(id.slice(prefix.length, cut), 36);
    const generation = Number.parseInt(id.slice(cut + 1), 36);
    if (!Number.isInteger(slot) || slot < 0 || slot >= nextSlot || !Number.isInteger(generation)) return -1;
    return live(generation * SLOT_BITS + slot);
  }
  function endpointOf(id: string): number {
    let index = endpointByKey.get(id);
    if (index === undefined) {
      index = endpointList.length;
      endpointList.push({ id, refs: [], live: 0, log: [] });
      endpointByKey.set(id, index);
    }
    return index;
  }
  function record(slot: number): DeliveryRecord {
    const event = cols.eventSlot[slot] as number;
    return {
      id: idOf(slot),
      eventId: eventIds[event] as string,
      eventType: eventTypes[event] as string,
      endpointId: (endpointList[cols.endpointIndex[slot] as number] as EndpointEntry).id,
      payload: payloads[event] as string,
      createdAt: eventCreatedAt[event] as number,
      state: cols.read(slot),
    };
  }

  function forget(ref: number): void {
    const slot = live(ref);
    if (slot < 0 || cols.status[slot] !== 3) return;
    cols.status[slot] = 0;
    cols.generation[slot] = ((cols.generation[slot] as number) + 1) % GENERATIONS;
    freeSlots.push(slot);
    const event = cols.eventSlot[slot] as number;
    eventRefs[event] = (eventRefs[event] as number) - 1;
    if (eventRefs[event] === 0) {
      eventByKey.delete(eventIds[event] as string);
      eventIds[event] = eventTypes[event] = payloads[event] = undefined;
      freeEvents.push(event);
    }
    const endpoint = endpointList[cols.endpointIndex[slot] as number] as EndpointEntry;
    endpoint.live--;
    if (endpoint.refs.length > 2 * endpoint.live + 1024) endpoint.refs = endpoint.refs.filter((r) => live(r) >= 0);
  }

  function settle(slot: number, state: DeliveryState): void {
    cols.write(slot, state);
    cols.leaseToken[slot] = 0;
    if (isScheduled(state)) heap.set(slot, state.nextAttemptAt ?? 0);
    else heap.delete(slot);
    if (state.status === "delivered") {
      delivered.push(refOf(slot));
      while (delivered.length - deliveredHead > retain) forget(delivered[deliveredHead++] as number);
      if (deliveredHead > 65_536) {
        delivered.splice(0, deliveredHead);
        deliveredHead = 0;
      }
    }
  }

  return {
    async publish(event, publishOptions = {}) {
      const now = publishOptions.now ?? Date.now();
      if (eventByKey.has(event.id)) return { deliveryIds: [] };
      const targets = await endpoints.subscribed(event.type);
      if (targets.length === 0 || eventByKey.has(event.id)) return { deliveryIds: [] };
      const row = freeEvents.length > 0 ? (freeEvents.pop() as number) : eventIds.length;
      eventIds[row] = event.id;
      eventTypes[row] = event.type;
      payloads[row] = JSON.stringify(event);
      eventCreatedAt[row] = now;
      eventRefs[row] = targets.length;
      eventByKey.set(event.id, row);
      const state = initialDeliveryState(now + (publishOptions.delayMs ?? 0));
      const deliveryIds: string[] = [];
      for (const target of targets) {
        const slot = freeSlots.length > 0 ? (freeSlots.pop() as number) : nextSlot++;
        cols.ensure(slot);
        cols.eventSlot[slot] = row;
        const index = endpointOf(target.id);
        cols.endpointIndex[slot] = index;
        cols.leaseToken[slot] = 0;
        settle(slot, state);
        const endpoint = endpointList[index] as EndpointEntry;
        endpoint.refs.push(refOf(slot));
        endpoint.live++;
        deliveryIds.push(idOf(slot));
      }
      notify();
      return { deliveryIds };
    },
    async claim({ limit, now, leaseMs }) {
      const out: ClaimedDelivery[] = [];
      while (out.length < limit) {
        const due = heap.peekDue();
        if (due === undefined || due > now) break;
        const slot = heap.peekSlot() as number;
        leaseCounter = (leaseCounter % 0xfffffffe) + 1;
        const token = leaseCounter;
        cols.leaseToken[slot] = token;
        cols.leaseUntil[slot] = now + leaseMs;
        // The lease end is the new due time: a claim that never completes comes back by itself.
        heap.set(slot, now + leaseMs);
        const claimed = record(slot) as DeliveryRecord & { leaseToken: string; leaseUntil: number };
        claimed.leaseToken = String(token);
        claimed.leaseUntil = now + leaseMs;
        out.push(claimed);
      }
      return out;
    },
    async complete(claim, state, attempt) {
      const slot = slotOf(claim.id);
      if (attempt !== undefined && slot >= 0) {
        const log = (endpointList[cols.endpointIndex[slot] as number] as EndpointEntry).log;
        log.push(attempt);
        if (log.length > logLimit * 1.25) log.splice(0, log.length - logLimit);
      }
      if (slot < 0 || String(cols.leaseToken[slot]) !== claim.leaseToken) return false;
      settle(slot, state);
      return true;
    },
    async update(id, from, state, now = Date.now()) {
      const slot = slotOf(id);
      if (slot < 0 || !from.includes(cols.statusOf(slot) as DeliveryState["status"])) return false;
      if (cols.leaseToken[slot] !== 0 && (cols.leaseUntil[slot] as number) > now) return false;
      settle(slot, state);
      notify();
      return true;
    },
    async nextDueAt() {
      return heap.peekDue();
    },
    async get(id) {
      const slot = slotOf(id);
      return slot < 0 ? undefined : record(slot);
    },
    async list(endpointId, listOptions = {}) {
      const index = endpointByKey.get(endpointId);
      if (index === undefined) return [];
      const refs = (endpointList[index] as EndpointEntry).refs;
      const limit = listOptions.limit ?? 100;
      const out: DeliveryRecord[] = [];
      for (let i = refs.length - 1; i >= 0 && out.length < limit; i--) {
        const slot = live(refs[i] as number);
        if (slot < 0) continue;
        const createdAt = eventCreatedAt[cols.eventSlot[slot] as number] as number;
        if (listOptions.since !== undefined && createdAt < listOptions.since) break;
        if (
          listOptions.status !== undefined &&
          !listOptions.status.includes(cols.statusOf(slot) as DeliveryState["status"])
        ) {
          continue;
        }
        out.push(record(slot));
      }
      return out;
    },
    async attempts({ endpointId, deliveryId, limit = 100 }) {
      const index = endpointByKey.get(endpointId);
      const log = index === undefined ? [] : (endpointList[index] as EndpointEntry).log;
      const out: AttemptRecord[] = [];
      for (let i = log.length - 1; i >= 0 && out.length < limit; i--) {
        const line = log[i] as AttemptRecord;
        if (deliveryId === undefined || line.deliveryId === deliveryId) out.push(line);
      }
      return out;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
