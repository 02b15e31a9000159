import type { Handler, HttpRequest } from "rest-webhooks/http";
import { HttpProblem } from "rest-webhooks/http";
import { createWebhookConsumer, createWebhookProcessor, matchesEventPattern } from "rest-webhooks/webhooks/consumer";
import { createMemoryInbox } from "rest-webhooks/webhooks/consumer/memory";
import { type ProcessorRunner, startWebhookProcessor } from "rest-webhooks/webhooks/consumer/node";
import { verify } from "rest-webhooks/webhooks/signing";

/** Configuration of the example consumer. */
export interface ConsumerConfig {
  /** The endpoint's `whsec_` signing secret, as the shop showed it on registration. */
  secret: string;
  /** Answer 503 to the first N verified deliveries of each event (to show the provider's retries). @default 0 */
  failFirst?: number;
  /** Which event types `failFirst` applies to (`*`, `order.*`, `order.shipped`). @default "*" */
  failTypes?: string;
  /** Where log lines go. @default console.log */
  log?: (line: string) => void;
  /** The clock, epoch ms. @default Date.now */
  now?: () => number;
  /** Run the processor loop in the background; tests turn it off and call `drain()`. @default true */
  background?: boolean;
}

/** An event the consumer's business logic handled, once. */
export interface ProcessedEvent {
  id: string;
  type: string;
  /** The order or user id the event is about. */
  subject: string | undefined;
  processedAt: number;
}

/** The running consumer: its handler, what it processed, and how to stop it. */
export interface ConsumerApp {
  readonly handler: Handler;
  /** Every event processed, in order, each exactly once. */
  readonly processed: readonly ProcessedEvent[];
  /** Processes until the inbox has nothing due (tests, with `background: false`). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

function subjectOf(payload: unknown): string | undefined {
  const data = (payload as { data?: { id?: unknown } } | null)?.data;
  return typeof data?.id === "string" ? data.id : undefined;
}

/**
 * The example consumer: the library's consumer handler verifies each delivery with the secret and stores it in
 * an inbox (answering 202 at once); a processor takes events from the inbox and runs the business logic once per
 * event id, logging what it did. `failFirst` makes the first deliveries of each event fail with 503, so the
 * provider's backoff can be watched.
 * @example const app = createConsumerApp({ secret: process.env.WEBHOOK_SECRET! });
 */
export function createConsumerApp(config: ConsumerConfig): ConsumerApp {
  const log = config.log ?? ((line: string) => console.log(line));
  const now = config.now ?? Date.now;
  const failFirst = config.failFirst ?? 0;
  const failTypes = config.failTypes ?? "*";
  const inbox = createMemoryInbox();
  const processed: ProcessedEvent[] = [];
  const done = new Set<string>();
  const processor = createWebhookProcessor({ inbox, now });
  processor.on("*", async ({ event }) => {
    // Idempotent effects: an event id already handled (a redelivery after a crash) changes nothing.
    if (done.has(event.id)) return;
    done.add(event.id);
    const entry = { id: event.id, type: event.type, subject: subjectOf(event.payload), processedAt: now() };
    processed.push(entry);
    log(`processed ${entry.type} ${entry.subject ?? ""} (event ${entry.id})`);
  });
  let runner: ProcessorRunner | undefined;
  const consumer = createWebhookConsumer({
    inbox,
    secrets: config.secret,
    now,
    onStored: (event) => {
      log(`accepted ${event.type} (event ${event.id}): 202, queued for processing`);
      runner?.wake();
    },
  });
  if (config.background !== false) runner = startWebhookProcessor(processor, { idleMs: 200 });

  const attempts = new Map<string, { count: number; first: number }>();
  const handler: Handler = async (request: HttpRequest) => {
    const checked = verify({ body: request.body, headers: request.headers, secrets: config.secret, now });
    if (!checked.ok) {
      log(`refused a delivery: ${checked.error.code} (400, nothing stored)`);
    } else {
      const type = (checked.payload as { type?: unknown } | null)?.type;
      // Standard Webhooks always sends webhook-id; other schemes may not, and then every delivery is a first.
      const deliveryId = checked.id ?? "";
      const seen = attempts.get(deliveryId) ?? { count: 0, first: now() };
      seen.count++;
      if (checked.id !== undefined) attempts.set(deliveryId, seen);
      const after = seen.count === 1 ? "" : ` (+${((now() - seen.first) / 1000).toFixed(1)} s after the first)`;
      if (typeof type === "string" && matchesEventPattern(failTypes, type) && seen.count <= failFirst) {
        log(`delivery ${seen.count} of ${type}${after}: answering 503 on purpose`);
        return new HttpProblem({
          status: 503,
          code: "simulated_outage",
          detail: "The example consumer fails this delivery on purpose.",
        }).toResponse();
      }
      if (seen.count > 1) log(`delivery ${seen.count} of ${String(type)}${after}: accepting`);
    }
    return consumer(request);
  };

  return {
    handler,
    processed,
    async drain() {
      for (;;) {
        const report = await processor.processDue();
        if (report.claimed === 0) return;
      }
    },
    async close() {
      await runner?.stop();
    },
  };
}
