import type { WebhookEndpoint } from "./endpoint";

/** Fields of an endpoint that can change after creation. */
export type EndpointPatch = Partial<Omit<WebhookEndpoint, "id" | "createdAt">>;

/** Paging of {@link EndpointStore.list}: oldest first, after the cursor. */
export interface EndpointListOptions {
  limit: number;
  /** Id of the last endpoint of the previous page. */
  startingAfter?: string | undefined;
}

/**
 * Where endpoints live. Implementations: `createMemoryEndpointStore` (rest-webhooks/webhooks/delivery/memory) and
 * `createPostgresEndpointStore` (rest-webhooks/webhooks/delivery/postgres); both pass the same contract suite.
 */
export interface EndpointStore {
  create(endpoint: WebhookEndpoint): Promise<void>;
  get(id: string): Promise<WebhookEndpoint | undefined>;
  /** Oldest first (creation time, then id). */
  list(options: EndpointListOptions): Promise<WebhookEndpoint[]>;
  /** Applies the patch; `undefined` when there is no such endpoint. */
  update(id: string, patch: EndpointPatch): Promise<WebhookEndpoint | undefined>;
  delete(id: string): Promise<boolean>;
  /** Enabled endpoints with a pattern matching `eventType`. */
  subscribed(eventType: string): Promise<WebhookEndpoint[]>;
  /**
   * Records an attempt's outcome for the health check and returns the new `failingSince`
   * (`undefined` when there is no such endpoint). A success clears it; a failure sets it if unset.
   */
  recordOutcome(id: string, success: boolean, now: number): Promise<number | null | undefined>;
}
