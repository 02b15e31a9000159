import fc from "fast-check";
import { type EventEnvelope, eventEnvelope } from "../arbitraries/webhooks";
import { createFaultyProvider, type DeliveryFault } from "../provider";
import type { Target } from "../target";
import { Transcript } from "../transcript";
import { LAW_NAMES } from "./names";

/**
 * What the consumer laws need to know about a webhook consumer. Processing must happen only inside
 * `settle()` (drive your processor from it), so the laws can tell acknowledgement from processing.
 */
export interface ConsumerSpec {
  /** The delivery path on the target, e.g. `/webhooks`. */
  path: string;
  /** The `whsec_…` secret the consumer verifies with. */
  secret: string;
  /** Ids of the events the consumer's business logic has run for, one entry per run. */
  processed(): readonly string[] | Promise<readonly string[]>;
  /** Runs the consumer's processing until everything acknowledged so far has been handled. */
  settle(): Promise<void>;
}

function count(ids: readonly string[], id: string): number {
  return ids.filter((x) => x === id).length;
}

/**
 * A run nonce drawn by fast-check, so a failing seed sends the same ids again. Never shrunk, never biased
 * towards small values: two laws (or two test files) on one consumer must not draw the same nonce.
 */
const runNonce = fc.noShrink(fc.noBias(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }))).map((n) => n.toString(36));

/**
 * Gives each property run its own event ids: the generated id, the run's nonce and the law's run number, plus
 * a counter when that id was already processed (the same law twice on one consumer with one seed). A consumer
 * keeps state across runs, and shrinking makes generated ids collide (the nonce is kept while shrinking), so
 * an id "already processed" in an earlier run must not leak into this one. Deterministic given the seed.
 */
function idSpace(consumer: ConsumerSpec) {
  let run = 0;
  return async (nonce: string, events: readonly EventEnvelope[]): Promise<Map<string, string>> => {
    const processed = new Set(await consumer.processed());
    const base = `${nonce}_${(++run).toString(36)}`;
    for (let clash = 0; ; clash++) {
      const suffix = clash === 0 ? base : `${base}_${clash}`;
      const ids = new Map(events.map((event) => [event.id, `${event.id}_${suffix}`]));
      if (![...ids.values()].some((id) => processed.has(id))) return ids;
    }
  };
}

function renamed<T extends EventEnvelope>(event: T, ids: Map<string, string>): T {
  return { ...event, id: ids.get(event.id) ?? event.id };
}

/** A delivery with a bad, expired, future or foreign signature answers 400 and is never processed. */
export function badSignaturesAreRejected(target: Target, consumer: ConsumerSpec) {
  const law = LAW_NAMES.badSignaturesAreRejected;
  const faults = fc.constantFrom<DeliveryFault>("bad-signature", "expired", "future", "unknown-secret");
  const freshIds = idSpace(consumer);
  return fc.asyncProperty(eventEnvelope(), faults, runNonce, async (generated, fault, nonce) => {
    const event = renamed(generated, await freshIds(nonce, [generated]));
    const t = new Transcript(target);
    const provider = createFaultyProvider({ target, path: consumer.path, secret: consumer.secret }, t);
    const response = await provider.deliver(event, fault);
    if (response.status !== 400)
      t.fail(law, `a delivery with fault "${fault}" answered ${response.status}, expected 400`);
    await consumer.settle();
    if (count(await consumer.processed(), event.id) > 0) t.fail(law, `the "${fault}" delivery was processed`);
  });
}

/** The same event delivered many times, interleaved, concurrently and out of order, is processed once. */
export function duplicatesAreProcessedOnce(target: Target, consumer: ConsumerSpec) {
  const law = LAW_NAMES.duplicatesAreProcessedOnce;
  // No `chain`: a flat plan (events with repeat counts, an ordering, a concurrency) shrinks well.
  const plan = fc.tuple(
    fc.array(fc.tuple(eventEnvelope(), fc.integer({ min: 1, max: 4 })), { minLength: 1, maxLength: 4 }),
    fc.array(fc.nat({ max: 64 }), { maxLength: 16 }),
    fc.integer({ min: 1, max: 4 }),
  );
  const freshIds = idSpace(consumer);
  return fc.asyncProperty(plan, runNonce, async ([planned, order, concurrency], nonce) => {
    const ids = await freshIds(
      nonce,
      planned.map(([event]) => event),
    );
    const events = planned.map(([event]) => renamed(event, ids));
    const deliveries = events
      .flatMap((event, i) => Array.from({ length: planned[i]?.[1] ?? 1 }, () => event))
      .map((event, i) => ({ event, rank: order[i] ?? 0 }))
      .sort((a, b) => a.rank - b.rank)
      .map(({ event }) => event);
    const t = new Transcript(target);
    const provider = createFaultyProvider({ target, path: consumer.path, secret: consumer.secret }, t);
    for (let batch = 0; batch * concurrency < deliveries.length; batch++) {
      const sent = deliveries.slice(batch * concurrency, (batch + 1) * concurrency);
      const answers = await Promise.all(sent.map((event) => provider.deliver(event)));
      for (const answer of answers) {
        if (answer.status < 200 || answer.status > 299) t.fail(law, `a valid delivery answered ${answer.status}`);
      }
      // Processing after every second batch, whatever the concurrency: later duplicates then arrive for events
      // already processed, not only for ones still waiting.
      if (batch % 2 === 1) await consumer.settle();
    }
    await consumer.settle();
    const processed = await consumer.processed();
    for (const event of events) {
      const n = count(processed, event.id);
      if (n !== 1) t.fail(law, `event ${event.id} was processed ${n} times`);
    }
  });
}

/** A valid delivery is acknowledged with a 2xx before any business logic runs for it. */
export function acknowledgesBeforeProcessing(target: Target, consumer: ConsumerSpec) {
  const law = LAW_NAMES.acknowledgesBeforeProcessing;
  const freshIds = idSpace(consumer);
  return fc.asyncProperty(eventEnvelope(), runNonce, async (generated, nonce) => {
    const event = renamed(generated, await freshIds(nonce, [generated]));
    const t = new Transcript(target);
    const provider = createFaultyProvider({ target, path: consumer.path, secret: consumer.secret }, t);
    const response = await provider.deliver(event);
    if (response.status < 200 || response.status > 299) t.fail(law, `a valid delivery answered ${response.status}`);
    if (count(await consumer.processed(), event.id) > 0) {
      t.fail(law, "the event was processed before the acknowledgement was sent");
    }
    await consumer.settle();
    if (count(await consumer.processed(), event.id) !== 1) t.fail(law, "the acknowledged event was not processed once");
  });
}
