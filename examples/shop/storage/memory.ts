import { MemoryIdempotencyStore } from "rest-webhooks/idempotency";
import { createMemoryDeliveryQueue, createMemoryEndpointStore, type WebhookEvent } from "rest-webhooks/webhooks";
import type { OrderQuery, OrderRecord, ShopReads, ShopStorage, ShopTransaction, UserRecord } from "./types";

/** The committed state. */
interface Tables {
  readonly users: Map<string, UserRecord>;
  readonly orders: Map<string, OrderRecord>;
  // Each user's orders by ascending seq, for pagination: a Map keeps insertion order, and set() on an
  // existing key keeps its place, so updates are O(1) and the order stays by seq.
  readonly byUser: Map<string, Map<string, OrderRecord>>;
  seq: number;
}

/** A change buffered by a transaction, applied in order when its work succeeds. */
type Write =
  | { readonly kind: "user"; readonly user: UserRecord }
  | { readonly kind: "order"; readonly order: OrderRecord }
  | { readonly kind: "delete"; readonly userId: string; readonly orderId: string }
  | { readonly kind: "touch"; readonly userId: string; readonly at: number };

// Reads and writes are prototype methods: a transaction allocates its two buffers, not a closure per operation.
// Buffered writes complete at once: they share one settled promise.
const DONE: Promise<void> = Promise.resolve();

class MemoryReads implements ShopReads {
  constructor(protected readonly tables: Tables) {}

  getUser(id: string): Promise<UserRecord | undefined> {
    return Promise.resolve(this.tables.users.get(id));
  }

  getOrder(userId: string, orderId: string): Promise<OrderRecord | undefined> {
    const order = this.tables.orders.get(orderId);
    return Promise.resolve(order?.userId === userId ? order : undefined);
  }

  listOrders(userId: string, query: OrderQuery): Promise<OrderRecord[]> {
    const out: OrderRecord[] = [];
    for (const order of this.tables.byUser.get(userId)?.values() ?? []) {
      if (out.length === query.limit) break;
      if (query.afterSeq !== undefined && order.seq <= query.afterSeq) continue;
      if (query.status !== undefined && order.status !== query.status) continue;
      out.push(order);
    }
    return Promise.resolve(out);
  }
}

class MemoryTransaction extends MemoryReads implements ShopTransaction {
  readonly writes: Write[] = [];
  readonly events: WebhookEvent[] = [];

  putUser(user: UserRecord): Promise<void> {
    this.writes.push({ kind: "user", user });
    return DONE;
  }

  insertOrder(order: Omit<OrderRecord, "seq">): Promise<OrderRecord> {
    const record: OrderRecord = { ...order, seq: ++this.tables.seq };
    this.writes.push({ kind: "order", order: record });
    return Promise.resolve(record);
  }

  updateOrder(order: OrderRecord): Promise<void> {
    this.writes.push({ kind: "order", order });
    return DONE;
  }

  deleteOrder(userId: string, orderId: string): Promise<void> {
    this.writes.push({ kind: "delete", userId, orderId });
    return DONE;
  }

  touchOrders(userId: string, at: number): Promise<void> {
    this.writes.push({ kind: "touch", userId, at });
    return DONE;
  }

  publish(event: WebhookEvent): Promise<void> {
    this.events.push(event);
    return DONE;
  }
}

function apply(tables: Tables, write: Write): void {
  switch (write.kind) {
    case "user":
      tables.users.set(write.user.id, write.user);
      return;
    case "order": {
      const { order } = write;
      tables.orders.set(order.id, order);
      let list = tables.byUser.get(order.userId);
      if (list === undefined) {
        list = new Map();
        tables.byUser.set(order.userId, list);
      }
      list.set(order.id, order);
      return;
    }
    case "delete":
      tables.orders.delete(write.orderId);
      tables.byUser.get(write.userId)?.delete(write.orderId);
      return;
    case "touch": {
      const user = tables.users.get(write.userId);
      if (user !== undefined && write.at > user.ordersChangedAt) {
        tables.users.set(write.userId, { ...user, ordersChangedAt: write.at });
      }
      return;
    }
  }
}

/**
 * The in-memory storage (the default): everything lives in maps and is lost on restart. Transactions run
 * one at a time; their writes and events are buffered and applied together when the work succeeds.
 */
export function createMemoryStorage(): ShopStorage {
  const tables: Tables = { users: new Map(), orders: new Map(), byUser: new Map(), seq: 0 };
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  // The transactions queued or running, and a promise that settles when the last of them has.
  let pending = 0;
  let lock: Promise<unknown> = DONE;
  const finished = () => {
    pending--;
  };

  async function run<T>(work: (tx: ShopTransaction) => Promise<T>): Promise<T> {
    const tx = new MemoryTransaction(tables);
    const result = await work(tx);
    for (const write of tx.writes) apply(tables, write);
    for (const event of tx.events) await queue.publish(event);
    return result;
  }

  const reads = new MemoryReads(tables);
  return {
    kind: "memory",
    getUser: (id) => reads.getUser(id),
    getOrder: (userId, orderId) => reads.getOrder(userId, orderId),
    listOrders: (userId, query) => reads.listOrders(userId, query),
    transaction(work) {
      // One transaction at a time: a read-check-write sequence never interleaves with another. When none is
      // pending, this one starts at once instead of a turn later.
      const next = pending === 0 ? run(work) : lock.then(() => run(work));
      pending++;
      lock = next.then(finished, finished);
      return next;
    },
    idempotency: new MemoryIdempotencyStore({ maxEntries: 100_000 }),
    endpoints,
    queue,
    async close() {},
  };
}
