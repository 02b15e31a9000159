import { untilAborted } from "../../../http/until-aborted";
import { utf8Length } from "../../../http/utf8-length";
import { nonNegativeInteger, positiveInteger } from "../../../options/number-option";
import { DueHeap, type DueItem } from "../../heap/due-heap";
import { type EndedLink, EndedOrder } from "../../heap/ended-order";
import { readPayload } from "../../signing/payload";
import { wholeMs } from "../../whole-ms";
import { type ConsumerErrorRecord, WebhookConsumerError } from "../errors";
import type { InboxEvent, InboxRecord, InboxState } from "../event";
import { InboxEventTooLargeError } from "../event-too-large";
import type {
  Inbox,
  InboxAddResult,
  InboxAddSource,
  InboxClaim,
  InboxClaimRequest,
  InboxCompleteOptions,
  InboxCompleteResult,
  InboxFailOutcome,
} from "../inbox";
import { checkInboxAdd, checkInboxClaim, checkInboxFail, checkInboxNow, checkInboxPurge } from "../inbox-arguments";
import { InboxFullError } from "../inbox-full";

/**
 * An event as the inbox keeps it; `due` and `heapIndex` are its place in the heap (written by the heap), `seq` its
 * arrival order (renewed when a dead letter is retried, while it is out of the heap): among events due together,
 * the first comes first.
 */
interface Entry extends DueItem, EndedLink<Entry> {
  /** The event; without its payload while {@link json} holds it. */
  event: InboxEvent;
  /** The body as received, a copy, when the payload is kept as its text (past `parsedBytes`); parsed when read. */
  json: Uint8Array | undefined;
  state: InboxState;
  /** When it is next due (epoch ms): the receive time, a retry time or a lease end; `undefined` when done or dead. */
  availableAt: number | undefined;
  attempts: number;
  lastError: ConsumerErrorRecord | undefined;
  token: string | undefined;
  /** A handler is running it now: out of the heap, so claims skip it even past its lease (like a row lock). */
  running: boolean;
  /** What `fail`s made while it runs wait on, woken once the run has settled (made only then: rare). */
  waiting: Array<() => void> | undefined;
  /** What it counts toward `maxBytes` (see {@link heldBytes}). */
  bytes: number;
}

/**
 * What an event counts toward `maxBytes`, in UTF-8 bytes: its body as received where the consumer passed it (the
 * JSON text), else the payload's bytes, or its text, or its JSON text; with its id and type. A parsed payload takes a
 * few times its text in the heap, so this is what a provider sent, not what the process holds.
 */
function heldBytes(event: InboxEvent, source: InboxAddSource | undefined): number {
  const { payload } = event;
  let body: number;
  if (source?.json !== undefined) body = source.json.byteLength;
  else if (payload instanceof Uint8Array) body = payload.byteLength;
  else if (typeof payload === "string") body = utf8Length(payload);
  else {
    try {
      const text = JSON.stringify(payload);
      body = text === undefined ? 0 : utf8Length(text);
    } catch {
      // A payload no JSON can hold (a cycle, a BigInt) added by hand: counted by its id and type alone.
      body = 0;
    }
  }
  return body + idBytes(event);
}

/** What a done event counts toward `maxBytes`: its id and type, all the inbox keeps of it. */
function idBytes(event: InboxEvent): number {
  return utf8Length(event.id) + utf8Length(event.type);
}

/**
 * The event with its payload, parsed again from the kept body when the inbox holds it as text; a `row_invalid` error
 * when those bytes are not JSON, which only an `add` by hand can cause (a `json` that is not its payload's text): the
 * memory inbox's kind of stored event it cannot read, handled as the PostgreSQL inbox handles a row it cannot decode.
 */
function eventOf(entry: Entry): InboxEvent | WebhookConsumerError {
  const { event, json } = entry;
  if (json === undefined) return event;
  // The reading `verify` made of the same bytes (src/webhooks/signing/payload.ts), so the same value: the consumer
  // passes a body only once that reading has succeeded.
  const read = readPayload(json, "json", undefined, event.scheme);
  if ("value" in read) return { ...event, payload: read.value };
  return new WebhookConsumerError(
    "row_invalid",
    `The inbox event ${JSON.stringify(event.id)} cannot be read: the body added with it is not JSON (${read.message}).`,
    { cause: read },
  );
}

/** The record `get` and `deadLetters` give; one whose body cannot be read has no payload and a `row_invalid` error. */
function record(entry: Entry): InboxRecord {
  const event = eventOf(entry);
  const unreadable = event instanceof WebhookConsumerError;
  return {
    ...(unreadable ? entry.event : event),
    state: entry.state,
    attempts: entry.attempts,
    availableAt: entry.availableAt,
    lastError: unreadable ? event.toRecord() : entry.lastError,
    // When it was done: its place in the done order (written only when it is done).
    doneAt: entry.state === "done" ? entry.endedAt : undefined,
  };
}

/** Wakes the `fail`s that waited for the entry's work, once it is settled: they find the claim done, or still held. */
function ranOut(entry: Entry): void {
  const waiting = entry.waiting;
  if (waiting === undefined) return;
  entry.waiting = undefined;
  for (const wake of waiting) wake();
}

/** Options of {@link createMemoryInbox}. */
export interface MemoryInboxOptions {
  /**
   * Most done events kept; past it the one done longest ago is dropped (its id no longer de-duplicates), so a
   * long-lived consumer's memory stays bounded however long the processor's `retainDoneMs`. A done event keeps its
   * id, type and state, not its payload (`get` answers it with `payload: undefined`). Events not yet done are never
   * dropped: they were acknowledged. @default 10_000
   */
  maxDone?: number;
  /**
   * Most bytes of events the inbox holds, done or not (in UTF-8: bodies as received, with ids and types; a done event
   * counts its id and type alone; see the docs). An event that would go past it first makes room by dropping done
   * events, the one done longest ago first; when events not yet done fill it, `add` throws {@link InboxFullError} and
   * the consumer answers `503` with `Retry-After`, so the provider delivers it again later. A processor that stalls
   * then costs retries, not the process: without a bound, a flood of acknowledged events would grow the heap until
   * the process died, taking every one of them with it. One event larger than the bound alone could never be taken:
   * `add` throws {@link InboxEventTooLargeError} for it, and the consumer answers `413` with no `Retry-After`; keep
   * the bound above the consumer's `bodyLimit` (1 MiB by default). `Infinity` for no bound.
   * @default 67_108_864 (64 MiB)
   */
  maxBytes?: number;
  /**
   * Most bytes of events not yet done whose payload the inbox keeps parsed, as a handler reads it (counted as
   * `maxBytes` counts). An event that arrives past it with its body as received (the consumer passes it for JSON)
   * keeps that body instead, copied, and is parsed again when claimed or read. A parsed payload takes a few times
   * its text in the heap, where the collector copies it out of the young generation and marks it again on every
   * major collection, while a kept body lies outside the heap; so a backlog (a processor stalled, slower than
   * deliveries, or none) costs about its bytes, while a processor that keeps up claims parsed payloads and parses
   * nothing twice. `0` keeps every such body as text; `Infinity` parses all.
   * @default 4_194_304 (4 MiB)
   */
  parsedBytes?: number;
}

/** The memory inbox's default `maxBytes`: 64 MiB of event bodies (see `parsedBytes` for what they take in the heap). */
const DEFAULT_MAX_BYTES = 64 * 2 ** 20;

/** The memory inbox's default `parsedBytes`: the first 4 MiB of a backlog stay parsed. */
const DEFAULT_PARSED_BYTES = 4 * 2 ** 20;

/**
 * The in-memory inbox (the embedded default): de-duplicates and schedules like the PostgreSQL one,
 * but lives and dies with the process — use it for tests, development, and consumers that can
 * afford to lose unprocessed events on a crash. A claim costs O(k log n) for k claimed events
 * out of n open ones (a heap by due time), whatever the backlog.
 */
export class MemoryInbox implements Inbox<object> {
  readonly #entries = new Map<string, Entry>();
  /** Entries not done, not dead and not running, by due time then arrival. */
  readonly #due = new DueHeap<Entry>();
  readonly #dead = new Set<Entry>();
  /** Done entries in the order they were done: the oldest is dropped first, and a purge visits these only. */
  readonly #done = new EndedOrder<Entry>();
  readonly #maxDone: number;
  readonly #maxBytes: number;
  readonly #parsedBytes: number;
  #bytes = 0;
  /** The part of {@link #bytes} held by done events, which may be dropped to make room. */
  #doneBytes = 0;
  #claims = 0;
  #seq = 0;

  constructor(options: MemoryInboxOptions = {}) {
    this.#maxDone = positiveInteger("createMemoryInbox", "maxDone", options.maxDone ?? 10_000);
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#maxBytes =
      maxBytes === Number.POSITIVE_INFINITY
        ? maxBytes
        : positiveInteger("createMemoryInbox", "maxBytes", maxBytes, "bytes");
    const parsedBytes = options.parsedBytes ?? DEFAULT_PARSED_BYTES;
    this.#parsedBytes =
      parsedBytes === Number.POSITIVE_INFINITY
        ? parsedBytes
        : nonNegativeInteger("createMemoryInbox", "parsedBytes", parsedBytes, "bytes");
  }

  /** Events stored: done ones included, until purged or dropped past `maxDone`. */
  get size(): number {
    return this.#entries.size;
  }

  /** What the stored events count toward `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Stores `event` unless its id is known; answers at once (no promise), as {@link Inbox.add} allows. Throws
   * {@link InboxFullError} when events not yet done leave no room for it under `maxBytes`, and
   * {@link InboxEventTooLargeError} when it alone is larger than `maxBytes`.
   */
  add(event: InboxEvent, source?: InboxAddSource): InboxAddResult {
    checkInboxAdd(event);
    if (this.#entries.has(event.id)) return { duplicate: true };
    // Whole milliseconds, as PostgreSQL's inbox keeps them (whole-ms.ts): due times and reads agree.
    if (!Number.isInteger(event.receivedAt)) event = { ...event, receivedAt: wholeMs(event.receivedAt) };
    const bytes = heldBytes(event, source);
    if (bytes > this.#maxBytes) {
      // No room the processor makes can ever take it: a 503 would ask for redeliveries, each refused alike, for ever.
      throw new InboxEventTooLargeError(
        `The event counts ${bytes} bytes (its body, id and type), more than the inbox can ever hold under maxBytes (${this.#maxBytes}): raise maxBytes above the consumer's bodyLimit.`,
        this.#maxBytes,
        bytes,
      );
    }
    if (this.#bytes + bytes > this.#maxBytes) this.#makeRoom(bytes);
    const body = source?.json;
    // Copied: the inbox owns what it keeps, and a view into a pooled buffer would keep the whole pool alive. An empty
    // body is not kept: read again it would be `undefined`, where the event holds `null` (as PostgreSQL keeps it).
    const json =
      body !== undefined && body.byteLength > 0 && this.#bytes - this.#doneBytes >= this.#parsedBytes
        ? new Uint8Array(body)
        : undefined;
    const entry: Entry = {
      event: json === undefined ? event : { ...event, payload: undefined },
      json,
      state: "pending",
      attempts: 0,
      availableAt: event.receivedAt,
      lastError: undefined,
      token: undefined,
      running: false,
      waiting: undefined,
      bytes,
      due: 0,
      seq: ++this.#seq,
      heapIndex: -1,
      endedAt: 0,
      older: undefined,
      newer: undefined,
    };
    this.#entries.set(event.id, entry);
    this.#bytes += bytes;
    this.#schedule(entry);
    return { duplicate: false };
  }

  /** Drops done events, oldest first, until `bytes` more fit; throws when only events not yet done are left. */
  #makeRoom(bytes: number): void {
    // Checked first, so a refused event costs no done event its de-duplication.
    if (this.#bytes - this.#doneBytes + bytes > this.#maxBytes) {
      throw new InboxFullError(
        `The inbox holds ${this.#bytes} bytes of events (${this.#bytes - this.#doneBytes} not yet done) and cannot take ${bytes} more under maxBytes (${this.#maxBytes}): events wait for the processor.`,
        this.#maxBytes,
      );
    }
    while (this.#bytes + bytes > this.#maxBytes) this.#forget(this.#done.oldest as Entry);
  }

  async claim(request: InboxClaimRequest): Promise<InboxClaim[]> {
    checkInboxClaim(request);
    // Take the due entries out first: with a zero lease a claimed entry would still be due.
    const taken: Entry[] = [];
    for (let top = this.#due.peek(); top !== undefined && taken.length < request.limit; top = this.#due.peek()) {
      if ((this.#due.peekDue() as number) > request.now) break;
      this.#due.delete(top);
      taken.push(top);
    }
    const claims: InboxClaim[] = [];
    const unreadable: WebhookConsumerError[] = [];
    for (const entry of taken) {
      const event = eventOf(entry);
      if (event instanceof WebhookConsumerError) {
        // Every claim would fail alike: a dead letter at once, told like every other dead letter.
        entry.state = "dead";
        entry.availableAt = undefined;
        entry.lastError = event.toRecord();
        this.#dead.add(entry);
        unreadable.push(event);
        continue;
      }
      entry.state = "processing";
      entry.attempts++;
      entry.availableAt = wholeMs(request.now + request.leaseMs);
      entry.token = `${request.owner}:${++this.#claims}`;
      this.#schedule(entry);
      claims.push({ event, attempts: entry.attempts, token: entry.token });
    }
    // Told once every taken entry is leased or dead: one that throws then fails the claim, and its events come back
    // at their leases' end, where a throw mid-loop left the rest out of the heap, pending and never due again.
    for (const error of unreadable) request.onInvalid?.(error);
    return claims;
  }

  async complete(
    claim: InboxClaim,
    work: (context: object) => Promise<void>,
    now: number,
    options: InboxCompleteOptions = {},
  ): Promise<InboxCompleteResult> {
    checkInboxNow("complete", now);
    const { signal } = options;
    // A second completion of a claim whose work runs waits for it, as the PostgreSQL row lock makes it wait: answered
    // `lost` at once, it left a claim whose work threw held with neither call applied.
    for (let held = this.#held(claim); held?.running && !signal?.aborted; held = this.#held(claim)) {
      await this.#settled(held, signal);
    }
    const entry = this.#held(claim);
    if (entry === undefined) return { outcome: "lost" };
    // An attempt whose time is already up runs nothing, as the PostgreSQL inbox's transaction never begins.
    if (signal?.aborted) return { outcome: "failed", error: signal.reason };
    entry.running = true;
    this.#due.delete(entry);
    try {
      // Abandoned at the signal: what the work does later marks nothing.
      await (signal === undefined ? work({}) : untilAborted(work({}), signal));
    } catch (error) {
      // Unfinished: claimable again once its lease expires (or when the processor settles it).
      entry.running = false;
      this.#schedule(entry);
      ranOut(entry);
      return { outcome: "failed", error };
    }
    entry.running = false;
    entry.state = "done";
    entry.availableAt = undefined;
    entry.token = undefined;
    // De-duplication needs the id alone; a handled payload kept until `maxDone` would hold up to 64 MiB of heap
    // the process never reads again, and at large bodies crowd out the done ids that `maxDone` promises to keep.
    if (entry.json === undefined) entry.event = { ...entry.event, payload: undefined };
    entry.json = undefined;
    this.#bytes -= entry.bytes;
    entry.bytes = idBytes(entry.event);
    this.#bytes += entry.bytes;
    this.#done.push(entry, wholeMs(now));
    this.#doneBytes += entry.bytes;
    if (this.#done.size > this.#maxDone) this.#forget(this.#done.oldest as Entry);
    ranOut(entry);
    return { outcome: "done" };
  }

  async fail(claim: InboxClaim, outcome: InboxFailOutcome, now: number): Promise<boolean> {
    checkInboxFail(outcome, now);
    // Settled once the claim's work has, as the PostgreSQL row lock makes a fail wait: applied at once, the work's end
    // then marked a dead letter done, or scheduled it again to be claimed and run a second time.
    for (let held = this.#held(claim); held?.running; held = this.#held(claim)) await this.#settled(held, undefined);
    const entry = this.#held(claim);
    if (entry === undefined) return false;
    entry.lastError = outcome.error;
    entry.token = undefined;
    if ("dead" in outcome) {
      entry.state = "dead";
      entry.availableAt = undefined;
      this.#due.delete(entry);
      this.#dead.add(entry);
    } else {
      entry.state = "failed";
      entry.availableAt = wholeMs(outcome.retryAt);
      this.#schedule(entry);
    }
    return true;
  }

  async get(id: string): Promise<InboxRecord | undefined> {
    const entry = this.#entries.get(id);
    return entry === undefined ? undefined : record(entry);
  }

  async deadLetters(options: { limit?: number } = {}): Promise<InboxRecord[]> {
    const limit = nonNegativeInteger("Inbox.deadLetters", "limit", options.limit ?? 100);
    return [...this.#dead].slice(0, limit).map(record);
  }

  async retryDeadLetter(id: string, now: number): Promise<boolean> {
    checkInboxNow("retryDeadLetter", now);
    const entry = this.#entries.get(id);
    if (entry?.state !== "dead") return false;
    entry.state = "pending";
    entry.attempts = 0;
    entry.availableAt = wholeMs(now);
    entry.seq = ++this.#seq;
    this.#dead.delete(entry);
    this.#schedule(entry);
    return true;
  }

  async purgeDone(before: number): Promise<number> {
    checkInboxPurge(before);
    let purged = 0;
    for (let entry = this.#done.oldest; entry !== undefined; ) {
      const newer = entry.newer;
      // Against `before` floored, as PostgreSQL's `timestampOf` floors it.
      if (entry.endedAt < wholeMs(before)) {
        this.#forget(entry);
        purged++;
      }
      entry = newer;
    }
    return purged;
  }

  /** Drops a done event (past `maxDone`, `maxBytes` or a purge): its id no longer de-duplicates. */
  #forget(entry: Entry): void {
    this.#done.delete(entry);
    this.#entries.delete(entry.event.id);
    this.#bytes -= entry.bytes;
    this.#doneBytes -= entry.bytes;
  }

  /** Resolves once the entry's running work has settled, or when `signal` aborts (its listener then taken off). */
  #settled(entry: Entry, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        resolve();
      };
      signal?.addEventListener("abort", done, { once: true });
      entry.waiting ??= [];
      entry.waiting.push(done);
    });
  }

  #schedule(entry: Entry): void {
    this.#due.set(entry, entry.availableAt ?? 0, entry.seq);
  }

  #held(claim: InboxClaim): Entry | undefined {
    const entry = this.#entries.get(claim.event.id);
    return entry?.state === "processing" && entry.token === claim.token ? entry : undefined;
  }
}

/**
 * Creates an in-memory {@link Inbox}: the embedded default, for tests, development and consumers
 * that may lose unprocessed events on a crash (use the PostgreSQL inbox otherwise).
 * @param options `maxDone`, the most done events kept (default 10,000); `maxBytes`, the most bytes of events held
 *   before `add` refuses with {@link InboxFullError} (default 64 MiB); `parsedBytes`, the bytes of waiting events
 *   kept parsed, past which their bodies are kept instead (default 4 MiB).
 * @returns a new, empty inbox.
 * @example
 * const inbox = createMemoryInbox();
 * const consumer = createWebhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET! });
 */
export function createMemoryInbox(options: MemoryInboxOptions = {}): MemoryInbox {
  return new MemoryInbox(options);
}
