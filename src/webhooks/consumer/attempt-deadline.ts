import { WebhookConsumerError } from "./errors";

/**
 * One attempt's time budget. The processor and the inbox race the attempt's work against the deadline signal itself
 * (shared by the attempts that start in one window, see `sharedDeadline`); the handler's own `signal` is made only
 * when the handler reads it. Measured on Node 20 (bench/consumer, memory inbox + processor), an `AbortController` per
 * attempt and its listener on the deadline were a third of the processor's CPU per event, for a signal most handlers
 * never read. Internal to the processor.
 */
export class AttemptDeadline {
  readonly #deadline: AbortSignal | undefined;
  readonly #ms: number;
  #error: WebhookConsumerError | undefined;
  #controller: AbortController | undefined;
  #expire: (() => void) | undefined;
  #ended = false;

  /**
   * @param deadline aborts when the attempt has run out of time; `undefined` for no time-out.
   * @param ms the time-out, for the error's message.
   */
  constructor(deadline: AbortSignal | undefined, ms: number) {
    this.#deadline = deadline;
    this.#ms = ms;
  }

  /** What the attempt's work is raced against: the deadline, shared with other attempts; `undefined` for none. */
  get race(): AbortSignal | undefined {
    return this.#deadline;
  }

  /**
   * The error an attempt fails with when `error` is the deadline's reason (the race lost): the attempt's
   * `handler_timeout`; any other error as it is.
   */
  failure(error: unknown): unknown {
    const deadline = this.#deadline;
    return deadline?.aborted === true && error === deadline.reason ? this.#timeout() : error;
  }

  /**
   * The handler's `signal`, made on first read: it aborts with the attempt's `handler_timeout` at the deadline, unless
   * the attempt ended first (read after the end, it never aborts).
   */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const deadline = this.#deadline;
      if (deadline !== undefined && !this.#ended) {
        if (deadline.aborted) controller.abort(this.#timeout());
        else {
          this.#expire = () => controller.abort(this.#timeout());
          deadline.addEventListener("abort", this.#expire, { once: true });
        }
      }
    }
    return this.#controller.signal;
  }

  /** The attempt settled: its handler's signal lets go of the deadline and never aborts. */
  end(): void {
    this.#ended = true;
    if (this.#expire !== undefined) this.#deadline?.removeEventListener("abort", this.#expire);
  }

  #timeout(): WebhookConsumerError {
    this.#error ??= new WebhookConsumerError("handler_timeout", `The handler did not finish within ${this.#ms} ms.`, {
      cause: this.#deadline?.reason,
    });
    return this.#error;
  }
}
