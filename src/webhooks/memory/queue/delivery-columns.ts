import { DELIVERY_ERROR_KINDS, type DeliveryErrorKind } from "../../delivery/attempt";
import type { DeliveryState, DeliveryStatus } from "../../delivery/state-machine";

const STATUSES: readonly (DeliveryStatus | undefined)[] = [undefined, "pending", "failed", "delivered", "exhausted"];
const STATUS_CODE: Record<DeliveryStatus, number> = { pending: 1, failed: 2, delivered: 3, exhausted: 4 };
const KIND_CODE = new Map<DeliveryErrorKind, number>(DELIVERY_ERROR_KINDS.map((kind, i) => [kind, i + 1]));

const toNullable = (value: number): number | null => (Number.isNaN(value) ? null : value);

function grown<T extends Float64Array | Int32Array | Uint32Array | Int16Array | Uint8Array>(
  array: T,
  capacity: number,
): T {
  const out = new (array.constructor as new (n: number) => T)(capacity);
  out.set(array);
  return out;
}

/**
 * The state of every delivery as parallel typed arrays indexed by slot: about 70 bytes a delivery, no object per
 * delivery for the garbage collector to trace. Times are epoch ms (NaN for null). Internal.
 */
export class DeliveryColumns {
  capacity = 0;
  /** 0 = free slot. */
  status = new Uint8Array(0);
  /** Bumped when a slot is reused, so old ids stop resolving. */
  generation = new Uint32Array(0);
  eventSlot = new Int32Array(0);
  endpointIndex = new Int32Array(0);
  attempts = new Int32Array(0);
  /** -1 = null. */
  lastStatus = new Int16Array(0);
  /** 0 = null, else 1 + index in DELIVERY_ERROR_KINDS. */
  lastErrorKind = new Uint8Array(0);
  nextAttemptAt = new Float64Array(0);
  lastAttemptAt = new Float64Array(0);
  deliveredAt = new Float64Array(0);
  leaseUntil = new Float64Array(0);
  /** 0 = not leased. */
  leaseToken = new Uint32Array(0);
  /** Epoch ms when the delivery became terminal (delivered or exhausted); NaN while scheduled. */
  terminalAt = new Float64Array(0);

  ensure(slot: number): void {
    if (slot < this.capacity) return;
    const capacity = Math.max(1024, this.capacity * 2, slot + 1);
    this.status = grown(this.status, capacity);
    this.generation = grown(this.generation, capacity);
    this.eventSlot = grown(this.eventSlot, capacity);
    this.endpointIndex = grown(this.endpointIndex, capacity);
    this.attempts = grown(this.attempts, capacity);
    this.lastStatus = grown(this.lastStatus, capacity);
    this.lastErrorKind = grown(this.lastErrorKind, capacity);
    this.nextAttemptAt = grown(this.nextAttemptAt, capacity);
    this.lastAttemptAt = grown(this.lastAttemptAt, capacity);
    this.deliveredAt = grown(this.deliveredAt, capacity);
    this.leaseUntil = grown(this.leaseUntil, capacity);
    this.leaseToken = grown(this.leaseToken, capacity);
    this.terminalAt = grown(this.terminalAt, capacity);
    this.capacity = capacity;
  }

  write(slot: number, state: DeliveryState): void {
    this.status[slot] = STATUS_CODE[state.status];
    this.attempts[slot] = state.attempts;
    this.lastStatus[slot] = state.lastStatus ?? -1;
    this.lastErrorKind[slot] = state.lastErrorKind === null ? 0 : (KIND_CODE.get(state.lastErrorKind) ?? 0);
    this.nextAttemptAt[slot] = state.nextAttemptAt ?? Number.NaN;
    this.lastAttemptAt[slot] = state.lastAttemptAt ?? Number.NaN;
    this.deliveredAt[slot] = state.deliveredAt ?? Number.NaN;
  }

  read(slot: number): DeliveryState {
    const status = this.status[slot] as number;
    const lastStatus = this.lastStatus[slot] as number;
    const kind = this.lastErrorKind[slot] as number;
    return {
      status: STATUSES[status] as DeliveryStatus,
      attempts: this.attempts[slot] as number,
      nextAttemptAt: toNullable(this.nextAttemptAt[slot] as number),
      lastAttemptAt: toNullable(this.lastAttemptAt[slot] as number),
      lastStatus: lastStatus < 0 ? null : lastStatus,
      lastErrorKind: kind === 0 ? null : (DELIVERY_ERROR_KINDS[kind - 1] as DeliveryErrorKind),
      deliveredAt: toNullable(this.deliveredAt[slot] as number),
    };
  }

  statusOf(slot: number): DeliveryStatus | undefined {
    return STATUSES[this.status[slot] as number];
  }
}
