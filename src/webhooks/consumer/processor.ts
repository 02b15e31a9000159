import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { isThenable } from "../../http/thenable";
import { untilAborted } from "../../http/until-aborted";
import { fieldErrors } from "../../http/validation";
import { optionalFunction } from "../../options/function-option";
import { positiveInteger, positiveNumber } from "../../options/number-option";
import { MAX_TIMER_MS } from "../../options/timer-delay";
import { EventRouter } from "../event-pattern/event-router";
import { exponentialBackoff, type RetryPolicy } from "../retry/backoff";
import { policyDelay } from "../retry/policy-delay";
import { AttemptDeadline } from "./attempt-deadline";
import { errorRecord, WebhookConsumerError } from "./errors";
import type { InboxEvent } from "./event";
import { handlerInput } from "./handler-input";
import type { Inbox, InboxClaim } from "./inbox";
import { sharedDeadline } from "./shared-deadline";

/** What an event handler receives: the event, the attempt number, and the inbox's context (PostgreSQL: `client`). */
export type InboxEventHandlerInput<T, Context extends object> = {
  event: InboxEvent<T>;
  /** 1 on the first attempt. */
  attempt: number;
  /**
   * Aborts when the attempt has run out of time (the processor's `handlerTimeoutMs`; its reason a
   * `WebhookConsumerError` of code `handler_timeout`). The attempt has failed by then and nothing the handler does
   * afterwards commits with it: pass it on (`fetch(url, { signal })`) and stop.
   */
  signal: AbortSignal;
} & Context;

/**
 * Handles one event type. Throwing retries the event with backoff. Make it idempotent by
 * keying effects on `event.id`: a processor that dies mid-handler leaves the event to be run again.
 */
export type InboxEventHandler<T, Context extends object> = (
  input: InboxEventHandlerInput<T, Context>,
) => void | Promise<void>;

/** Options of {@link createWebhookProcessor}. */
export interface WebhookProcessorOptions<Context extends object> {
  /** Where events are claimed from. */
  inbox: Inbox<Context>;
  /** The clock, Unix ms. @default Date.now */
  now?: () => number;
  /** How long a claim holds before another processor may take the event over. @default 30_000 */
  leaseMs?: number;
  /**
   * How long one attempt may take, ms: the inbox's `complete` from start to end (the PostgreSQL inbox's connection
   * and row lock, the handler, the done mark). Past it the attempt fails with `handler_timeout` (retried like a
   * throw), the handler's `signal` aborts, and the inbox ends the attempt's transaction without waiting (the
   * PostgreSQL inbox on a pool closes its connection): one handler that hangs, say on a call without a time-out,
   * never stalls the processor's steps. JavaScript cannot stop the handler itself, so have it honour `signal`.
   * `Infinity` for none, as is any value over 2^31 − 1 (about 24.8 days, the longest timer).
   * @default leaseMs
   */
  handlerTimeoutMs?: number;
  /**
   * Makes the signal that ends an attempt after `ms` (inject one in tests to end attempts by hand); called once per
   * attempt.
   * @default one `AbortSignal.timeout` shared by the attempts that start within a tenth of `ms` (at most 100 ms), so
   *   an attempt gets at least `ms` and at most 100 ms more
   */
  deadline?: (ms: number) => AbortSignal;
  /** Events claimed per step, run concurrently: a positive integer. @default 10 */
  batchSize?: number;
  /**
   * When a failed event is tried again, and when it is dead-lettered instead (the policy returns `undefined`): the
   * same retry family the delivery worker uses (`exponentialBackoff`, `scheduleBackoff`, or your own function). An
   * answer that is no number of ms (NaN, ±Infinity) dead-letters too; a delay over 365 days is cut to 365 days.
   * @default exponentialBackoff({ baseMs: 1_000, capMs: 3_600_000, maxAttempts: 8 }) — full jitter, 8 attempts
   */
  retry?: RetryPolicy;
  /** The random source of the retry policy's jitter, in [0, 1). @default Math.random */
  random?: () => number;
  /** What to do with an event no handler matches: mark it done, or dead-letter it (`no_handler`). @default "done" */
  unhandled?: "done" | "dead";
  /** This processor's id, recorded on claims. @default randomId() */
  owner?: string;
  /**
   * Makes random ids (today only the default `owner`); inject it for deterministic tests.
   * @default crypto.randomUUID
   */
  randomId?: () => string;
  /**
   * How long done events are kept, ms. The processor deletes done events older than this (`inbox.purgeDone`) at its
   * first step and then at most once an hour (once per `retainDoneMs` when that is shorter), so the inbox does not
   * grow without end. A purged id no longer de-duplicates: keep done events longer than your providers redeliver
   * (Stripe retries for 3 days, the Standard Webhooks schedule spans about 28 hours). `false` keeps them until you
   * call `inbox.purgeDone` yourself.
   * @default 604_800_000 (7 days)
   */
  retainDoneMs?: number | false;
  /**
   * Told about handler failures, events dead-lettered without a handler run (`payload_invalid`, `no_handler`,
   * `attempts_exhausted`) and inbox errors (the processor itself never throws them, except from claim).
   */
  onError?: (error: unknown, event: InboxEvent | undefined) => void;
}

/** What one {@link WebhookProcessor.processDue} step did. */
export interface ProcessorReport {
  /** Events claimed. */
  claimed: number;
  /** Processed successfully (or unhandled and marked done). */
  done: number;
  /** Failed and scheduled for another attempt. */
  retried: number;
  /** Dead-lettered. */
  dead: number;
  /** Taken over by another processor: before the handler could start (not run here), or before its failure was recorded. */
  lost: number;
  /** Inbox errors while settling an event (it is retried when its lease expires). */
  errors: number;
  /** Done events deleted because they were older than `retainDoneMs` (0 on steps that did not purge). */
  purged: number;
}

interface Route<Context extends object> {
  schema: z.ZodType | undefined;
  handler: InboxEventHandler<unknown, Context>;
}

/**
 * Processes inbox events once in effect: claims due events under a lease, runs the handler
 * registered for the event type, marks the event done, or schedules a retry / dead-letters it.
 * Driven by {@link processDue} steps, so tests step it with a fake clock; the node runner loops it.
 */
export class WebhookProcessor<Context extends object = object> {
  readonly #inbox: Inbox<Context>;
  readonly #now: () => number;
  readonly #leaseMs: number;
  /** `undefined`: no time-out. */
  readonly #handlerTimeoutMs: number | undefined;
  readonly #deadline: (ms: number) => AbortSignal;
  readonly #batchSize: number;
  readonly #retry: RetryPolicy;
  readonly #random: () => number;
  readonly #unhandled: "done" | "dead";
  readonly #owner: string;
  readonly #onError: ((error: unknown, event: InboxEvent | undefined) => void) | undefined;
  readonly #retainDoneMs: number | undefined;
  readonly #purgeEveryMs: number;
  /** When this processor last purged (its clock), or `undefined` before its first step. */
  #purgedAt: number | undefined;
  readonly #routes = new EventRouter<Route<Context>>();

  constructor(options: WebhookProcessorOptions<Context>) {
    const inbox = options?.inbox;
    if (
      typeof inbox?.claim !== "function" ||
      typeof inbox.complete !== "function" ||
      typeof inbox.fail !== "function"
    ) {
      throw new TypeError(
        "createWebhookProcessor: options.inbox must be an Inbox (createMemoryInbox() or createPostgresInbox(...)).",
      );
    }
    this.#inbox = inbox;
    this.#now = options.now ?? Date.now;
    this.#leaseMs = positiveNumber("createWebhookProcessor", "leaseMs", options.leaseMs ?? 30_000, "milliseconds");
    const timeout = options.handlerTimeoutMs ?? this.#leaseMs;
    if (timeout !== Number.POSITIVE_INFINITY) {
      positiveNumber("createWebhookProcessor", "handlerTimeoutMs", timeout, "milliseconds");
    }
    // A timer longer than this fires at once in Node (TimeoutOverflowWarning): such a time-out means none.
    this.#handlerTimeoutMs = timeout > MAX_TIMER_MS ? undefined : Math.ceil(timeout);
    // Shared by the attempts that start within one window, as the consumer's deadline: a signal of its own per
    // attempt (a timer and its weak registration) cost ~20 µs of CPU per event, more than the processing around it.
    this.#deadline =
      optionalFunction(
        "createWebhookProcessor",
        "deadline",
        options.deadline,
        "a function of milliseconds returning an AbortSignal",
      ) ??
      (this.#handlerTimeoutMs === undefined ? (ms) => AbortSignal.timeout(ms) : sharedDeadline(this.#handlerTimeoutMs));
    // A claim's LIMIT: a fraction would be refused by PostgreSQL on every poll, so it is refused here.
    this.#batchSize = positiveInteger("createWebhookProcessor", "batchSize", options.batchSize ?? 10);
    this.#retry =
      optionalFunction("createWebhookProcessor", "retry", options.retry, "a RetryPolicy function") ?? DEFAULT_RETRY;
    this.#random = options.random ?? Math.random;
    this.#unhandled = options.unhandled ?? "done";
    if (this.#unhandled !== "done" && this.#unhandled !== "dead") {
      throw new TypeError('createWebhookProcessor: unhandled must be "done" or "dead".');
    }
    this.#owner = options.owner ?? (options.randomId ?? randomUUID)();
    this.#onError = options.onError;
    const retain = options.retainDoneMs ?? DEFAULT_RETAIN_DONE_MS;
    this.#retainDoneMs =
      retain === false ? undefined : positiveNumber("createWebhookProcessor", "retainDoneMs", retain, "milliseconds");
    this.#purgeEveryMs = Math.min(this.#retainDoneMs ?? PURGE_EVERY_MS, PURGE_EVERY_MS);
    if (this.#retainDoneMs !== undefined && typeof inbox.purgeDone !== "function") {
      throw new TypeError(
        "createWebhookProcessor: retainDoneMs needs an inbox with purgeDone(before); pass retainDoneMs: false to keep done events.",
      );
    }
  }

  /** The number of events one step claims. */
  get batchSize(): number {
    return this.#batchSize;
  }

  /** How long one attempt may take, ms: `Infinity` when attempts have no time-out (the runner's stop bound reads it). */
  get handlerTimeoutMs(): number {
    return this.#handlerTimeoutMs ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Registers the handler for an event type pattern (`order.shipped`, `order.*`, `*`); with a zod
   * schema the handler gets the parsed payload, and a payload that does not match is dead-lettered
   * with its field errors (`payload_invalid`).
   * @param pattern an exact type (`order.shipped`), a prefix (`order.*`) or `*`; a malformed or repeated one is a TypeError.
   * @param schema optional zod schema the payload must satisfy; the handler gets its output.
   * @param handler runs once per event in effect; throwing retries it with backoff.
   * @returns this processor, for chaining.
   * @example processor.on("order.*", OrderEvent, async ({ event, client }) => { … })
   */
  on(pattern: string, handler: InboxEventHandler<unknown, Context>): this;
  on<S extends z.ZodType>(pattern: string, schema: S, handler: InboxEventHandler<z.output<S>, Context>): this;
  on(
    pattern: string,
    schemaOrHandler: z.ZodType | InboxEventHandler<unknown, Context>,
    handler?: InboxEventHandler<never, Context>,
  ): this {
    if (typeof schemaOrHandler === "function") {
      this.#routes.add(pattern, { schema: undefined, handler: schemaOrHandler });
    } else if (typeof handler === "function" && typeof schemaOrHandler?.safeParse === "function") {
      this.#routes.add(pattern, { schema: schemaOrHandler, handler: handler as InboxEventHandler<unknown, Context> });
    } else {
      throw new TypeError("on(pattern, handler) or on(pattern, schema, handler) expects a function handler.");
    }
    return this;
  }

  /**
   * Claims the events due now and processes them; resolves when all of them are settled.
   * @returns what the step did: claimed, done, retried, dead, lost, errors.
   * @throws whatever the inbox's `claim` throws (the node runner reports it and pauses).
   * @example while ((await processor.processDue()).claimed > 0) {} // drain, in a test with a fake clock
   */
  async processDue(): Promise<ProcessorReport> {
    const claims = await this.#claim(this.#batchSize);
    const report = emptyReport(claims.length);
    await Promise.all(claims.map((claim) => this.#process(claim, report)));
    report.purged = await this.#purgeIfDue();
    return report;
  }

  /**
   * Claims up to `limit` due events and starts each attempt without waiting for it: what a runner calls to keep
   * `batchSize` attempts in flight, claiming again as each one settles, so one slow handler holds one slot and not
   * a whole step (`processDue` waits for its whole batch). Purges done events when due, as a step does, before it
   * claims.
   * @param limit the most events to claim: a positive integer, usually the runner's free slots.
   * @param options `signal`: the runner's stop; once it has aborted (the purge before the claim may take a while),
   *   nothing is claimed and the answer is `[]`.
   * @returns once claimed, one promise per claimed event, resolving when that event is settled with what became of
   *   it (`claimed: 1`, and one of done, retried, dead, lost or errors); it rejects only when your `onError` or
   *   `retry` policy throws.
   * @throws whatever the inbox's `claim` throws; a TypeError for a `limit` that is not a positive integer.
   * @example const settled = await processor.startDue(3); // up to 3 attempts now running
   */
  async startDue(
    limit: number,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<Promise<ProcessorReport>[]> {
    positiveInteger("WebhookProcessor.startDue", "limit", limit);
    const { signal } = options;
    if (signal?.aborted) return [];
    // Before the claim: once attempts are started, nothing here may throw and leave them untracked.
    await this.#purgeIfDue();
    // A stop during the purge (a large backlog takes seconds) claimed anyway, and ran handlers after the stop.
    if (signal?.aborted) return [];
    const claims = await this.#claim(limit);
    return claims.map(async (claim) => {
      const report = emptyReport(1);
      await this.#process(claim, report);
      return report;
    });
  }

  // A row the inbox could not read was dead-lettered without a claim: told as the other dead letters are.
  readonly #onInvalid = (error: unknown) => this.#onError?.(error, undefined);

  #claim(limit: number): Promise<InboxClaim[]> {
    return this.#inbox.claim({
      now: this.#now(),
      leaseMs: this.#leaseMs,
      limit,
      owner: this.#owner,
      onInvalid: this.#onInvalid,
    });
  }

  /**
   * Deletes the done events older than the retention at the first step, then once per purge interval (never with
   * `retainDoneMs: false`); how many it deleted. A failure is reported, never thrown from the step.
   */
  async #purgeIfDue(): Promise<number> {
    const now = this.#now();
    const retain = this.#retainDoneMs;
    if (retain === undefined) return 0;
    // A clock set back (an NTP step) is due at once: waiting for it to pass the last purge again kept every done event.
    const last = this.#purgedAt;
    if (last !== undefined && now >= last && now - last < this.#purgeEveryMs) return 0;
    // Taken before the await, so steps that overlap purge once; a failed purge waits for the next interval too.
    this.#purgedAt = now;
    try {
      return await this.#inbox.purgeDone(now - retain);
    } catch (error) {
      this.#onError?.(error, undefined);
      return 0;
    }
  }

  async #process(claim: InboxClaim, report: ProcessorReport): Promise<void> {
    const { event, attempts } = claim;
    // Claims count attempts, so processors that died holding the lease used them up too: the policy decides.
    if (attempts > 1 && this.#delay(attempts - 1) === undefined) {
      const error = new WebhookConsumerError(
        "attempts_exhausted",
        `${attempts - 1} attempts were started and none finished; the last processors died holding the lease.`,
      );
      return this.#deadUnrun(claim, error, report);
    }
    const route = this.#routes.match(event.type);
    if (route === undefined && this.#unhandled === "dead") {
      return this.#deadUnrun(claim, new WebhookConsumerError("no_handler", `No handler for "${event.type}".`), report);
    }
    let payload = event.payload;
    if (route?.schema !== undefined) {
      let parsed: ReturnType<z.ZodType["safeParse"]>;
      try {
        parsed = route.schema.safeParse(event.payload);
      } catch (error) {
        // safeParse returns a payload's failure; a transform or refine that throws is a bug in code, as a handler's.
        return this.#failed(claim, error, report);
      }
      if (!parsed.success) {
        const errors = fieldErrors(parsed.error.issues, "body");
        const error = new WebhookConsumerError("payload_invalid", `The "${event.type}" payload is not valid.`, {
          cause: parsed.error,
          errors,
        });
        return this.#deadUnrun(claim, error, report);
      }
      payload = parsed.data;
    }
    const ms = this.#handlerTimeoutMs;
    const deadline = new AttemptDeadline(ms === undefined ? undefined : this.#deadline(ms), ms ?? 0);
    const race = deadline.race;
    const handlerEvent = payload === event.payload ? event : { ...event, payload };
    let result: Awaited<ReturnType<Inbox<Context>["complete"]>>;
    try {
      result = await this.#inbox.complete(
        claim,
        async (context) => {
          if (route === undefined) return;
          const handled = route.handler(
            handlerInput<InboxEventHandlerInput<unknown, Context>>(context, handlerEvent, attempts, deadline),
          );
          // A handler that answered synchronously has finished. An async one fails at the time-out here too, for an
          // inbox that does not take the signal.
          if (!isThenable(handled)) return;
          await (race === undefined ? handled : untilAborted(handled, race));
        },
        this.#now(),
        { signal: race },
      );
    } catch (error) {
      // The inbox itself failed (say the database went away): settle as a retry if it can. Counted by how it settles
      // (retried, dead, lost, or errors when the inbox cannot record it either), once, as every claimed event is.
      result = { outcome: "failed", error };
    } finally {
      deadline.end();
    }
    if (result.outcome === "done") report.done++;
    else if (result.outcome === "lost") report.lost++;
    else return this.#failed(claim, deadline.failure(result.error), report);
  }

  /** Settles a failed attempt: retried after the policy's delay, or dead when the policy says no more. */
  async #failed(claim: InboxClaim, error: unknown, report: ProcessorReport): Promise<void> {
    this.#onError?.(error, claim.event);
    const delay = this.#delay(claim.attempts);
    if (delay === undefined) return this.#dead(claim, error, report);
    const retryAt = this.#now() + delay;
    tally(report, await this.#settle(claim, { retryAt, error: errorRecord(error) }), "retried");
  }

  /**
   * The policy's delay after `attempts`, read as the delivery worker reads it (`policyDelay`): a retry time no inbox
   * takes left the event to be run again at every lease's end, for ever.
   */
  #delay(attempts: number): number | undefined {
    return policyDelay(this.#retry(attempts, this.#random));
  }

  /**
   * Dead-letters an event no handler ran for (`attempts_exhausted`, `no_handler`, `payload_invalid`), telling
   * `onError` as a handler's failure is told: a dead letter nobody hears of waits in the inbox until someone looks.
   */
  #deadUnrun(claim: InboxClaim, error: WebhookConsumerError, report: ProcessorReport): Promise<void> {
    this.#onError?.(error, claim.event);
    return this.#dead(claim, error, report);
  }

  async #dead(claim: InboxClaim, error: unknown, report: ProcessorReport): Promise<void> {
    tally(report, await this.#settle(claim, { dead: true, error: errorRecord(error) }), "dead");
  }

  /** What `Inbox.fail` answered: recorded, or not (the lease had passed to another processor); `undefined` on an error. */
  async #settle(claim: InboxClaim, outcome: Parameters<Inbox<Context>["fail"]>[1]): Promise<boolean | undefined> {
    try {
      return await this.#inbox.fail(claim, outcome, this.#now());
    } catch (error) {
      this.#onError?.(error, claim.event);
      return undefined;
    }
  }
}

function emptyReport(claimed: number): ProcessorReport {
  return { claimed, done: 0, retried: 0, dead: 0, lost: 0, errors: 0, purged: 0 };
}

// A failure `fail` did not record belongs to the processor that took the event over: lost here, not retried or dead.
function tally(report: ProcessorReport, settled: boolean | undefined, as: "retried" | "dead"): void {
  if (settled === undefined) report.errors++;
  else if (settled) report[as]++;
  else report.lost++;
}

const DEFAULT_RETRY = exponentialBackoff({ baseMs: 1_000, capMs: 3_600_000, maxAttempts: 8 });
// Longer than the providers' redelivery windows (Stripe: 3 days), so a purged id is one no provider sends again.
const DEFAULT_RETAIN_DONE_MS = 7 * 24 * 3_600_000;
const PURGE_EVERY_MS = 3_600_000;

/**
 * Creates a {@link WebhookProcessor} over an inbox.
 * @param options the inbox, the clock, the lease, batch size, attempt budget and backoff; see {@link WebhookProcessorOptions}.
 * @see docs/webhooks-consumers.md, "Processing: once in effect"
 * @example
 * const processor = createWebhookProcessor({ inbox });
 * processor.on("order.shipped", OrderShipped, async ({ event }) => ship(event.id, event.payload));
 */
export function createWebhookProcessor<Context extends object>(
  options: WebhookProcessorOptions<Context>,
): WebhookProcessor<Context> {
  return new WebhookProcessor(options);
}
