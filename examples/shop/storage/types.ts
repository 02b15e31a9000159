import type { IdempotencyStore } from "rest-webhooks/idempotency";
import type { DeliveryQueue, EndpointStore, WebhookEvent } from "rest-webhooks/webhooks/delivery";
import type { OrderStatus } from "../order-status";

/** A stored user. `version` grows by one with every change: it is the strong ETag. */
export interface UserRecord {
  readonly id: string;
  readonly name: string;
  readonly tier: string;
  readonly version: number;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When one of the user's orders last changed (created, updated or deleted): the list's Last-Modified. */
  readonly ordersChangedAt: number;
}

/** One line of an order. */
export interface OrderLine {
  readonly sku: string;
  readonly quantity: number;
  readonly unit_price: number;
}

/** A stored order. `seq` orders a user's orders for cursor pagination. */
export interface OrderRecord {
  readonly id: string;
  readonly userId: string;
  readonly status: OrderStatus;
  readonly items: readonly OrderLine[];
  readonly total: number;
  readonly version: number;
  readonly seq: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A page request of {@link ShopReads.listOrders}: after `afterSeq`, oldest first. */
export interface OrderQuery {
  status?: OrderStatus | undefined;
  afterSeq?: number | undefined;
  limit: number;
}

/** Reads, outside or inside a transaction (inside, they lock the rows they return). */
export interface ShopReads {
  getUser(id: string): Promise<UserRecord | undefined>;
  getOrder(userId: string, orderId: string): Promise<OrderRecord | undefined>;
  listOrders(userId: string, query: OrderQuery): Promise<OrderRecord[]>;
}

/** What a transaction can do: read (locking), write, and publish events that commit with the writes. */
export interface ShopTransaction extends ShopReads {
  putUser(user: UserRecord): Promise<void>;
  /** Inserts a new order; the storage assigns `seq`. */
  insertOrder(order: Omit<OrderRecord, "seq">): Promise<OrderRecord>;
  updateOrder(order: OrderRecord): Promise<void>;
  deleteOrder(userId: string, orderId: string): Promise<void>;
  /** Records that the user's order list changed at `at` (epoch ms). */
  touchOrders(userId: string, at: number): Promise<void>;
  /** Queues the event's deliveries in this transaction (the transactional outbox). */
  publish(event: WebhookEvent): Promise<void>;
}

/**
 * Where the shop keeps everything: users and orders, idempotency keys, webhook endpoints and the delivery
 * queue. Implementations: {@link createMemoryStorage} and {@link createPostgresStorage}; one test suite runs
 * the whole shop on each.
 */
export interface ShopStorage extends ShopReads {
  readonly kind: "memory" | "postgres";
  /** Runs `work` atomically: its writes and published events commit together or not at all. */
  transaction<T>(work: (tx: ShopTransaction) => Promise<T>): Promise<T>;
  readonly idempotency: IdempotencyStore;
  readonly endpoints: EndpointStore;
  readonly queue: DeliveryQueue;
  close(): Promise<void>;
}
