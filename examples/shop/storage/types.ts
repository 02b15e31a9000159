import type { HttpRequest } from "rest-webhooks/http";
import type { IdempotencyStore } from "rest-webhooks/idempotency";
import type { Middleware } from "rest-webhooks/routing";
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

/**
 * A stored order. `seq` is unique and grows with every insert, across users: the total order both lists page
 * through (keyset pagination), so a page boundary never moves when orders are created or deleted.
 */
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

/** A page request of {@link ShopReads.listOrders} and {@link ShopStorage.listAllOrders}: after `afterSeq`, oldest first. */
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
  /**
   * Places a new order for an existing user: inserts it (the storage assigns `seq`) and records that the user's order
   * list changed at its `createdAt`, in one step (one statement on PostgreSQL). `undefined`, and nothing written, when
   * the user does not exist.
   */
  placeOrder(order: Omit<OrderRecord, "seq">): Promise<OrderRecord | undefined>;
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
  /** Every user's orders (an admin's `GET /orders`), by `seq` like {@link ShopReads.listOrders}. */
  listAllOrders(query: OrderQuery): Promise<OrderRecord[]>;
  /** When any user's order list last changed (the latest `ordersChangedAt`), or `undefined` without users. */
  lastOrderChange(): Promise<number | undefined>;
  /**
   * Runs `work` atomically: its writes and published events commit together or not at all. Given the request, `work`
   * joins the request's own transaction when one is open (see {@link requestScope}), so it commits with the
   * request's idempotency record.
   */
  transaction<T>(work: (tx: ShopTransaction) => Promise<T>, request?: HttpRequest): Promise<T>;
  /**
   * Middleware that runs each write request in one transaction shared by its idempotency record, its writes and its
   * events (PostgreSQL: exactly once across crashes); in memory, where a crash loses everything anyway, nothing.
   * @param onCommit called once a request's transaction committed.
   */
  requestScope(onCommit: () => void): Middleware;
  /** The idempotency store of a request: on PostgreSQL, on the request's transaction. */
  idempotency(request: HttpRequest): IdempotencyStore;
  readonly endpoints: EndpointStore;
  readonly queue: DeliveryQueue;
  close(): Promise<void>;
}
