import type { ClaimedDelivery, DeliveryQueue } from "../delivery-queue";

/** What the pump asks of the worker. Internal. */
export interface PumpHost {
  readonly queue: DeliveryQueue;
  readonly now: () => number;
  readonly leaseMs: number;
  readonly pollMs: number;
  running(): boolean;
  /** How many deliveries are worth claiming now (0: wait for more slots to free). */
  wanted(): number;
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
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(host: PumpHost) {
    this.#host = host;
  }

  /** Whether a claim round is under way. */
  get pumping(): boolean {
    return this.#pumping;
  }

  /** Claims now if there is room (a round under way goes round once more). */
  kick(): void {
    const host = this.#host;
    // Most completions free a slot while plenty are still busy: wait for a batch instead of a claim per slot.
    if (!host.running() || host.wanted() === 0) return;
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
      this.kick();
    }
  }

  async #pump(): Promise<void> {
    const host = this.#host;
    do {
      this.#again = false;
      for (let wanted = host.wanted(); wanted > 0 && host.running(); wanted = host.wanted()) {
        const claims = await host.queue.claim({ limit: wanted, now: host.now(), leaseMs: host.leaseMs });
        for (const claim of claims) host.admit(claim);
        if (claims.length < wanted) break;
      }
    } while (this.#again && host.running());
    if (!host.running()) return;
    // With claims held their completions kick again; the timer only covers an idle worker.
    if (host.held() > 0) return this.#arm(host.pollMs);
    const next = await host.queue.nextDueAt();
    this.#arm(next === undefined ? host.pollMs : Math.min(host.pollMs, Math.max(0, next - host.now())));
  }

  // One wake-up timer for every scheduled retry; an earlier one already set is kept.
  #arm(delay: number): void {
    const at = performance.now() + delay;
    if (this.#timer !== undefined) {
      if (this.#timerAt <= at) return;
      clearTimeout(this.#timer);
    }
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.kick();
    }, delay);
    this.#timer.unref?.();
  }
}
