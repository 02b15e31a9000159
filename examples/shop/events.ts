import { defineEvents, type WebhookEvent } from "rest-webhooks/webhooks/delivery";
import { type OrderJson, userJson } from "./representations";
import { Order, User } from "./schemas";
import type { OrderRecord, UserRecord } from "./storage/types";

/**
 * The events the shop sends, each with the schema of its data (the resource as the API shows it): events are built
 * from it, `/v1/webhook_endpoints` refuses subscriptions to anything else, and `/openapi.json` lists them under
 * `webhooks`.
 */
export const shopEvents = defineEvents({
  "user.created": User,
  "user.updated": User,
  "order.created": Order,
  "order.updated": Order,
  "order.shipped": Order,
  "order.cancelled": Order,
  "order.deleted": Order,
});

/** Every event type the shop publishes. */
export const SHOP_EVENT_TYPES = shopEvents.types;

/** An event type the shop publishes. */
export type ShopEventType = (typeof SHOP_EVENT_TYPES)[number];

/** An order event type. */
export type OrderEventType = Exclude<ShopEventType, "user.created" | "user.updated">;

/** A user event; the data is the user as the API shows it. */
export function userEvent(type: "user.created" | "user.updated", user: UserRecord, now: number): WebhookEvent {
  return shopEvents.create(type, userJson(user), { now });
}

/**
 * An order event; the data is the order as the API shows it (`orderJson`): the value the response sends, built
 * once (the event keeps its own copy), checked against the catalog's `Order`.
 */
export function orderEvent(type: OrderEventType, order: OrderJson, now: number): WebhookEvent {
  return shopEvents.create(type, order, { now });
}

/**
 * The one event an order change publishes: the most specific type, so a subscriber to `order.shipped` is not
 * also sent an `order.updated` for the same change.
 */
export function orderChangeType(before: OrderRecord, after: OrderRecord): OrderEventType {
  if (before.status !== after.status && after.status === "shipped") return "order.shipped";
  if (before.status !== after.status && after.status === "cancelled") return "order.cancelled";
  return "order.updated";
}
