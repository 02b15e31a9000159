import { nonNegativeInteger } from "../../../options/number-option";
import { wholeMs } from "../../whole-ms";
import type { WebhookEndpoint } from "../endpoint";
import type { EndpointPatch, EndpointStore } from "../endpoint-store";
import { checkEndpointText } from "../endpoint-text";
import { EndpointWatchers } from "../endpoint-watchers";
import { subscribesTo } from "../event-type";
import { checkAllTenants, checkTenant, maxPerTenant } from "../tenant";
import { sortedPlace } from "./sorted-place";

/** Event types whose subscribers are kept at once, per tenant (cleared whole when full). */
const MAX_CACHED_TYPES = 1_024;
/** Tenants whose subscribers are kept at once (cleared whole when full). */
const MAX_CACHED_TENANTS = 1_024;

// The fields `update` writes, as the PostgreSQL store's columns: any other key of a patch is ignored there too.
const PATCHABLE: Record<keyof EndpointPatch, true> = {
  url: true,
  enabledEvents: true,
  secrets: true,
  status: true,
  disabledReason: true,
  disabledAt: true,
  description: true,
  metadata: true,
  headers: true,
  rateLimit: true,
  failingSince: true,
};

// A time kept as whole milliseconds; `null` (none) stays as it is.
const wholeOrAbsent = (ms: number | null): number | null => (typeof ms === "number" ? wholeMs(ms) : ms);

// A frozen copy down to the leaves: the caller keeps its objects, and what `get` returns cannot change the store.
function frozen(endpoint: WebhookEndpoint): WebhookEndpoint {
  return Object.freeze({
    ...endpoint,
    // An endpoint built by hand before tenants existed has none.
    tenant: endpoint.tenant ?? null,
    allTenants: endpoint.allTenants === true,
    // Whole milliseconds, as PostgreSQL's store keeps them (whole-ms.ts).
    createdAt: wholeMs(endpoint.createdAt),
    disabledAt: wholeOrAbsent(endpoint.disabledAt),
    failingSince: wholeOrAbsent(endpoint.failingSince),
    enabledEvents: Object.freeze([...endpoint.enabledEvents]),
    secrets: Object.freeze(endpoint.secrets.map((entry) => Object.freeze({ ...entry }))),
    // fromEntries defines its keys: a "__proto__" key stays data, as it does in PostgreSQL's jsonb.
    metadata: Object.freeze(Object.fromEntries(Object.entries(endpoint.metadata))),
    // An endpoint built by hand before endpoint headers existed has none.
    headers: Object.freeze(Object.fromEntries(Object.entries(endpoint.headers ?? {}))),
  });
}

/**
 * An in-memory {@link EndpointStore} (the embedded default; lost on restart).
 * @example const endpoints = createMemoryEndpointStore();
 */
export function createMemoryEndpointStore(): EndpointStore {
  const byId = new Map<string, WebhookEndpoint>();
  const watchers = new EndpointWatchers();
  // When each endpoint was stored (a counter): the order of those created in the same millisecond.
  const storedAt = new Map<string, number>();
  let stored = 0;
  // The order of EndpointStore.list: by creation time, as PostgreSQL's; not the order they were stored in, so an
  // endpoint created with an earlier `createdAt` (imported, or a clock stepped back) goes before the ones after it.
  // Those created in one millisecond keep the order they were stored in (PostgreSQL's: by id).
  const createdBefore = (a: WebhookEndpoint, b: WebhookEndpoint): boolean =>
    a.createdAt < b.createdAt ||
    (a.createdAt === b.createdAt && (storedAt.get(a.id) as number) < (storedAt.get(b.id) as number));
  // Where `endpoint` is, or goes, in a list in that order: the first place not created before it.
  const placeOf = (list: readonly WebhookEndpoint[], endpoint: WebhookEndpoint): number =>
    sortedPlace(list, endpoint, createdBefore);
  // Where an endpoint of `list` is, -1 if not there: at its place, as its creation time and store order never change
  // (createdAt is not patchable) and tell every endpoint from the others.
  const indexIn = (list: readonly WebhookEndpoint[], endpoint: WebhookEndpoint): number => {
    const at = placeOf(list, endpoint);
    return list[at]?.id === endpoint.id ? at : -1;
  };
  // Every endpoint, and each tenant's (`null`: the operator's), in list order: a tenant's publish and list read only
  // its own, and a page starts after its cursor by a binary search.
  const all: WebhookEndpoint[] = [];
  const byTenant = new Map<string | null, WebhookEndpoint[]>();
  // The subscribers of each event type asked about since the last write: finding them scans every endpoint of the
  // tenant (3 ms per publish at 10,000 endpoints), and endpoints change far less often than events are published.
  // Keyed by tenant, then type; a write clears its tenant's, and the operator's (which every tenant's may hold:
  // endpoints with allTenants) clears them all.
  const subscribers = new Map<string | null, Map<string, readonly WebhookEndpoint[]>>();
  const forget = (tenant: string | null) => (tenant === null ? subscribers.clear() : subscribers.delete(tenant));
  const ownList = (tenant: string | null): WebhookEndpoint[] => {
    let own = byTenant.get(tenant);
    if (own === undefined) {
      own = [];
      byTenant.set(tenant, own);
    }
    return own;
  };
  // A new endpoint into its place; a changed one (same id, same creation time) over its old version.
  const put = (endpoint: WebhookEndpoint) => {
    const isNew = !byId.has(endpoint.id);
    byId.set(endpoint.id, endpoint);
    if (isNew) storedAt.set(endpoint.id, stored++);
    for (const list of [all, ownList(endpoint.tenant)]) {
      const at = isNew ? -1 : indexIn(list, endpoint);
      if (at === -1) list.splice(placeOf(list, endpoint), 0, endpoint);
      else list[at] = endpoint;
    }
    forget(endpoint.tenant);
  };
  const apply = (current: WebhookEndpoint, patch: EndpointPatch): WebhookEndpoint => {
    const next: Record<string, unknown> = { ...current };
    let changed = false;
    // As PostgreSQL does: an undefined field is left as it is, and only patchable fields are written.
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined || !Object.hasOwn(PATCHABLE, key)) continue;
      next[key] = value;
      changed = true;
    }
    // Told even when nothing changed (EndpointStore.watch: every write call that found its endpoint), as PostgreSQL
    // must: it cannot tell an equal value from a new one without reading the row first.
    const stored = changed ? frozen(next as unknown as WebhookEndpoint) : current;
    if (changed) put(stored);
    watchers.changed(stored.id);
    return stored;
  };
  // A stored endpoint out of the map, both lists it is in and its tenant's subscribers.
  const remove = (endpoint: WebhookEndpoint) => {
    byId.delete(endpoint.id);
    const own = ownList(endpoint.tenant);
    for (const list of [all, own]) {
      const at = indexIn(list, endpoint);
      if (at !== -1) list.splice(at, 1);
    }
    if (own.length === 0) byTenant.delete(endpoint.tenant);
    storedAt.delete(endpoint.id);
    forget(endpoint.tenant);
    watchers.changed(endpoint.id);
  };
  return {
    async create(endpoint, options) {
      if (byId.has(endpoint.id)) throw new TypeError(`Endpoint ${endpoint.id} already exists.`);
      const tenant = checkTenant("EndpointStore.create", endpoint.tenant ?? undefined);
      // PostgreSQL refuses it too ("timestamp cannot be NaN"); the lists' order needs a number.
      if (!Number.isFinite(endpoint.createdAt)) {
        throw new TypeError(`EndpointStore.create: createdAt must be epoch milliseconds, got ${endpoint.createdAt}.`);
      }
      checkAllTenants(endpoint);
      checkEndpointText("EndpointStore.create", endpoint);
      const max = maxPerTenant("EndpointStore.create", options?.maxPerTenant);
      // No await between the count and the write: concurrent creations never pass the limit.
      if (tenant !== undefined && (byTenant.get(tenant)?.length ?? 0) >= max) return false;
      put(frozen(endpoint));
      watchers.changed(endpoint.id);
      return true;
    },
    async get(id) {
      return byId.get(id);
    },
    async list({ limit, startingAfter, tenant }) {
      nonNegativeInteger("EndpointStore.list", "limit", limit);
      const walked = (tenant === undefined ? all : byTenant.get(tenant)) ?? [];
      let from = 0;
      if (startingAfter !== undefined) {
        // A cursor that names no endpoint of this list (deleted, never one, another tenant's) gives an empty page.
        const cursor = byId.get(startingAfter);
        if (cursor === undefined || (tenant !== undefined && cursor.tenant !== tenant)) return [];
        from = placeOf(walked, cursor) + 1;
      }
      return walked.slice(from, from + limit);
    },
    async update(id, patch) {
      checkEndpointText("EndpointStore.update", patch);
      const current = byId.get(id);
      return current === undefined ? undefined : apply(current, patch);
    },
    async modify(id, next) {
      // No await between the read and the write: nothing else runs in between.
      const current = byId.get(id);
      if (current === undefined) return undefined;
      const patch = next(current);
      checkEndpointText("EndpointStore.modify", patch);
      return apply(current, patch);
    },
    async delete(id) {
      const endpoint = byId.get(id);
      if (endpoint === undefined) return false;
      remove(endpoint);
      return true;
    },
    async deleteChecked(id, check) {
      // No await between the check and the delete: nothing else runs in between.
      const current = byId.get(id);
      if (current === undefined) return false;
      check(current);
      remove(current);
      return true;
    },
    async subscribed(eventType, tenant) {
      let cached = subscribers.get(tenant);
      let found = cached?.get(eventType);
      if (found === undefined) {
        const out: WebhookEndpoint[] = [];
        const receives = (endpoint: WebhookEndpoint) =>
          endpoint.status === "enabled" && subscribesTo(endpoint.enabledEvents, eventType);
        for (const endpoint of byTenant.get(tenant) ?? []) if (receives(endpoint)) out.push(endpoint);
        if (tenant !== null) {
          for (const endpoint of byTenant.get(null) ?? []) {
            if (endpoint.allTenants && receives(endpoint)) out.push(endpoint);
          }
          // Oldest first, as PostgreSQL orders them.
          out.sort((a, b) => (createdBefore(a, b) ? -1 : createdBefore(b, a) ? 1 : 0));
        }
        // Bounded: callers asking about ever new types or tenants must not grow it without end.
        if (cached === undefined) {
          if (subscribers.size >= MAX_CACHED_TENANTS) subscribers.clear();
          cached = new Map();
          subscribers.set(tenant, cached);
        }
        if (cached.size >= MAX_CACHED_TYPES) cached.clear();
        cached.set(eventType, out);
        found = out;
      }
      // A copy: the caller may change its array.
      return found.slice();
    },
    async recordOutcome(id, success, now) {
      const current = byId.get(id);
      if (current === undefined) return undefined;
      if (success ? current.failingSince === null : current.failingSince !== null) return current.failingSince;
      const failingSince = success ? null : wholeMs(now);
      put(Object.freeze({ ...current, failingSince }));
      return failingSince;
    },
    watch: (listener) => watchers.watch(listener),
  };
}
