import { nonNegativeInteger } from "../../../options/number-option";
import { randomId } from "../../../random/random-id";
import { createMemoryStore } from "../../../ratelimit/memory/memory-store";
import type { RateLimitStore } from "../../../ratelimit/store";
import { DueHeap, type DueItem } from "../../heap/due-heap";
import { type EndedLink, EndedOrder } from "../../heap/ended-order";
import { wholeMs, wholeMsState } from "../../whole-ms";
import type { AttemptInput, AttemptRecord } from "../attempt";
import { attemptCursor } from "../attempt-cursor";
import { attemptId } from "../attempt-id";
import { DELIVERY_DEFAULTS } from "../defaults";
import type { ClaimedDelivery, DeliveryQueue, DeliveryRecord } from "../delivery-queue";
import type { EndpointStore } from "../endpoint-store";
import {
  checkAttempt,
  checkClaimOptions,
  checkLease,
  checkPublishOptions,
  checkState,
  eventPayload,
  listEventId,
  listLastErrorKind,
  listSince,
  listStartingAfter,
  logText,
  maxPayloadBytes,
  publishDueAt,
  publishTracestate,
} from "../queue-arguments";
import {
  DELIVERY_STATUSES,
  type DeliveryState,
  type DeliveryStatus,
  initialDeliveryState,
  isDueBy,
  isScheduled,
  PARKED_ERROR_KIND,
} from "../state-machine";
import { receivesFor } from "../tenant";
import { createMemoryCircuitBoard } from "./memory-circuit-board";
import { sortedPlace } from "./sorted-place";
import { StatusIndex } from "./status-index";

/** Options of {@link createMemoryDeliveryQueue}. */
export interface MemoryDeliveryQueueOptions {
  /** Where `publish` finds the subscribed endpoints (the same store the endpoint API and the worker use). */
  endpoints: EndpointStore;
  /**
   * Terminal deliveries (delivered or exhausted) kept for look-ups, the log and manual retries; past this count the
   * oldest to have ended are forgotten first. Scheduled deliveries are never forgotten. @default 100_000
   */
  retainTerminal?: number;
  /** How long a terminal delivery is kept after it ended, in ms. @default 604_800_000 (7 days) */
  retainTerminalMs?: number;
  /**
   * The largest event `publish` takes, in bytes of its JSON; a larger one is refused (`WebhookDeliveryError`
   * `payload_too_large`) and nothing is queued. A positive integer, or `Infinity`. @default 1_048_576 (1 MiB, the
   * consumer adapters' default body limit)
   */
  maxPayloadBytes?: number;
  /** Attempt log lines kept per endpoint. @default 1_000 */
  logLimit?: number;
  /** The clock of the retention (when a delivery ended, when it is forgotten), epoch ms. @default Date.now */
  now?: () => number;
}

/**
 * One delivery as the queue keeps it: the record's parts, its lease while claimed, its place in its endpoint's
 * heap while scheduled (`due`, `seq`, `heapIndex`: written by the heap) and among the ended ones once terminal
 * (`endedAt`, `older`, `newer`: written by the list).
 */
interface Entry extends DueItem, EndedLink<Entry> {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly endpointId: string;
  readonly payload: string;
  readonly createdAt: number;
  state: DeliveryState;
  leaseToken: string | undefined;
  leaseUntil: number;
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  readonly tenant: string | undefined;
  /** The scope its event id is unique in: {@link eventKey}. */
  readonly eventKey: string;
  /** Written by its endpoint's {@link StatusIndex}. */
  listedIn: number;
}

/** An endpoint's scheduled deliveries, and its place among the endpoints by its earliest due one. */
interface EndpointLine extends DueItem {
  readonly endpointId: string;
  readonly heap: DueHeap<Entry>;
  /** When a claim last served it (a counter, -1 for never), for the turns. */
  servedAt: number;
}

/**
 * A line of the attempt log, with its number in the queue-wide sequence (its id's). The record with its id is built
 * when the log is read, which is rare: storing one costs each attempt one small object.
 */
interface LogLine {
  readonly seq: number;
  readonly attempt: AttemptInput;
}

/**
 * The lists of an endpoint's {@link StatusIndex}: one per status, and the exhausted deliveries parked while it was
 * disabled (also in `exhausted`'s), which re-enabling and `replay` with `status: "parked"` read behind any number of
 * deliveries exhausted otherwise (the PostgreSQL queue's partial index "webhook_deliveries_parked").
 */
type ListKey = DeliveryStatus | "parked";

// DeliveryQueue.publish: an event id is unique within its tenant (the operator's events a scope of their own). A
// tenant is printable ASCII, never "\n", so the tenant before the first "\n" is told apart from the id after it, and
// the operator's key (starting "\n") from every tenant's.
const eventKey = (tenant: string | null, eventId: string): string => `${tenant ?? ""}\n${eventId}`;

// Parked: exhausted because the endpoint was disabled.
const isParked = (state: DeliveryState): boolean =>
  state.status === "exhausted" && state.lastErrorKind === PARKED_ERROR_KIND;

interface EndpointEntry {
  /** Its deliveries, oldest first by creation time, then publication (forgotten ones are removed lazily). */
  deliveries: Entry[];
  /** The same deliveries by status, and the parked ones, for a listing filtered by status or last error kind. */
  statuses: StatusIndex<Entry, ListKey>;
  /** Its attempt log, oldest first: so in `seq` order. */
  log: LogLine[];
}

// The list's order, as DeliveryQueue.list promises and PostgreSQL's (created_at, id): by creation time, which
// publish's `now` sets and need not follow publication; then by publication (`seq`) within a millisecond.
function createdBefore(a: Entry, b: Entry): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.seq < b.seq);
}

// Where `entry` is, or goes, in its endpoint's list: the first place not created before it.
function positionOf(deliveries: readonly Entry[], entry: Entry): number {
  return sortedPlace(deliveries, entry, createdBefore);
}

// Kept in creation order: appended when published in it (the usual case), else inserted at its place.
function insertCreated(deliveries: Entry[], entry: Entry): void {
  const last = deliveries.at(-1);
  if (last === undefined || createdBefore(last, entry)) deliveries.push(entry);
  else deliveries.splice(positionOf(deliveries, entry), 0, entry);
}

// How many lines of the log are older than line `seq` (the log is in `seq` order), whether that line is kept or not.
function linesBefore(log: readonly LogLine[], seq: number): number {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((log[middle] as LogLine).seq < seq) low = middle + 1;
    else high = middle;
  }
  return low;
}

// A copy of the fields the log holds: an `id` (or anything else) on the input is not the queue's.
const logRecord = (id: string, attempt: AttemptInput): AttemptRecord => ({
  id,
  deliveryId: attempt.deliveryId,
  endpointId: attempt.endpointId,
  eventId: attempt.eventId,
  attempt: attempt.attempt,
  startedAt: wholeMs(attempt.startedAt),
  // Whole milliseconds, as PostgreSQL's integer column keeps it.
  durationMs: Math.round(attempt.durationMs),
  status: attempt.status,
  errorKind: attempt.errorKind,
  // As PostgreSQL keeps it.
  response: logText(attempt.response),
});

const toRecord = (entry: Entry): DeliveryRecord => ({
  id: entry.id,
  eventId: entry.eventId,
  eventType: entry.eventType,
  endpointId: entry.endpointId,
  // Only when published for one, as PostgreSQL reads it.
  ...(entry.tenant === undefined ? {} : { tenant: entry.tenant }),
  payload: entry.payload,
  createdAt: entry.createdAt,
  state: entry.state,
  // Only when published with one: records without it keep their shape.
  ...(entry.traceparent === undefined ? {} : { traceparent: entry.traceparent }),
  ...(entry.tracestate === undefined ? {} : { tracestate: entry.tracestate }),
});

/** A claimed delivery: its record with its lease added, one object (a spread into a second one cost a copy). */
function claimOf(entry: Entry, leaseToken: string, leaseUntil: number): ClaimedDelivery {
  const claim = toRecord(entry) as DeliveryRecord & { leaseToken: string; leaseUntil: number; operatorEvent?: true };
  claim.leaseToken = leaseToken;
  claim.leaseUntil = leaseUntil;
  // Every entry records its tenant: none is the operator's event, for the worker's check (delivery-admission.ts).
  if (entry.tenant === undefined) claim.operatorEvent = true;
  return claim;
}

function nonNegative(value: number, name: string): number {
  if (!(value >= 0))
    throw new TypeError(`createMemoryDeliveryQueue: ${name} must be a non-negative number, got ${value}`);
  return value;
}

/**
 * The in-memory {@link DeliveryQueue} (the embedded default; lost on restart). Scheduled deliveries sit in one heap
 * keyed by due time, so a worker needs one wake-up timer, not one per delivery. Terminal deliveries are kept for
 * `retainTerminalMs` and at most `retainTerminal` of them, so a long-running process does not grow without bound; an
 * event whose deliveries are all forgotten can be published again.
 * @example
 * const endpoints = createMemoryEndpointStore();
 * const queue = createMemoryDeliveryQueue({ endpoints });
 */
export function createMemoryDeliveryQueue(options: MemoryDeliveryQueueOptions): DeliveryQueue {
  const endpoints = options?.endpoints;
  if (typeof endpoints?.subscribed !== "function") {
    throw new TypeError(
      "createMemoryDeliveryQueue: options.endpoints must be an EndpointStore (e.g. createMemoryEndpointStore()).",
    );
  }
  const retain = nonNegative(options.retainTerminal ?? DELIVERY_DEFAULTS.retainTerminal, "retainTerminal");
  const retainMs = nonNegative(options.retainTerminalMs ?? DELIVERY_DEFAULTS.retainTerminalMs, "retainTerminalMs");
  const logLimit = nonNegative(options.logLimit ?? 1_000, "logLimit");
  const maxPayload = maxPayloadBytes("createMemoryDeliveryQueue", options.maxPayloadBytes);
  const clock = options.now ?? Date.now;
  const byId = new Map<string, Entry>();
  // How many deliveries of each event (by its eventKey) are still kept: publishing it again is a no-op while any is.
  const eventRefs = new Map<string, number>();
  const byEndpoint = new Map<string, EndpointEntry>();
  // Scheduled deliveries by endpoint, each endpoint's heap keyed by due time; `heads` orders the endpoints by their
  // earliest due delivery, so a claim visits endpoints in turn instead of draining one endpoint's backlog first.
  const dueByEndpoint = new Map<string, EndpointLine>();
  const heads = new DueHeap<EndpointLine>();
  let turns = 0;
  // Terminal deliveries in the order they ended (re-ending moves one to the back).
  const ended = new EndedOrder<Entry>();
  const listeners = new Set<() => void>();
  // The workers of this process on this queue share their circuits.
  const circuits = createMemoryCircuitBoard();
  // …and their endpoints' rate limits: with a store per worker, two workers on one queue sent twice the rate.
  let rateLimits: RateLimitStore | undefined;
  let published = 0;
  // The attempt log's sequence, queue-wide (as PostgreSQL's bigserial): the last number given.
  let logged = 0;

  const notify = () => {
    for (const listener of listeners) listener();
  };
  const endpointEntry = (id: string): EndpointEntry => {
    let entry = byEndpoint.get(id);
    if (entry === undefined) {
      entry = { deliveries: [], statuses: new StatusIndex(createdBefore, isCurrent), log: [] };
      byEndpoint.set(id, entry);
    }
    return entry;
  };

  function forget(entry: Entry): void {
    byId.delete(entry.id);
    ended.delete(entry);
    const refs = (eventRefs.get(entry.eventKey) ?? 1) - 1;
    if (refs === 0) eventRefs.delete(entry.eventKey);
    else eventRefs.set(entry.eventKey, refs);
    const endpoint = byEndpoint.get(entry.endpointId);
    endpoint?.statuses.left(entry.state.status);
    if (isParked(entry.state)) endpoint?.statuses.left("parked");
    // Removed in bulk once the forgotten outnumber the kept, so a forget costs O(1) amortised.
    if (endpoint !== undefined && endpoint.deliveries.length > 2 * byId.size + 1024) {
      endpoint.deliveries = endpoint.deliveries.filter((kept) => byId.get(kept.id) === kept);
    }
  }

  // Forgets terminal deliveries beyond the retention, oldest ended first. A clock that stepped back would leave one
  // dated ahead in front of every delivery that ended after it, all kept past retainMs by as long as the step.
  function prune(now: number): void {
    ended.endedNoLaterThan(now);
    for (let oldest = ended.oldest; oldest !== undefined; oldest = ended.oldest) {
      if (ended.size <= retain && now - oldest.endedAt < retainMs) return;
      forget(oldest);
    }
  }

  // Re-files an endpoint among the heads after its heap changed.
  function refile(line: EndpointLine): void {
    const head = line.heap.peek();
    if (head === undefined) {
      heads.delete(line);
      dueByEndpoint.delete(line.endpointId);
    } else heads.set(line, head.due, head.seq);
  }

  function schedule(entry: Entry, at: number): void {
    let line = dueByEndpoint.get(entry.endpointId);
    if (line === undefined) {
      line = { endpointId: entry.endpointId, heap: new DueHeap<Entry>(), servedAt: -1, due: 0, seq: 0, heapIndex: -1 };
      dueByEndpoint.set(entry.endpointId, line);
    }
    line.heap.set(entry, at, entry.seq);
    refile(line);
  }

  function unschedule(entry: Entry): void {
    const line = dueByEndpoint.get(entry.endpointId);
    if (line === undefined || !line.heap.has(entry)) return;
    line.heap.delete(entry);
    refile(line);
  }

  function settle(entry: Entry, state: DeliveryState): void {
    const from = entry.state;
    // Whole milliseconds, as PostgreSQL's queue stores them (whole-ms.ts): its due and lease answers match.
    state = wholeMsState(state);
    entry.state = state;
    const index = endpointEntry(entry.endpointId).statuses;
    index.moved(entry, from.status, state.status);
    const wasParked = isParked(from);
    if (wasParked !== isParked(state)) {
      if (wasParked) index.left("parked");
      else index.moved(entry, undefined, "parked");
    }
    entry.leaseToken = undefined;
    if (isScheduled(state)) {
      schedule(entry, state.nextAttemptAt ?? 0);
      ended.delete(entry);
      return;
    }
    unschedule(entry);
    const now = wholeMs(clock());
    // Before it goes last: the list stays in order of when its deliveries ended, whatever the clock did.
    ended.endedNoLaterThan(now);
    ended.push(entry, now);
    prune(now);
  }

  const find = (id: string): Entry | undefined => byId.get(id);
  // Whether the status index's `entry` is kept and of `key` now (else it is stale there).
  const isCurrent = (entry: Entry, key: ListKey): boolean =>
    (key === "parked" ? isParked(entry.state) : entry.state.status === key) && byId.get(entry.id) === entry;
  // PublishOptions.endpointId: that endpoint, whatever it subscribes to, if it is enabled and receives the tenant's.
  const alone = async (id: string, tenant: string | null) => {
    const endpoint = await endpoints.get(id);
    return endpoint?.status === "enabled" && receivesFor(endpoint, tenant) ? [endpoint] : [];
  };

  return {
    async publish(event, publishOptions = {}) {
      const now = publishOptions.now ?? Date.now();
      checkPublishOptions(publishOptions);
      const dueAt = publishDueAt(publishOptions, now);
      const payload = eventPayload(event, maxPayload);
      const tracestate = publishTracestate(publishOptions);
      prune(clock());
      const tenant = publishOptions.tenant ?? null;
      const key = eventKey(tenant, event.id);
      if (eventRefs.has(key)) return { deliveryIds: [] };
      const only = publishOptions.endpointId;
      const targets = only === undefined ? await endpoints.subscribed(event.type, tenant) : await alone(only, tenant);
      if (targets.length === 0 || eventRefs.has(key)) return { deliveryIds: [] };
      const state = initialDeliveryState(dueAt);
      eventRefs.set(key, targets.length);
      const deliveryIds: string[] = [];
      for (const target of targets) {
        const entry: Entry = {
          id: randomId("dlv_"),
          eventId: event.id,
          eventType: event.type,
          endpointId: target.id,
          payload,
          createdAt: wholeMs(now),
          state,
          leaseToken: undefined,
          leaseUntil: 0,
          traceparent: publishOptions.traceparent,
          tracestate,
          tenant: tenant ?? undefined,
          eventKey: key,
          due: 0,
          // Publication order: among deliveries due together, the first published goes first.
          seq: published++,
          heapIndex: -1,
          endedAt: 0,
          older: undefined,
          newer: undefined,
          listedIn: 0,
        };
        byId.set(entry.id, entry);
        const kept = endpointEntry(target.id);
        insertCreated(kept.deliveries, entry);
        kept.statuses.moved(entry, undefined, state.status);
        settle(entry, state);
        deliveryIds.push(entry.id);
      }
      notify();
      return { deliveryIds };
    },
    async claim(claimOptions) {
      checkClaimOptions(claimOptions);
      const { limit, now, leaseMs, perEndpoint = limit, endpointLimits } = claimOptions;
      // The endpoints with due work take turns: the one served longest ago first.
      const due: EndpointLine[] = [];
      while ((heads.peekDue() ?? Number.POSITIVE_INFINITY) <= now) {
        const line = heads.peek() as EndpointLine;
        heads.delete(line);
        due.push(line);
      }
      due.sort((x, y) => x.servedAt - y.servedAt);
      const out: ClaimedDelivery[] = [];
      const leaseUntil = wholeMs(now + leaseMs);
      for (const line of due) {
        const { endpointId, heap } = line;
        const cap = endpointLimits?.get(endpointId) ?? perEndpoint;
        for (let n = 0; n < cap && out.length < limit; n++) {
          const next = heap.peek();
          if (next === undefined || (heap.peekDue() as number) > now) break;
          // A flat string from a batch of random bytes: randomUUID() builds its result from pieces and keeps them.
          const leaseToken = randomId("");
          next.leaseToken = leaseToken;
          next.leaseUntil = leaseUntil;
          // The lease end is the new due time: a claim that never completes comes back by itself.
          heap.set(next, leaseUntil, next.seq);
          out.push(claimOf(next, leaseToken, leaseUntil));
          line.servedAt = ++turns;
        }
        refile(line);
      }
      return out;
    },
    async renew(claims, now, leaseMs) {
      checkLease("DeliveryQueue.renew", now, leaseMs);
      const renewed: string[] = [];
      for (const claim of claims) {
        const entry = find(claim.id);
        if (entry === undefined || entry.leaseToken !== claim.leaseToken) continue;
        entry.leaseUntil = wholeMs(now + leaseMs);
        // Due again at the lease end, but never before its own due time: a renewal on a clock behind the claim's
        // (another worker's) can end the lease before then, and PostgreSQL's claim asks for both.
        schedule(entry, Math.max(entry.leaseUntil, entry.state.nextAttemptAt ?? 0));
        renewed.push(entry.id);
      }
      return renewed;
    },
    async complete(claim, state, attempt) {
      checkState("DeliveryQueue.complete", state);
      checkAttempt("DeliveryQueue.complete", attempt);
      const entry = find(claim.id);
      if (attempt !== undefined) {
        const log = endpointEntry(claim.endpointId).log;
        log.push({ seq: ++logged, attempt });
        if (log.length > logLimit * 1.25) log.splice(0, log.length - logLimit);
      }
      if (entry === undefined || entry.leaseToken !== claim.leaseToken) return false;
      settle(entry, state);
      // Handed back due at once (a worker stopping, or without room for its endpoint): news to the other workers,
      // whose timers wait for its lease to end.
      if (attempt === undefined && isDueBy(state, clock())) notify();
      return true;
    },
    // Without `now`, the queue's clock, as PostgreSQL's queue: the leases were taken on it.
    async update(id, from, state, now = clock()) {
      checkState("DeliveryQueue.update", state);
      const entry = find(id);
      if (entry === undefined || !from.includes(entry.state.status)) return false;
      if (entry.leaseToken !== undefined && entry.leaseUntil > now) return false;
      settle(entry, state);
      notify();
      return true;
    },
    async nextDueAt() {
      return heads.peekDue();
    },
    async get(id) {
      const entry = find(id);
      return entry === undefined ? undefined : toRecord(entry);
    },
    async list(endpointId, listOptions = {}) {
      const deliveries = byEndpoint.get(endpointId)?.deliveries ?? [];
      const limit = nonNegativeInteger("DeliveryQueue.list", "limit", listOptions.limit ?? 100);
      // Floored as PostgreSQL's `timestampOf` floors it: `createdAt < since` then agrees for a fractional `since`.
      const rawSince = listSince(listOptions);
      const since = rawSince === undefined ? undefined : wholeMs(rawSince);
      const out: DeliveryRecord[] = [];
      const after = listStartingAfter(listOptions);
      const eventId = listEventId(listOptions);
      const kind = listLastErrorKind(listOptions);
      let cursor: Entry | undefined;
      if (after !== undefined) {
        cursor = find(after);
        if (cursor === undefined || cursor.endpointId !== endpointId) return out;
      }
      const statuses = listOptions.status ?? (kind === undefined ? undefined : DELIVERY_STATUSES);
      if (statuses !== undefined) {
        // By the status index: the work is the page's (and the stale entries it passes), not the endpoint's. The
        // parked ones from their own list, not picked out of every exhausted delivery.
        const index = byEndpoint.get(endpointId)?.statuses;
        if (index === undefined || limit === 0) return out;
        const keys =
          kind === PARKED_ERROR_KIND ? statuses.map((s): ListKey => (s === "exhausted" ? "parked" : s)) : statuses;
        for (const entry of index.newestFirst(keys, cursor)) {
          if (since !== undefined && entry.createdAt < since) break;
          if (eventId !== undefined && entry.eventId !== eventId) continue;
          if (kind !== undefined && entry.state.lastErrorKind !== kind) continue;
          out.push(toRecord(entry));
          if (out.length >= limit) break;
        }
        return out;
      }
      const from = cursor === undefined ? deliveries.length - 1 : positionOf(deliveries, cursor) - 1;
      for (let i = from; i >= 0 && out.length < limit; i--) {
        const entry = deliveries[i] as Entry;
        if (byId.get(entry.id) !== entry) continue;
        // Newest first by creation time: every one further on was created earlier still.
        if (since !== undefined && entry.createdAt < since) break;
        if (eventId !== undefined && entry.eventId !== eventId) continue;
        out.push(toRecord(entry));
      }
      return out;
    },
    async attempts(query) {
      const { endpointId, deliveryId, limit = 100 } = query;
      nonNegativeInteger("DeliveryQueue.attempts", "limit", limit);
      const after = attemptCursor(query);
      const log = byEndpoint.get(endpointId)?.log ?? [];
      const out: AttemptRecord[] = [];
      // Past the largest safe integer Number() rounds, but every line this counter numbered is below it anyway.
      const from = after === undefined ? log.length : linesBefore(log, Number(after));
      for (let i = from - 1; i >= 0 && out.length < limit; i--) {
        const line = log[i] as LogLine;
        if (deliveryId === undefined || line.attempt.deliveryId === deliveryId) {
          out.push(logRecord(attemptId(line.seq), line.attempt));
        }
      }
      return out;
    },
    sharedCircuits: () => circuits,
    sharedRateLimits() {
      rateLimits ??= createMemoryStore();
      return rateLimits;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
