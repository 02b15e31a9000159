import type { WebhookEndpoint } from "../endpoint";
import type { EndpointStore } from "../endpoint-store";
import { subscribesTo } from "../event-type";

/**
 * An in-memory {@link EndpointStore} (the embedded default; lost on restart).
 * @example const endpoints = createMemoryEndpointStore();
 */
export function createMemoryEndpointStore(): EndpointStore {
  // Insertion order is creation order, which `list` pages over.
  const byId = new Map<string, WebhookEndpoint>();
  return {
    async create(endpoint) {
      if (byId.has(endpoint.id)) throw new TypeError(`Endpoint ${endpoint.id} already exists.`);
      byId.set(endpoint.id, Object.freeze({ ...endpoint }));
    },
    async get(id) {
      return byId.get(id);
    },
    async list({ limit, startingAfter }) {
      const out: WebhookEndpoint[] = [];
      let started = startingAfter === undefined;
      for (const endpoint of byId.values()) {
        if (!started) {
          started = endpoint.id === startingAfter;
          continue;
        }
        out.push(endpoint);
        if (out.length >= limit) break;
      }
      return out;
    },
    async update(id, patch) {
      const current = byId.get(id);
      if (current === undefined) return undefined;
      const next = Object.freeze({ ...current, ...patch, id, createdAt: current.createdAt });
      byId.set(id, next);
      return next;
    },
    async delete(id) {
      return byId.delete(id);
    },
    async subscribed(eventType) {
      const out: WebhookEndpoint[] = [];
      for (const endpoint of byId.values()) {
        if (endpoint.status === "enabled" && subscribesTo(endpoint.enabledEvents, eventType)) out.push(endpoint);
      }
      return out;
    },
    async recordOutcome(id, success, now) {
      const current = byId.get(id);
      if (current === undefined) return undefined;
      if (success ? current.failingSince === null : current.failingSince !== null) return current.failingSince;
      const failingSince = success ? null : now;
      byId.set(id, Object.freeze({ ...current, failingSince }));
      return failingSince;
    },
  };
}
