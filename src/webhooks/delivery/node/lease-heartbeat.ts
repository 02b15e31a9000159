import { timerDelay } from "../../../options/timer-delay";
import type { ClaimedDelivery, DeliveryQueue } from "../delivery-queue";

/** What the heartbeat asks of the worker. Internal. */
export interface HeartbeatHost {
  readonly queue: DeliveryQueue;
  readonly now: () => number;
  readonly leaseMs: number;
  /** The claims the worker holds now. */
  claims(): ClaimedDelivery[];
  /** What a renewal found: `ids` of `claims` are held until `until`; the others are no longer this worker's. */
  renewed?(claims: readonly ClaimedDelivery[], ids: readonly string[], until: number): void;
  onError(error: unknown): void;
}

/**
 * Renews the leases of the claims a worker holds, every third of the lease, so an attempt that outlasts its lease (a
 * slow consumer, a long time-out) is never claimed and sent again by another worker meanwhile. A worker that dies
 * stops renewing, and its claims fall due again within one lease. Internal.
 */
export class LeaseHeartbeat {
  readonly #host: HeartbeatHost;
  #timer: ReturnType<typeof setInterval> | undefined;
  // The renewal under way (when it was asked for), if any.
  #renewal: { readonly at: number } | undefined;

  constructor(host: HeartbeatHost) {
    this.#host = host;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    // Renewing sooner than a third of the lease is harmless; a period past a timer's reach renewed every millisecond.
    this.#timer = setInterval(() => this.#beat(), timerDelay(Math.max(1, Math.floor(this.#host.leaseMs / 3))));
    this.#timer.unref?.();
  }

  /** Stops renewing; a renewal under way is given up (its answer ignored), so it holds up no later start(). */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#renewal = undefined;
  }

  #beat(): void {
    const host = this.#host;
    const claims = host.claims();
    if (claims.length === 0) return;
    const now = host.now();
    // One renewal at a time: a slow database must not pile them up. One unanswered for a whole lease is given up (any
    // lease it renews ends by now): one that never settled (a database hanging, not down) stopped every renewal after it.
    if (this.#renewal !== undefined && now - this.#renewal.at < host.leaseMs) return;
    const renewal = { at: now };
    this.#renewal = renewal;
    const current = () => this.#renewal === renewal;
    // A queue of one's own may throw rather than reject: thrown here it crashed the process from the interval, and
    // left the renewal under way, so no lease was renewed again.
    new Promise<string[]>((resolve) => resolve(host.queue.renew(claims, now, host.leaseMs)))
      // A given-up renewal's answer is stale: a later one may have renewed the leases since.
      .then((ids) => current() && host.renewed?.(claims, ids, now + host.leaseMs))
      .catch((error: unknown) => current() && host.onError(error))
      .finally(() => {
        if (current()) this.#renewal = undefined;
      });
  }
}
