import type { ConsumerErrorRecord } from "../../consumer/errors";
import type { InboxEvent, InboxRecord, InboxState } from "../../consumer/event";
import type {
  Inbox,
  InboxAddResult,
  InboxClaim,
  InboxClaimRequest,
  InboxCompleteResult,
  InboxFailOutcome,
} from "../../consumer/inbox";

interface Entry {
  event: InboxEvent;
  state: InboxState;
  attempts: number;
  availableAt: number | undefined;
  lastError: ConsumerErrorRecord | undefined;
  doneAt: number | undefined;
  token: string | undefined;
  /** A handler is running it now: claims skip it even past its lease (like a row lock). */
  running: boolean;
}

function record(entry: Entry): InboxRecord {
  return {
    ...entry.event,
    state: entry.state,
    attempts: entry.attempts,
    availableAt: entry.availableAt,
    lastError: entry.lastError,
    doneAt: entry.doneAt,
  };
}

/**
 * The in-memory inbox (the embedded default): de-duplicates and schedules like the PostgreSQL one,
 * but lives and dies with the process — use it for tests, development, and consumers that can
 * afford to lose unprocessed events on a crash.
 */
export class MemoryInbox implements Inbox<object> {
  readonly #entries = new Map<string, Entry>();
  /** Entries not yet done or dead, in arrival order. */
  readonly #open = new Set<Entry>();
  readonly #dead = new Set<Entry>();
  #claims = 0;

  /** Events stored (done ones included, until purged). */
  get size(): number {
    return this.#entries.size;
  }

  async add(event: InboxEvent): Promise<InboxAddResult> {
    if (this.#entries.has(event.id)) return { duplicate: true };
    const entry: Entry = {
      event,
      state: "pending",
      attempts: 0,
      availableAt: event.receivedAt,
      lastError: undefined,
      doneAt: undefined,
      token: undefined,
      running: false,
    };
    this.#entries.set(event.id, entry);
    this.#open.add(entry);
    return { duplicate: false };
  }

  async claim(request: InboxClaimRequest): Promise<InboxClaim[]> {
    const due: Entry[] = [];
    for (const entry of this.#open) {
      if (!entry.running && (entry.availableAt ?? 0) <= request.now) due.push(entry);
    }
    due.sort((a, b) => (a.availableAt ?? 0) - (b.availableAt ?? 0));
    const claims: InboxClaim[] = [];
    for (const entry of due.slice(0, request.limit)) {
      entry.state = "processing";
      entry.attempts++;
      entry.availableAt = request.now + request.leaseMs;
      entry.token = `${request.owner}:${++this.#claims}`;
      claims.push({ event: entry.event, attempts: entry.attempts, token: entry.token });
    }
    return claims;
  }

  async complete(
    claim: InboxClaim,
    work: (context: object) => Promise<void>,
    now: number,
  ): Promise<InboxCompleteResult> {
    const entry = this.#held(claim);
    if (entry === undefined || entry.running) return { outcome: "lost" };
    entry.running = true;
    try {
      await work({});
    } catch (error) {
      return { outcome: "failed", error };
    } finally {
      entry.running = false;
    }
    entry.state = "done";
    entry.doneAt = now;
    entry.availableAt = undefined;
    entry.token = undefined;
    this.#open.delete(entry);
    return { outcome: "done" };
  }

  async fail(claim: InboxClaim, outcome: InboxFailOutcome, _now: number): Promise<boolean> {
    const entry = this.#held(claim);
    if (entry === undefined) return false;
    entry.lastError = outcome.error;
    entry.token = undefined;
    if ("dead" in outcome) {
      entry.state = "dead";
      entry.availableAt = undefined;
      this.#open.delete(entry);
      this.#dead.add(entry);
    } else {
      entry.state = "failed";
      entry.availableAt = outcome.retryAt;
    }
    return true;
  }

  async get(id: string): Promise<InboxRecord | undefined> {
    const entry = this.#entries.get(id);
    return entry === undefined ? undefined : record(entry);
  }

  async deadLetters(options: { limit?: number } = {}): Promise<InboxRecord[]> {
    return [...this.#dead].slice(0, options.limit ?? 100).map(record);
  }

  async retryDeadLetter(id: string, now: number): Promise<boolean> {
    const entry = this.#entries.get(id);
    if (entry?.state !== "dead") return false;
    entry.state = "pending";
    entry.attempts = 0;
    entry.availableAt = now;
    this.#dead.delete(entry);
    this.#open.add(entry);
    return true;
  }

  async purgeDone(before: number): Promise<number> {
    let purged = 0;
    for (const [id, entry] of this.#entries) {
      if (entry.state === "done" && (entry.doneAt ?? 0) < before) {
        this.#entries.delete(id);
        purged++;
      }
    }
    return purged;
  }

  #held(claim: InboxClaim): Entry | undefined {
    const entry = this.#entries.get(claim.event.id);
    return entry?.state === "processing" && entry.token === claim.token ? entry : undefined;
  }
}

/**
 * Creates an in-memory {@link Inbox}.
 * @example const inbox = createMemoryInbox();
 */
export function createMemoryInbox(): MemoryInbox {
  return new MemoryInbox();
}
