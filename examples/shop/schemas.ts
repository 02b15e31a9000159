import { queryInteger } from "rest-webhooks/routing";
import { z } from "zod";
import { ORDER_STATUSES } from "./order-status";

// Amounts are integers in minor units (cents); bounds keep every total a safe integer.
const MAX_ITEMS = 100;

/** A user as clients send it (POST and PUT): every field, nothing else. */
export const UserInput = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    tier: z.string().trim().min(1).max(32),
  })
  .meta({ id: "UserInput" });

/** A user as the API shows it. */
export const User = z.object({ id: z.string(), name: z.string(), tier: z.string() }).meta({ id: "User" });

/** One line of an order. */
export const OrderItem = z
  .strictObject({
    sku: z.string().min(1).max(64),
    quantity: z.int().min(1).max(10_000),
    unit_price: z.int().min(0).max(100_000_000),
  })
  .meta({ id: "OrderItem" });

/** An order's status. */
export const OrderStatusSchema = z.enum(ORDER_STATUSES).meta({ id: "OrderStatus" });

/** The body of `POST /users/{user_id}/orders`: the items; the status starts as `pending`. */
export const OrderCreate = z
  .strictObject({ items: z.array(OrderItem).min(1).max(MAX_ITEMS) })
  .meta({ id: "OrderCreate" });

/** The client-settable state of an order: the body of PUT, and what a merge patch must leave. */
export const OrderState = z
  .strictObject({ status: OrderStatusSchema, items: z.array(OrderItem).min(1).max(MAX_ITEMS) })
  .meta({ id: "OrderState" });

/** An order as the API shows it. */
export const Order = z
  .object({
    id: z.string(),
    user_id: z.string(),
    status: OrderStatusSchema,
    items: z.array(OrderItem),
    total: z.int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "Order" });

/** A page of orders: a bare JSON array, oldest first; the next page is in the `Link` header (RFC 8288). */
export const OrderList = z.array(Order).meta({ id: "OrderList" });

/**
 * Path parameters. An id carries no length limit of its own: one the shop never issued names no resource, so it is a
 * 404 like any other unknown id (RFC 9110 §15.5.5), not a 422 for a malformed request. The router refuses a segment
 * over its `maxParamLength` (100) with 400 `param_too_long` before any lookup.
 */
const Id = z.string().min(1);
export const UserParams = z.object({ user_id: Id });
export const OrderParams = z.object({ user_id: Id, order_id: Id });

/** The query of both order lists (a user's, and `/orders`): any other parameter is a 400. */
export const OrderListQuery = z.object({
  status: OrderStatusSchema.optional(),
  limit: queryInteger(
    z.int({ error: "Expected an integer from 1 to 100, in decimal digits." }).min(1).max(100).default(20),
  ),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/)
    .optional(),
});
