import { createEvent, type WebhookEvent } from "rest-webhooks/webhooks/delivery";
import { type OrderJson, userJson } from "./representations";
import type { OrderRecord, UserRecord } from "./storage/types";

/** Every event type the shop publishes. */
export const SHOP_EVENT_TYPES = [
  "user.created",
  "user.updated",
  "order.created",
  "order.updated",
  "order.shipped",
  "order.cancelled",
  "order.deleted",
] as const;

/** An event type the shop publishes. */
export type ShopEventType = (typeof SHOP_EVENT_TYPES)[number];

/** A user event; the data is the user as the API shows it. */
export function userEvent(type: "user.created" | "user.updated", user: UserRecord, now: number): WebhookEvent {
  return createEvent({ type, data: userJson(user), now });
}

/**
 * An order event; the data is the order as the API shows it (`orderJson`): the value the response sends, built
 * once (`createEvent` keeps its own copy).
 */
export function orderEvent(type: ShopEventType, order: OrderJson, now: number): WebhookEvent {
  return createEvent({ type, data: order, now });
}

/**
 * The one event an order change publishes: the most specific type, so a subscriber to `order.shipped` is not
 * also sent an `order.updated` for the same change.
 */
export function orderChangeType(before: OrderRecord, after: OrderRecord): ShopEventType {
  if (before.status !== after.status && after.status === "shipped") return "order.shipped";
  if (before.status !== after.status && after.status === "cancelled") return "order.cancelled";
  return "order.updated";
}
