import { type CircuitState, closedCircuit } from "../circuit-breaker";
import type { DisabledReason, WebhookEndpoint } from "../endpoint";
import type { EndpointStore } from "../endpoint-store";

/**
 * What one worker knows about one endpoint: its circuit, and the endpoint as last read from the store (its share of
 * the worker's slots is the scheduler's). Internal.
 */
export class EndpointLine {
  readonly id: string;
  circuit: CircuitState = closedCircuit;
  /** The shared circuit (the queue's circuit board) as last read or written: open until then; `undefined`: closed. */
  sharedOpenUntil: number | undefined = undefined;
  sharedAt = Number.NEGATIVE_INFINITY;
  endpoint: WebhookEndpoint | undefined = undefined;
  loadedAt = Number.NEGATIVE_INFINITY;
  /** Outcomes known to disable the endpoint that the store has not recorded yet: while any, nothing goes out. */
  disabling = 0;

  constructor(id: string) {
    this.id = id;
  }
}

/**
 * Whether what was read at `readAt` is still fresh at `at`. A clock stepped back (the wall clock corrected) makes it
 * stale at once: else it stayed fresh until the clock caught up, and an endpoint disabled meanwhile kept receiving.
 */
export function fresh(readAt: number, at: number, cacheMs: number): boolean {
  return at >= readAt && at - readAt < cacheMs;
}

/** The worker's endpoint lines, and the endpoint cache they carry. Internal. */
export class EndpointLines {
  readonly #lines = new Map<string, EndpointLine>();
  readonly #store: EndpointStore;
  readonly #cacheMs: number;

  constructor(store: EndpointStore, cacheMs: number) {
    this.#store = store;
    this.#cacheMs = cacheMs;
  }

  lineOf(id: string): EndpointLine {
    let line = this.#lines.get(id);
    if (line === undefined) {
      line = new EndpointLine(id);
      this.#lines.set(id, line);
    }
    return line;
  }

  /**
   * Follows the store's own writes (EndpointStore.watch), when it tells them: an endpoint created, changed or deleted
   * is read again before its next delivery, whatever endpointCacheMs, and nothing goes out meanwhile (holdBack). So an
   * endpoint deleted or disabled through this store receives nothing more. Costs nothing per delivery; one read of
   * the endpoint after each write. Returns what stops following; what was cached before is forgotten, and again
   * when a store that stopped hearing other processes' writes hears them again (EndpointWatchEvents.resumed): what
   * they wrote in between was not told. `lost` hears of the stop.
   */
  follow(lost?: (error: Error) => void): () => void {
    this.#forgetAll();
    const resumed = () => this.#forgetAll();
    return this.#store.watch?.((id) => this.forget(id), { lost, resumed }) ?? (() => {});
  }

  #forgetAll(): void {
    for (const line of this.#lines.values()) this.forget(line.id);
  }

  /** Drops the cached copy of the endpoint: read again at the next admission. */
  forget(id: string): void {
    const line = this.#lines.get(id);
    if (line === undefined) return;
    line.endpoint = undefined;
    line.loadedAt = Number.NEGATIVE_INFINITY;
  }

  /** The cached endpoint when it is fresh at `at`, enabled and sendable at once (no rate limit to ask); else `undefined`. */
  ready(line: EndpointLine, at: number): WebhookEndpoint | undefined {
    const endpoint = line.endpoint;
    if (!fresh(line.loadedAt, at, this.#cacheMs) || endpoint === undefined || line.disabling > 0) return undefined;
    return endpoint.status === "enabled" && endpoint.rateLimit === null ? endpoint : undefined;
  }

  /** The endpoint as of `at`: the cached one while fresh, else read from the store. */
  async load(line: EndpointLine, at: number): Promise<WebhookEndpoint | undefined> {
    if (fresh(line.loadedAt, at, this.#cacheMs)) return line.endpoint;
    const endpoint = await this.#store.get(line.id);
    line.endpoint = endpoint;
    line.loadedAt = at;
    return endpoint;
  }

  /**
   * Disables the endpoint in the store; `false` when it already was (as far as this worker knows) or is no longer
   * there (deleted while an attempt was in flight): nothing was disabled to announce.
   */
  async disable(line: EndpointLine, reason: DisabledReason, at: number): Promise<boolean> {
    if (line.endpoint?.status === "disabled") return false;
    line.endpoint = await this.#store.update(line.id, { status: "disabled", disabledReason: reason, disabledAt: at });
    line.loadedAt = at;
    return line.endpoint !== undefined;
  }

  /** The endpoint's `failingSince` after an outcome, or `undefined` when the store must be told (it flips). */
  knownHealth(line: EndpointLine, success: boolean): number | null | undefined {
    // Health writes only when it flips: the first failure after a success, or the first success after failures.
    const known = line.endpoint?.failingSince ?? null;
    return success === (known !== null) ? undefined : known;
  }

  /** Records a flipped outcome in the store; returns the endpoint's `failingSince`. */
  async recordHealth(line: EndpointLine, success: boolean, at: number): Promise<number | null> {
    const failingSince = (await this.#store.recordOutcome(line.id, success, at)) ?? null;
    if (line.endpoint !== undefined) line.endpoint = { ...line.endpoint, failingSince };
    return failingSince;
  }
}
