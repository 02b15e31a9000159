import { timerDelay } from "../../../options/timer-delay";

/** A request's place in {@link RequestDeadlines}. Internal. */
export interface Deadline {
  readonly at: number;
  /** Dropped on cancel (see {@link RequestDeadlines.cancel}). */
  onTimeout: (() => void) | undefined;
}

/**
 * One timer for the time-outs of every request in flight. They all share one duration, so deadlines come in the order
 * requests start: the timer only ever waits for the oldest. A timer per request would be created and cleared on
 * every attempt (and at concurrency 1 its timer list too). Internal.
 */
export class RequestDeadlines {
  readonly #timeoutMs: number;
  // Insertion order is deadline order.
  readonly #pending = new Set<Deadline>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** Calls `onTimeout` once `timeoutMs` have passed, unless cancelled first. */
  start(onTimeout: () => void): Deadline {
    const deadline = { at: performance.now() + this.#timeoutMs, onTimeout };
    this.#pending.add(deadline);
    if (this.#timer === undefined) this.#arm(this.#timeoutMs);
    return deadline;
  }

  cancel(deadline: Deadline): void {
    this.#pending.delete(deadline);
    // A deadline pending when the young generation was collected has moved to the old one, where it stays until a
    // full collection even once cancelled; holding the request's callback, it would keep the whole exchange and all it
    // reaches alive and make the next collections copy it (bench/delivery, loop cases: ~2.5 KB per delivery).
    deadline.onTimeout = undefined;
  }

  /** Forgets every deadline and stops the timer. */
  clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.clear();
  }

  #arm(delay: number): void {
    // Past a timer's reach (a time-out over 24.8 days) the sweep comes early, finds nothing due and waits again.
    this.#timer = setTimeout(() => this.#sweep(), timerDelay(delay));
    // The sockets of requests in flight keep the process alive; a timer left over after the last one must not.
    this.#timer.unref?.();
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const deadline of this.#pending) {
      if (deadline.at > now) {
        this.#arm(Math.ceil(deadline.at - now));
        return;
      }
      this.#pending.delete(deadline);
      deadline.onTimeout?.();
    }
  }
}
