import { randomBytes } from "node:crypto";
import type { AttemptRecord } from "../../delivery/attempt";
import { DELIVERY_DEFAULTS } from "../../delivery/defaults";
import type { ClaimedDelivery, DeliveryQueue, DeliveryRecord } from "../../delivery/delivery-queue";
import type { EndpointStore } from "../../delivery/endpoint-store";
import { type DeliveryState, initialDeliveryState, isScheduled } from "../../delivery/state-machine";
import { DeliveryColumns } from "./delivery-columns";
import { DueHeap } from "./due-heap";

/** Options of {@link createMemoryDeliveryQueue}. */
export interface MemoryDeliveryQueueOptions {
  /** Where `publish` finds the subscribed endpoints. */
  endpoints: EndpointStore;
  /**
   * Terminal deliveries (delivered or exhausted) kept for look-ups, the log and manual retries; past this count the
   * oldest to have ended are forgotten first. Scheduled deliveries are never forgotten. @default 100_000
   */
  retainTerminal?: number;
  /** How long a terminal delivery is kept after it ended, in ms. @default 604_800_000 (7 days) */
  retainTerminalMs?: number;
  /** @deprecated the former name of `retainTerminal`, which now counts exhausted deliveries too. */
  retainDelivered?: number;
  /** Attempt log lines kept per endpoint. @default 1_000 */
  logLimit?: number;
  /** The clock of the retention (when a delivery ended, when it is forgotten), epoch ms. @default Date.now */
  now?: () => number;
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
 * parallel typed arrays (about 100 bytes a delivery). Terminal deliveries are kept for `retainTerminalMs` and at
 * most `retainTerminal` of them, so a long-running process does not grow without bound; an event whose deliveries
 * are all forgotten can be published again.
 * @example
 * const endpoints = createMemoryEndpointStore();
 * const queue = createMemoryDeliveryQueue({ endpoints });
 */
export function createMemoryDeliveryQueue(options: MemoryDeliveryQueueOptions): DeliveryQueue {
  const { endpoints } = options;
  const retain = options.retainTerminal ?? options.retainDelivered ?? DELIVERY_DEFAULTS.retainTerminal;
  const retainMs = options.retainTerminalMs ?? DELIVERY_DEFAULTS.retainTerminalMs;
  if (!(retain >= 0) || !(retainMs >= 0)) {
    throw new TypeError("createMemoryDeliveryQueue: retainTerminal and retainTerminalMs must be non-negative numbers");
  }
  const clock = options.now ?? Date.now;
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
  // Terminal deliveries in the order they ended: ref and end time. An entry is stale once its slot left the terminal
  // states (manual retry) or ended again later (a newer entry): the slot's terminalAt tells.
  const endedRefs: number[] = [];
  const endedAt: number[] = [];
  let endedHead = 0;
  let terminalCount = 0;
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

  function forget(slot: number): void {
    terminalCount--;
    cols.terminalAt[slot] = Number.NaN;
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

  // Forgets terminal deliveries beyond the retention, oldest ended first.
  function prune(now: number): void {
    while (endedHead < endedRefs.length) {
      const at = endedAt[endedHead] as number;
      const slot = live(endedRefs[endedHead] as number);
      const current = slot >= 0 && cols.terminalAt[slot] === at;
      if (current && terminalCount <= retain && now - at < retainMs) break;
      endedHead++;
      if (current) forget(slot);
    }
    if (endedHead > 65_536 && endedHead * 2 > endedRefs.length) {
      endedRefs.splice(0, endedHead);
      endedAt.splice(0, endedHead);
      endedHead = 0;
    }
  }

  function settle(slot: number, state: DeliveryState): void {
    const wasTerminal = !Number.isNaN(cols.terminalAt[slot] as number);
    cols.write(slot, state);
    cols.leaseToken[slot] = 0;
    if (isScheduled(state)) {
      heap.set(slot, state.nextAttemptAt ?? 0);
      if (wasTerminal) {
        cols.terminalAt[slot] = Number.NaN;
        terminalCount--;
      }
      return;
    }
    heap.delete(slot);
    if (wasTerminal) return;
    const now = clock();
    cols.terminalAt[slot] = now;
    terminalCount++;
    endedRefs.push(refOf(slot));
    endedAt.push(now);
    prune(now);
  }

  return {
    async publish(event, publishOptions = {}) {
      const now = publishOptions.now ?? Date.now();
      prune(clock());
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
        cols.terminalAt[slot] = Number.NaN;
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
