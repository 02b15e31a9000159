import { timerDelay } from "../../../options/timer-delay";
import type { ClaimedDelivery, DeliveryQueue } from "../delivery-queue";
import type { ClaimRequest } from "../delivery-scheduler";

// The pause before claiming again after claims that found nothing though a delivery is reported due.
const RECLAIM_PAUSE_MS = 10;

/** What the pump asks of the worker. Internal. */
export interface PumpHost {
  readonly queue: DeliveryQueue;
  readonly now: () => number;
  readonly leaseMs: number;
  readonly pollMs: number;
  running(): boolean;
  /** Whether a claim is worth making now, on news or not (cheap: asked on every completion). */
  wants(news: boolean): boolean;
  /** The claim worth making now (`undefined`: wait for more room). */
  request(): ClaimRequest | undefined;
  /** The claim asked for by the last `request()` came back, or failed. */
  claimed(): void;
  /** Claims held and not finished. */
  held(): number;
  /** Takes over one claimed delivery. */
  admit(claim: ClaimedDelivery): void;
  onError(error: unknown): void;
}

/**
 * The claim loop: claims due deliveries while the worker has room, then sleeps until the queue's earliest due time.
 * One wake-up timer serves every scheduled retry, never a timer per delivery. Internal.
 */
export class ClaimPump {
  readonly #host: PumpHost;
  #pumping = false;
  #again = false;
  #scheduled = false;
  #news = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(host: PumpHost) {
    this.#host = host;
  }

  /** Whether a claim round is under way. */
  get pumping(): boolean {
    return this.#pumping;
  }

  /**
   * Claims soon if it is worth it (a round under way goes round once more). `news`: something may have become due (a
   * publish, a timer, a wake-up); without it, a completion. The kicks of one turn of the event loop (a burst of
   * publishes, completions arriving together) make one claim, a macrotask later.
   */
  kick(news = false): void {
    this.#news ||= news;
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const kicked = this.#news;
      this.#news = false;
      this.#kickNow(kicked);
    });
  }

  #kickNow(news: boolean): void {
    const host = this.#host;
    if (!host.running() || !host.wants(news)) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    this.#pump().then(
      () => this.#done(),
      (error: unknown) => {
        host.onError(error);
        if (host.running()) this.#arm(host.pollMs);
        this.#done();
      },
    );
  }

  /** Cancels the wake-up timer. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  #done(): void {
    this.#pumping = false;
    if (this.#again) {
      this.#again = false;
      this.#kickNow(true);
    }
  }

  async #pump(): Promise<void> {
    const host = this.#host;
    let claimedAny = false;
    do {
      this.#again = false;
      while (host.running()) {
        // Asked for only when it is made: every claim asked for is reported back (claimed), whatever it finds.
        const request = host.request();
        if (request === undefined) break;
        let claims: ClaimedDelivery[];
        try {
          claims = await host.queue.claim({ ...request, now: host.now(), leaseMs: host.leaseMs });
        } finally {
          host.claimed();
        }
        for (const claim of claims) host.admit(claim);
        if (claims.length > 0) claimedAny = true;
        if (claims.length < request.limit) break;
      }
    } while (this.#again && host.running());
    if (!host.running()) return;
    // With claims held their completions kick again; the timer only covers an idle worker.
    if (host.held() > 0) return this.#arm(host.pollMs);
    const next = await host.queue.nextDueAt();
    if (next === undefined) return this.#arm(host.pollMs);
    // Claims that found nothing while the queue reports a delivery due (locked by another worker's claim, or past
    // where this claim's walk stopped; the next one goes on from there): the next look is a short pause away, so a
    // queue whose claim and nextDueAt disagree costs a claim per pause, never a busy loop.
    const wait = next - host.now();
    this.#arm(Math.min(host.pollMs, claimedAny || wait > 0 ? Math.max(0, wait) : RECLAIM_PAUSE_MS));
  }

  // One wake-up timer for every scheduled retry; an earlier one already set is kept. None once stopped: a round that
  // was awaiting the queue when stop() cancelled the timer armed it again, and it outlived stop().
  #arm(delay: number): void {
    if (!this.#host.running()) return;
    const at = performance.now() + delay;
    if (this.#timer !== undefined) {
      if (this.#timerAt <= at) return;
      clearTimeout(this.#timer);
    }
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.kick(true);
      // A poll interval past a timer's reach (pollIntervalMs over 24.8 days) fired every millisecond: a busy loop.
    }, timerDelay(delay));
    this.#timer.unref?.();
  }
}
