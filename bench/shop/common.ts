// What the hand-written contenders share, so that each does the observable work the shop does: the same token
// check (jose, HS256, key imported once), the user looked up (404 if missing), the body validated with the shop's
// own zod schema, the total computed, the order stored in a Map, the user's list marked changed (its
// Last-Modified), and an `order.created` event {id, type, timestamp, data} queued on an in-memory outbox that a
// no-op worker drains. The comparison then measures the framework around that work.
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import fresh from "fresh";
import { jwtVerify } from "jose";
import { importHmacKey } from "../../examples/shop/auth";
import { randomId } from "../../examples/shop/context";
import { OrderCreate } from "../../examples/shop/schemas";
import { settledLastModified } from "../../src/caching";

// Ids of the shop's shape (a prefix and 96 random bits): the same path and body lengths as the shop's.
export const USER_ID = randomId("usr");
export const ORDER_ID = randomId("ord");

export interface Order {
  id: string;
  userId: string;
  status: string;
  items: { sku: string; quantity: number; unit_price: number }[];
  total: number;
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** A queued webhook event: the envelope the shop's `createEvent` builds. */
export interface OutboxEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** A token check returning the subject and admin flag, or undefined. */
export function tokenVerifier(secret: string) {
  // The same key handling as the shop: imported once.
  const key = importHmacKey(secret);
  return async (header: string | undefined): Promise<{ sub: string; admin: boolean } | undefined> => {
    if (header === undefined || !header.startsWith("Bearer ")) return undefined;
    try {
      const { payload } = await jwtVerify(header.slice(7), await key, { algorithms: ["HS256"] });
      if (typeof payload.sub !== "string") return undefined;
      const scope = typeof payload.scope === "string" ? payload.scope.split(" ") : [];
      return { sub: payload.sub, admin: scope.includes("admin") };
    } catch {
      return undefined;
    }
  };
}

/** The order as JSON, the same fields and order as the shop's. */
export function orderJson(order: Order) {
  return {
    id: order.id,
    user_id: order.userId,
    status: order.status,
    items: order.items,
    total: order.total,
    created_at: new Date(order.createdAt).toISOString(),
    updated_at: new Date(order.updatedAt).toISOString(),
  };
}

/** The outcome of {@link OrderStore.create}: the order, or the user was not found. */
export type Created = { ok: true; order: Order } | { ok: false };

/** An in-memory shop: one user with one order, and an outbox of events. */
export interface OrderStore {
  get(userId: string, orderId: string): Order | undefined;
  /** Stores a new order for an existing user, marks the user's list changed and queues `order.created`. */
  create(userId: string, items: Order["items"]): Created;
  /** Events queued so far (the worker empties it). */
  readonly outbox: OutboxEvent[];
  /** Events the worker has drained. */
  drained(): number;
}

/** An {@link OrderStore} seeded with one user and one order. */
export function orderStore(): OrderStore {
  const users = new Map<string, { ordersChangedAt: number }>();
  const orders = new Map<string, Order>();
  const now = Date.now();
  users.set(USER_ID, { ordersChangedAt: now });
  orders.set(ORDER_ID, {
    id: ORDER_ID,
    userId: USER_ID,
    status: "pending",
    items: [{ sku: "TEA-1", quantity: 2, unit_price: 450 }],
    total: 900,
    version: 1,
    createdAt: now,
    updatedAt: now,
  });
  const outbox: OutboxEvent[] = [];
  let drained = 0;
  let scheduled = false;
  // The no-op worker: takes everything queued once the current I/O is done, and does nothing with it.
  const drain = () => {
    scheduled = false;
    drained += outbox.splice(0).length;
  };
  return {
    outbox,
    drained: () => drained,
    get(userId, orderId) {
      const order = orders.get(orderId);
      return order?.userId === userId ? order : undefined;
    },
    create(userId, items) {
      const user = users.get(userId);
      if (user === undefined) return { ok: false };
      const at = Date.now();
      let total = 0;
      for (const item of items) total += item.quantity * item.unit_price;
      const order: Order = {
        // Random, as the shop's: ids from a counter would collide between instances of a stateless service.
        id: randomId("ord"),
        userId,
        status: "pending",
        items,
        total,
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      orders.set(order.id, order);
      user.ordersChangedAt = Math.max(user.ordersChangedAt, at);
      outbox.push({
        id: `evt_${randomUUID().replaceAll("-", "")}`,
        type: "order.created",
        timestamp: new Date(at).toISOString(),
        data: orderJson(order),
      });
      if (!scheduled) {
        scheduled = true;
        setImmediate(drain);
      }
      return { ok: true, order };
    },
  };
}

/**
 * What a 304 repeats of an order's {@link orderHeaders}: ETag and Cache-Control. RFC 9110 §15.4.5: no other
 * representation metadata unless it guides cache updates (Last-Modified beside a strong ETag does not), as the shop
 * answers.
 */
export function notModifiedHeaders(headers: Record<string, string>): Record<string, string> {
  return { etag: headers.etag as string, "cache-control": headers["cache-control"] as string };
}

/**
 * ETag, Cache-Control and, as the shop sends it, Last-Modified of an order: only once the second of its last change
 * is over (`settledLastModified`) at `now`. A 201 passes the instant of the write, as the shop's handler does, so
 * it never has one.
 */
export function orderHeaders(order: Order, now = Date.now()): Record<string, string> {
  const headers: Record<string, string> = { etag: `"${order.version}"`, "cache-control": "private, no-cache" };
  const lastModified = settledLastModified(order.updatedAt, now);
  if (lastModified !== undefined) headers["last-modified"] = lastModified;
  return headers;
}

/**
 * Whether a GET of an order with these {@link orderHeaders} is answered 304, decided with `fresh`, Express's own
 * `req.fresh` (RFC 9110 §13.1.2: a list of tags, `*` and weak comparison; §13.1.3: If-Modified-Since only without
 * If-None-Match). A string equality of If-None-Match and the ETag answers 200 where the RFC asks for 304, so it would
 * not be the shop's API. `fresh` is handed the two preconditions alone: it also answers 200 to any request with
 * `Cache-Control: no-cache` (an RFC 2616 "end-to-end reload"), which RFC 9111 §5.2.1.4 addresses to caches, not to
 * the origin, and which undici's `fetch` sends with every conditional request (the Fetch standard's cache mode).
 */
export function notModified(requestHeaders: IncomingHttpHeaders, headers: Record<string, string>): boolean {
  const noneMatch = requestHeaders["if-none-match"];
  const modifiedSince = requestHeaders["if-modified-since"];
  // Unconditional, as `fresh` would decide it first: no object built on the peers' 200.
  if (noneMatch === undefined && modifiedSince === undefined) return false;
  return fresh({ "if-none-match": noneMatch, "if-modified-since": modifiedSince }, headers);
}

/** Validates a create body with the shop's own schema. */
export const parseCreate = (value: unknown) => OrderCreate.safeParse(value);
