import { nonNegativeNumber, positiveInteger } from "../../../options/number-option";
import { timerDelay } from "../../../options/timer-delay";
import { WebhookConsumerError } from "../errors";
import { type ProcessorLoopOptions, processorPauses, runProcessorLoop } from "../process-loop";

// How long stop() waits past the handler time-out, for the inbox to record how the last attempts ended.
const STOP_SETTLE_MS = 1_000;
// stop()'s bound when attempts have no time-out (handlerTimeoutMs: Infinity): the usual SIGTERM grace of a container.
const STOP_GRACE_NO_TIMEOUT_MS = 30_000;

/** Options of {@link startWebhookProcessor}. */
export interface ProcessorRunnerOptions {
  /** Poll interval when fewer events were due than the runner had free slots for, ms. @default 1_000 */
  idleMs?: number;
  /** Pause after the inbox failed to claim, ms. @default 5_000 */
  errorDelayMs?: number;
  /**
   * Told when claiming fails, or settling an event throws (your `onError` or `retry` threw). What it throws itself
   * is logged to stderr, and the runner goes on. @default logs to stderr
   */
  onError?: (error: unknown) => void;
  /**
   * On `runner.stop()`, the longest it waits for the attempts in flight, ms. Past it `runner.stop()` resolves anyway: the attempts
   * still running are let go (reported to `onError` as a `WebhookConsumerError` `stop_timed_out`), and their events
   * are claimed again once their leases expire, as after a crash (a PostgreSQL attempt rolls back when the process
   * exits). A handler that never settles would otherwise keep `runner.stop()` pending for ever when attempts have no time-out.
   * @default the processor's `handlerTimeoutMs` plus 1 s, or 30 s when it is `Infinity`
   */
  stopGraceMs?: number;
}

/** A running processor loop. */
export interface ProcessorRunner {
  /**
   * Ends the current pause and claims again on the event loop's next turn (the events stored within one turn are
   * claimed together) — pass it as the consumer's `onStored`, which the adapter (`createServer(consumer)` from
   * `rest-webhooks/node`) runs once each 202 has been sent.
   */
  wake(): void;
  /**
   * Stops claiming; resolves when the attempts in flight have settled: their handlers finished, or failed at the
   * processor's `handlerTimeoutMs` (a handler past it is let go, not awaited); at the latest after `stopGraceMs`.
   */
  stop(): Promise<void>;
  /** Resolves when the loop has ended. */
  readonly done: Promise<void>;
}

/**
 * Runs a processor with real timers until stopped: keeps `batchSize` attempts in flight, claiming as each slot
 * frees, so one slow handler never holds up the others; when fewer events were due than it had room for, it sleeps
 * `idleMs` or until {@link ProcessorRunner.wake}.
 * @param processor what to run, usually from `createWebhookProcessor`.
 * @param options the idle and error pauses, and where claim errors go.
 * @example
 * const runner = startWebhookProcessor(processor);
 * const consumer = createWebhookConsumer({ inbox, secrets, onStored: runner.wake });
 * createServer(consumer).listen(3000); // rest-webhooks/node
 * process.on("SIGTERM", () => runner.stop());
 */
export function startWebhookProcessor(
  processor: ProcessorLoopOptions["processor"],
  options: ProcessorRunnerOptions = {},
): ProcessorRunner {
  // Refused now, synchronously: the loop below would only reject its promise, unhandled unless `stop` was awaited.
  const { idleMs, errorDelayMs } = processorPauses(options, "startWebhookProcessor");
  positiveInteger("startWebhookProcessor", "batchSize", processor?.batchSize);
  const timeout = processor.handlerTimeoutMs;
  const stopGraceMs =
    options.stopGraceMs === undefined
      ? typeof timeout === "number" && Number.isFinite(timeout)
        ? timeout + STOP_SETTLE_MS
        : STOP_GRACE_NO_TIMEOUT_MS
      : nonNegativeNumber("startWebhookProcessor", "stopGraceMs", options.stopGraceMs, "milliseconds");
  const controller = new AbortController();
  let woken = false;
  let wakeSleeper: (() => void) | undefined;
  // A wake ends the pause on the next turn of the event loop, not at once: the deliveries stored within one turn (a
  // 202 each) are then claimed together. Claimed one by one, the claims and pauses cost a consumer under load more
  // than processing the events (bench/consumer, "memory inbox + processor").
  let wakeScheduled = false;
  const wakeNextTurn = () => {
    wakeScheduled = false;
    wakeSleeper?.();
  };
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) {
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
      // Woken while it was claiming: something new is due.
      if (woken) wake();
    });
  const wake = () => {
    woken = true;
    if (wakeSleeper === undefined || wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(wakeNextTurn);
  };
  const report = (error: unknown) => {
    const { onError } = options;
    if (onError !== undefined) {
      try {
        onError(error);
        return;
      } catch (thrown) {
        console.error("rest-webhooks: the processor runner's onError threw", thrown);
      }
    }
    console.error("rest-webhooks: the webhook processor failed", error);
  };
  const done = runProcessorLoop({ processor, sleep, signal: controller.signal, idleMs, errorDelayMs, onError: report });
  let stopped: Promise<void> | undefined;
  // The loop's end, or the grace's: one timer however often stop() is called.
  const stopWithin = () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        report(
          new WebhookConsumerError(
            "stop_timed_out",
            `stop(): attempts still running after stopGraceMs (${stopGraceMs} ms) were let go; their events are claimed again once their leases expire.`,
          ),
        );
        resolve();
      }, timerDelay(stopGraceMs));
      // A loop that failed rejects stop() as it did before the grace existed.
      done.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  return {
    wake,
    stop: () => {
      controller.abort();
      stopped ??= stopWithin();
      return stopped;
    },
    done,
  };
}
