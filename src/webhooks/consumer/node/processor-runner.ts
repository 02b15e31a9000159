import { processorPauses, runProcessorLoop } from "../process-loop";
import type { ProcessorReport } from "../processor";

/** Options of {@link startWebhookProcessor}. */
export interface ProcessorRunnerOptions {
  /** Poll interval when nothing (or less than a full batch) was due, ms. @default 1_000 */
  idleMs?: number;
  /** Pause after the inbox failed to claim, ms. @default 5_000 */
  errorDelayMs?: number;
  /** Told when claiming fails. @default logs to stderr */
  onError?: (error: unknown) => void;
}

/** A running processor loop. */
export interface ProcessorRunner {
  /**
   * Ends the current pause and steps again at once — pass it as the consumer's `onStored`, which
   * `adaptWebhookConsumer` runs once each 202 has been sent.
   */
  wake(): void;
  /**
   * Stops looping; resolves when the step in flight has settled: its handlers finished, or failed at the
   * processor's `handlerTimeoutMs` (a handler past it is let go, not awaited).
   */
  stop(): Promise<void>;
  /** Resolves when the loop has ended. */
  readonly done: Promise<void>;
}

/**
 * Runs a processor with real timers until stopped: steps while full batches are due, otherwise
 * sleeps `idleMs` or until {@link ProcessorRunner.wake}.
 * @param processor what to step, usually from `createWebhookProcessor`.
 * @param options the idle and error pauses, and where claim errors go.
 * @example
 * const runner = startWebhookProcessor(processor);
 * const consumer = createWebhookConsumer({ inbox, secrets, onStored: runner.wake });
 * http.createServer(adaptWebhookConsumer(consumer)).listen(3000);
 * process.on("SIGTERM", () => runner.stop());
 */
export function startWebhookProcessor(
  processor: { processDue(): Promise<ProcessorReport>; readonly batchSize: number },
  options: ProcessorRunnerOptions = {},
): ProcessorRunner {
  // Refused now, synchronously: the loop below would only reject its promise.
  const { idleMs, errorDelayMs } = processorPauses(options, "startWebhookProcessor");
  const controller = new AbortController();
  let woken = false;
  let wakeSleeper: (() => void) | undefined;
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (woken || signal.aborted) {
        woken = false;
        resolve();
        return;
      }
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", finish);
        wakeSleeper = undefined;
        woken = false;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      signal.addEventListener("abort", finish, { once: true });
      wakeSleeper = finish;
    });
  const done = runProcessorLoop({
    processor,
    sleep,
    signal: controller.signal,
    idleMs,
    errorDelayMs,
    onError: options.onError ?? ((error) => console.error("rest-webhooks: the inbox could not be claimed", error)),
  });
  return {
    wake: () => {
      woken = true;
      wakeSleeper?.();
    },
    stop: () => {
      controller.abort();
      return done;
    },
    done,
  };
}
