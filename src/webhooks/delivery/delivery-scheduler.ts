import { type AttemptResult, isEndpointAnswer } from "./attempt";
import type { ClaimOptions } from "./delivery-queue";

/** The shape of a worker's capacity: slots for attempts, and what one endpoint may take of them. */
export interface SchedulerConfig {
  /** Attempts in flight at once, over all endpoints. */
  readonly concurrency: number;
  /** The most one endpoint may have claimed at once: where its additive increase stops. */
  readonly endpointConcurrency: number;
  /** Claims held beyond the slots, checked and waiting, so a freed slot is used at once (pipelining). */
  readonly lookahead: number;
  /** With work in flight, claims wait until this many can be taken in one go. */
  readonly batch: number;
}

/**
 * How an attempt ended for its endpoint's share: answered 2xx, answered otherwise, not answered at all (a time-out,
 * a refused or reset connection), or `withheld`: a failure of ours that says nothing of the endpoint (our URL policy
 * refused the URL, the request could not be built or signed, our egress proxy failed: see isEndpointAnswer), so its
 * cap stays as it was.
 */
export type AttemptVerdict = "success" | "refused" | "unreachable" | "withheld";

/** The verdict on an attempt's result. */
export function verdictOf(result: AttemptResult): AttemptVerdict {
  if (!isEndpointAnswer(result)) return "withheld";
  if (result.kind === "error") return result.status === undefined ? "unreachable" : "refused";
  return result.status >= 200 && result.status < 300 ? "success" : "refused";
}

// One endpoint's share: its deliveries this worker holds and sends, and how many it may send at once (AIMD).
interface Share {
  held: number;
  sending: number;
  /** Held deliveries whose attempt is over and whose outcome is being stored. */
  storing: number;
  cap: number;
  /** When it was last finished with (a counter), for forgetting the longest idle. */
  used: number;
}

// An endpoint may have as many deliveries claimed and waiting as in flight: the next one is ready when a slot frees.
const holdLimit = (share: Share) => 2 * share.cap;

// What a share's held deliveries count against its room: those whose outcome is being stored count only past one cap's
// worth (see DeliveryScheduler.storing).
const occupying = (share: Share) => share.held - Math.min(share.storing, share.cap);

/** The claim to make now: how many, and the room each endpoint has. */
export type ClaimRequest = Pick<ClaimOptions, "limit" | "perEndpoint" | "endpointLimits">;

// Endpoint shares kept with nothing held, at most (the least recently used are forgotten first).
const REMEMBERED = 1_024;

/**
 * The delivery worker's scheduling policy, as plain state and decisions (no I/O, no timers):
 * - **Slots.** At most `concurrency` attempts are in flight; a delivery waiting for its endpoint or for a slot holds
 *   a claim, never a slot.
 * - **Per-endpoint caps, AIMD.** An endpoint starts with a cap of 1 (slow start) and gains 1 per success up to
 *   `endpointConcurrency`; an attempt answered with a failure halves its cap and an unanswered one (time-out,
 *   refused connection) cuts it to 1. So an endpoint that stopped answering costs one slot, not `endpointConcurrency`.
 *   Besides those in flight, an endpoint may have as many claimed and waiting (for its turn, without a slot).
 * - **Outcomes being stored hold nothing back.** A delivery whose attempt is over and whose outcome is being written
 *   leaves room for the next claim, up to `concurrency` of them (one cap's worth per endpoint).
 * - **A look-ahead that covers the claim's round trip.** It starts at the configured one and grows by a batch, up to
 *   `concurrency`, after each claim during which a slot went idle for want of a delivery; it shrinks by one after
 *   each claim that left none idle.
 * - **Fair claims.** Claims ask the queue for each endpoint's room only, and the queue serves endpoints in turn; an
 *   endpoint at its cap is skipped, so its deliveries wait in the queue and not in this worker.
 */
export class DeliveryScheduler {
  readonly #config: SchedulerConfig;
  readonly #shares = new Map<string, Share>();
  #held = 0;
  #sending = 0;
  #storing = 0;
  // The look-ahead in use: the configured one, grown up to `concurrency` while claims leave slots with nothing to send
  // (a durable queue's claim takes a round trip), shrunk again when they stop doing so (see claimed).
  #ahead: number;
  #claiming = 0;
  #starved = false;
  // Deliveries finished since the last claim: claiming again waits for a batch of them (or for news: see wantsClaim).
  #freed = 0;
  // An endpoint finished a delivery and has none left waiting: its line ran dry, so claim without waiting for a batch.
  #dry = false;
  #uses = 0;

  constructor(config: SchedulerConfig) {
    this.#config = config;
    this.#ahead = config.lookahead;
  }

  /** The look-ahead in use (tests, metrics). */
  get lookahead(): number {
    return this.#ahead;
  }

  /** Deliveries claimed and not finished. */
  get held(): number {
    return this.#held;
  }

  /** Attempts in flight. */
  get sending(): number {
    return this.#sending;
  }

  /** The endpoint's current cap (tests, metrics). */
  capOf(endpointId: string): number {
    return this.#shares.get(endpointId)?.cap ?? 1;
  }

  /**
   * Whether a claim is worth making. On news (a publish, a timer, an idle worker) any room is, and so it is when an
   * endpoint's line ran dry (it finished a delivery and has none waiting: it would idle, whatever other endpoints hold);
   * otherwise, with work in flight, only once a batch has finished and there is room for it: a claim per finished
   * delivery would cost a query per delivery when endpoints have a slot or two free each.
   */
  wantsClaim(news: boolean): boolean {
    const { batch } = this.#config;
    const room = this.#room();
    if (room < 1) return false;
    return news || this.#dry || this.#held === 0 || (this.#freed >= batch && room >= batch);
  }

  /** What to claim now (when there is any room at all). */
  claimRequest(): ClaimRequest | undefined {
    const limit = this.#room();
    if (limit < 1) return undefined;
    this.#claiming++;
    this.#freed = 0;
    this.#dry = false;
    // Endpoints not listed are unknown to this worker: they start slowly, one at a time.
    const endpointLimits = new Map<string, number>();
    for (const [id, share] of this.#shares) {
      const room = Math.max(0, holdLimit(share) - occupying(share));
      if (room !== 1) endpointLimits.set(id, room);
    }
    return { limit, perEndpoint: 1, endpointLimits };
  }

  /** A claimed delivery arrives: `true` when its endpoint has room (it is held from now on), else hand it back. */
  hold(endpointId: string): boolean {
    const share = this.#shareOf(endpointId);
    if (occupying(share) >= holdLimit(share)) return false;
    share.held++;
    this.#held++;
    return true;
  }

  /** Takes one of a held delivery's endpoint's sending places if one is free (under its cap). */
  takeEndpointSlot(endpointId: string): boolean {
    const share = this.#shares.get(endpointId);
    if (share === undefined || share.sending >= share.cap) return false;
    share.sending++;
    return true;
  }

  /** Gives an endpoint's sending place back. */
  freeEndpointSlot(endpointId: string): void {
    const share = this.#shares.get(endpointId);
    if (share !== undefined) share.sending--;
  }

  /** Takes an attempt slot if one is free. */
  takeSlot(): boolean {
    if (this.#sending >= this.#config.concurrency) return false;
    this.#sending++;
    return true;
  }

  /** Gives an attempt slot back (its attempt ended, or it was never used) with no held delivery waiting for it. */
  freeSlot(): void {
    this.#sending--;
    if (this.#claiming > 0) this.#starved = true;
  }

  /**
   * A claim asked for by {@link claimRequest} came back (or failed). When a slot went idle while claims were out, the
   * look-ahead grows by a batch, up to `concurrency`; otherwise it shrinks by one, down to the configured one. A claim
   * from memory takes microseconds and never leaves a slot idle; one from PostgreSQL takes a round trip, during which
   * a look-ahead of `max(8, concurrency / 4)` ran out (bench/delivery, postgres queue vs graphile-worker).
   */
  claimed(): void {
    this.#claiming = Math.max(0, this.#claiming - 1);
    if (this.#claiming > 0) return;
    const { lookahead, concurrency, batch } = this.#config;
    this.#ahead = this.#starved
      ? Math.min(Math.max(lookahead, concurrency), this.#ahead + batch)
      : Math.max(lookahead, this.#ahead - 1);
    this.#starved = false;
  }

  /**
   * A held delivery's attempt is over and its outcome is being stored: its verdict adjusts the endpoint's cap now, and
   * it stops counting against the worker's and its endpoint's room, up to `concurrency` (one endpoint's cap) of them. A
   * durable queue takes a round trip and a commit to store an outcome; counted as held, the deliveries waiting for it
   * left no room to claim the next ones (bench/delivery, postgres queue vs graphile-worker). Past that many, a store
   * that falls behind holds claims back again.
   */
  storing(endpointId: string, verdict: AttemptVerdict): void {
    const share = this.#shares.get(endpointId);
    if (share === undefined) return;
    share.storing++;
    this.#storing++;
    this.#left(share);
    this.#judge(share, verdict);
  }

  /** A held delivery is finished: stored (after {@link storing}), or handed back without an attempt. */
  finish(endpointId: string, stored = false): void {
    const share = this.#shares.get(endpointId);
    if (share === undefined) return;
    share.held--;
    this.#held--;
    if (stored) {
      share.storing--;
      this.#storing--;
    } else {
      this.#left(share);
    }
    share.used = ++this.#uses;
    if (this.#shares.size > REMEMBERED) this.#forget();
  }

  // A delivery left its endpoint's line (its attempt is over, or it went back unsent): it counts toward the next batch,
  // and an endpoint with nothing left waiting ran dry (see wantsClaim).
  #left(share: Share): void {
    this.#freed++;
    if (share.held - share.storing === share.sending) this.#dry = true;
  }

  // AIMD on an attempt's verdict.
  #judge(share: Share, verdict: AttemptVerdict): void {
    if (verdict === "success") share.cap = Math.min(this.#config.endpointConcurrency, share.cap + 1);
    else if (verdict === "refused") share.cap = Math.max(1, Math.floor(share.cap / 2));
    else if (verdict === "unreachable") share.cap = 1;
  }

  // Claims the worker may still take: the slots and the look-ahead, less what it holds (see storing).
  #room(): number {
    const { concurrency } = this.#config;
    return concurrency + this.#ahead - (this.#held - Math.min(this.#storing, concurrency));
  }

  #shareOf(endpointId: string): Share {
    let share = this.#shares.get(endpointId);
    if (share === undefined) {
      share = { held: 0, sending: 0, storing: 0, cap: 1, used: 0 };
      this.#shares.set(endpointId, share);
    }
    return share;
  }

  // A forgotten endpoint starts slowly again, which costs it a few round trips; one holding claims is never forgotten.
  // The longest idle half goes, so this runs once per REMEMBERED / 2 new endpoints.
  #forget(): void {
    const idle = [...this.#shares].filter(([, share]) => share.held === 0).sort((a, b) => a[1].used - b[1].used);
    for (const [id] of idle.slice(0, this.#shares.size - REMEMBERED / 2)) this.#shares.delete(id);
  }
}
