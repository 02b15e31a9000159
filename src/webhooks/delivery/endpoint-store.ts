import type { WebhookEndpoint } from "./endpoint";

/** Fields of an endpoint that can change after creation (its tenant cannot). */
export type EndpointPatch = Partial<Omit<WebhookEndpoint, "id" | "createdAt" | "tenant" | "allTenants">>;

/** Paging of {@link EndpointStore.list}: oldest first, after the cursor. */
export interface EndpointListOptions {
  limit: number;
  /** Id of the last endpoint of the previous page; one that names no endpoint (deleted) gives an empty page. */
  startingAfter?: string | undefined;
  /** Only this tenant's endpoints; `null`: only those without a tenant. @default every endpoint */
  tenant?: string | null | undefined;
}

/** Options of {@link EndpointStore.create}. */
export interface EndpointCreateOptions {
  /**
   * The most endpoints the new endpoint's tenant may have, itself included: at that many, nothing is stored and
   * `create` answers `false`. Checked and written atomically, so concurrent creations never pass it. Endpoints
   * without a tenant (the operator's) have no limit. @default no limit
   */
  maxPerTenant?: number | undefined;
}

/**
 * Where endpoints live. Implementations: `createMemoryEndpointStore` (rest-webhooks/webhooks/delivery/memory) and
 * `createPostgresEndpointStore` (rest-webhooks/webhooks/delivery/postgres); both pass the same contract suite.
 * A store keeps copies: changing an object after handing it to `create` or `update` changes nothing stored.
 * Every store refuses, with a `TypeError` naming the field, text that PostgreSQL cannot keep as given: U+0000 or a lone
 * surrogate in the url, events, secrets, description, metadata or headers (`create`, `update` and `modify` reject and
 * write nothing).
 */
export interface EndpointStore {
  /** Stores a new endpoint; `false` when its tenant already has `maxPerTenant` endpoints (nothing stored). */
  create(endpoint: WebhookEndpoint, options?: EndpointCreateOptions): Promise<boolean>;
  get(id: string): Promise<WebhookEndpoint | undefined>;
  /**
   * Oldest first by `createdAt`, whatever order they were stored in; those created in the same millisecond by id
   * (PostgreSQL) or in the order they were stored (memory). A `startingAfter` that names no endpoint gives an empty
   * page: the endpoint API tells that apart from the end of the list (400 `invalid_cursor`).
   */
  list(options: EndpointListOptions): Promise<WebhookEndpoint[]>;
  /** Applies the patch (an `undefined` field is left as it is); `undefined` when there is no such endpoint. */
  update(id: string, patch: EndpointPatch): Promise<WebhookEndpoint | undefined>;
  /**
   * Applies the patch `next(endpoint as stored)` returns, atomically: no other write of the endpoint lands between
   * what `next` was given and the write, so two concurrent changes (two rotations, two metadata keys merged) both
   * stay. The patch follows `update`'s rules: an `undefined` field is left as it is, only the fields of
   * {@link EndpointPatch} are written, and an empty patch writes nothing. `next` is pure and may be called more than
   * once (PostgreSQL compares and sets, and calls it again when the endpoint changed in between); when it throws,
   * nothing is written and `modify` rejects with what it threw.
   * @returns the endpoint as stored (as read, after an empty patch), `undefined` when there is no such endpoint.
   * @example await endpoints.modify(id, (current) => ({ metadata: { ...current.metadata, plan: "pro" } }));
   */
  modify(id: string, next: (current: WebhookEndpoint) => EndpointPatch): Promise<WebhookEndpoint | undefined>;
  /** Deletes the endpoint; `false` when there is no such endpoint. */
  delete(id: string): Promise<boolean>;
  /**
   * Deletes the endpoint if `check(endpoint as stored)` returns, atomically: the endpoint deleted is exactly the one
   * `check` was given, so a write landing after the caller's read is seen by `check`, never lost (the endpoint API's
   * DELETE evaluates If-Match here, RFC 9110 §13.1.1). `check` is pure and may be called more than once (PostgreSQL
   * compares and deletes, and calls it again when the endpoint changed in between); it refuses by throwing: then
   * nothing is deleted and `deleteChecked` rejects with what it threw. Its return value is ignored.
   * @returns `true` when deleted, `false` when there is no such endpoint (`check` not called).
   * @example await endpoints.deleteChecked(id, (current) => { if (current.status === "enabled") throw new Error("disable it first"); });
   */
  deleteChecked(id: string, check: (current: WebhookEndpoint) => void): Promise<boolean>;
  /**
   * Enabled endpoints with a pattern matching `eventType`, oldest first: those of `tenant` (`null`: those without a
   * tenant), and the operator's endpoints with `allTenants`. An event published for one tenant never reaches another
   * tenant's endpoints, nor the operator's others.
   */
  subscribed(eventType: string, tenant: string | null): Promise<WebhookEndpoint[]>;
  /**
   * Records an attempt's outcome for the health check and returns the new `failingSince`
   * (`undefined` when there is no such endpoint). A success clears it; a failure sets it if unset.
   */
  recordOutcome(id: string, success: boolean, now: number): Promise<number | null | undefined>;
  /**
   * Calls `listener` with the id of each endpoint this store object wrote: every successful call of `create`,
   * `update`, `modify`, `delete` or `deleteChecked` tells its endpoint's id once, after the write is done (a read
   * started in the listener sees it). Successful means the call found its endpoint (or stored it): an `update` or
   * `modify` tells even when no value changed (an equal value, an empty patch), since a SQL store cannot tell that
   * without reading the row first; one that found no endpoint (`undefined`, `false`), a `create` refused
   * (`maxPerTenant`), and a call that threw tell nothing; nor does `recordOutcome`. The delivery worker drops its
   * cached copy then, so an endpoint deleted or disabled through the store it reads receives nothing more. A store
   * may tell writes made elsewhere too, later and at most once each (the PostgreSQL store's `listen`: every process's
   * commits that change an endpoint row, this object's own among them, so an id may be heard twice); writes it is not
   * told of, the worker sees within `endpointCacheMs`. A listener's throw is ignored. Such a store tells `events`
   * when it stops hearing writes made elsewhere and when it hears them again ({@link EndpointWatchEvents}).
   * Optional: a store without it leaves the worker's cache to its time limit. @returns what stops the calls
   * @example const stop = endpoints.watch?.((id) => cache.delete(id), { resumed: () => cache.clear() });
   */
  watch?(listener: (endpointId: string) => void, events?: EndpointWatchEvents): () => void;
}

/**
 * What a store that hears writes made elsewhere (the PostgreSQL store's `listen`) tells a watch of its hearing. Between
 * `lost` and `resumed` writes made elsewhere are not told, so a cache should drop everything at `resumed`. A throw is
 * ignored, as a listener's is.
 */
export interface EndpointWatchEvents {
  /**
   * It stopped hearing them (its listening connection lost); it connects again on its own. The delivery worker
   * reports it as an `error` event, `WebhookDeliveryError` `endpoint_watch_lost`.
   */
  lost?: ((error: Error) => void) | undefined;
  /** It hears them again, after a `lost`: the delivery worker drops every endpoint it cached. */
  resumed?: (() => void) | undefined;
}
