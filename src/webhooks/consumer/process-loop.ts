import { nonNegativeNumber } from "../../options/number-option";
import type { ProcessorReport } from "./processor";

/** Options of {@link runProcessorLoop}. */
export interface ProcessorLoopOptions {
  /** What to step. */
  processor: { processDue(): Promise<ProcessorReport>; readonly batchSize: number };
  /** Waits `ms`, resolving early when `signal` aborts (or the runner is woken). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Stops the loop after the current step. */
  signal: AbortSignal;
  /** Pause when no full batch was due, ms. @default 1_000 */
  idleMs?: number;
  /** Pause after the inbox failed to claim, ms. @default 5_000 */
  errorDelayMs?: number;
  /** Told when a step throws (the inbox could not claim). */
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
 * Steps a processor until `signal` aborts: straight on while full batches are due, otherwise
 * sleeping `idleMs`; after a claim error, sleeping `errorDelayMs`. Resolves once the step in
 * flight has settled, so stopping abandons no handler still within its time-out (`handlerTimeoutMs`).
 * @param options the processor, the injected `sleep`, the stop signal and the pauses.
 * @example
 * const controller = new AbortController();
 * const done = runProcessorLoop({ processor, sleep: fakeClock.sleep, signal: controller.signal });
 */
export async function runProcessorLoop(options: ProcessorLoopOptions): Promise<void> {
  const { processor, sleep, signal, onError } = options;
  const { idleMs, errorDelayMs } = processorPauses(options, "runProcessorLoop");
  while (!signal.aborted) {
    let delay: number;
    try {
      const report = await processor.processDue();
      delay = report.claimed >= processor.batchSize ? 0 : idleMs;
    } catch (error) {
      onError?.(error);
      delay = errorDelayMs;
    }
    if (delay > 0 && !signal.aborted) await sleep(delay, signal);
  }
}
