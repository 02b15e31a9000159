import { nonNegativeNumber, positiveInteger } from "../../options/number-option";

/** Options of {@link runProcessorLoop}. */
export interface ProcessorLoopOptions {
  /**
   * What to run: `batchSize` is how many attempts the loop keeps in flight; `startDue(limit, { signal })` claims up to
   * `limit` events and starts them, and nothing once the loop's `signal` has aborted (a `WebhookProcessor`).
   */
  processor: {
    startDue(limit: number, options: { signal: AbortSignal }): Promise<Promise<unknown>[]>;
    readonly batchSize: number;
    /** How long one attempt may take, ms (`Infinity`: no time-out); `startWebhookProcessor`'s stop bound reads it. */
    readonly handlerTimeoutMs?: number;
  };
  /** Waits `ms`, resolving early when `signal` aborts (or the runner is woken). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Stops claiming; the loop then waits for the attempts in flight. */
  signal: AbortSignal;
  /** Pause when fewer events were due than the loop had room for, ms. @default 1_000 */
  idleMs?: number;
  /** Pause after the inbox failed to claim, ms. @default 5_000 */
  errorDelayMs?: number;
  /**
   * Told when a claim throws (the inbox could not claim), or an attempt does (your `onError` or `retry` threw). What
   * it throws itself is dropped: the loop goes on (`startWebhookProcessor` logs it to stderr).
   */
  onError?: (error: unknown) => void;
}

/**
 * The loop's pauses, the defaults filled in; a `TypeError` naming `owner` for one that is not a finite number of 0 or
 * more (`NaN` would make every sleep end at once).
 */
export function processorPauses(
  options: Pick<ProcessorLoopOptions, "idleMs" | "errorDelayMs">,
  owner: string,
): { idleMs: number; errorDelayMs: number } {
  return {
    idleMs: nonNegativeNumber(owner, "idleMs", options.idleMs ?? 1_000, "milliseconds"),
    errorDelayMs: nonNegativeNumber(owner, "errorDelayMs", options.errorDelayMs ?? 5_000, "milliseconds"),
  };
}

/**
 * Keeps `batchSize` attempts in flight until `signal` aborts: claims as many events as it has free slots, and
 * claims again as soon as one frees, so a slow handler holds one slot while the others go on. When fewer events
 * were due than it asked for, it sleeps `idleMs` before the next claim; after a claim error, `errorDelayMs`.
 * Resolves once the attempts in flight have settled, so stopping abandons no handler still within its time-out
 * (`handlerTimeoutMs`).
 * @param options the processor, the injected `sleep`, the stop signal and the pauses.
 * @example
 * const controller = new AbortController();
 * const done = runProcessorLoop({ processor, sleep: fakeClock.sleep, signal: controller.signal });
 */
export async function runProcessorLoop(options: ProcessorLoopOptions): Promise<void> {
  const { processor, sleep, signal } = options;
  // A reporter that throws must neither end the loop nor, from an attempt's rejection, become an unhandled rejection
  // (fatal to the process by default), leaving its slot counted for ever.
  const onError = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // Nowhere left to report it.
    }
  };
  const { idleMs, errorDelayMs } = processorPauses(options, "runProcessorLoop");
  // Zero slots would wait forever for an attempt to settle: refused, as the processor refuses such a batch.
  const slots = positiveInteger("runProcessorLoop", "batchSize", processor.batchSize);
  let inFlight = 0;
  let slotFreed: (() => void) | undefined;
  const settled = () => {
    inFlight--;
    slotFreed?.();
  };
  const failed = (error: unknown) => {
    settled();
    onError(error);
  };
  // Resolves when an attempt settles, or (with `orStop`) when the loop is stopped.
  const nextSettled = (orStop: boolean) =>
    new Promise<void>((resolve) => {
      const done = () => {
        slotFreed = undefined;
        signal.removeEventListener("abort", done);
        resolve();
      };
      slotFreed = done;
      if (orStop) signal.addEventListener("abort", done, { once: true });
    });
  while (!signal.aborted) {
    const free = slots - inFlight;
    if (free <= 0) {
      await nextSettled(true);
      continue;
    }
    let delay = 0;
    try {
      const started = await processor.startDue(free, { signal });
      inFlight += started.length;
      for (const attempt of started) attempt.then(settled, failed);
      if (started.length < free) delay = idleMs;
    } catch (error) {
      onError(error);
      delay = errorDelayMs;
    }
    if (delay > 0 && !signal.aborted) await sleep(delay, signal);
  }
  while (inFlight > 0) await nextSettled(false);
}
