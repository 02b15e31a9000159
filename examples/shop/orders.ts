import { HttpProblem, type HttpRequest, json } from "rest-webhooks/http";
import type { ResourceBuilder } from "rest-webhooks/routing";
import type { z } from "zod";
import { forbidden, principalOf } from "./auth";
import { notFound, type ShopContext } from "./context";
import {
  CONDITIONAL_CREATE,
  CONDITIONAL_READ,
  CONDITIONAL_WRITE,
  CREATED,
  ORDER_ADMIN_CHANGE,
  ORDER_ADMIN_DELETE,
  ORDER_CONFLICT,
  ORDER_PAGE,
  REPLACED,
} from "./declared-responses";
import { orderChangeType, orderEvent } from "./events";
import {
  assertCollectionPreconditions,
  assertPreconditions,
  cachingHeaders,
  conditionalCreateDescribed,
  conditionalRead,
  conditionalReadDescribed,
  conditionalWriteDescribed,
  hasPreconditions,
} from "./http-caching";
import { answerOrderList } from "./order-lists";
import { checkTransition, deletionTakesAdmin, itemsEditable, takesAdmin } from "./order-status";
import { orderJson, orderTotal, sameItems } from "./representations";
import { Order, OrderCreate, OrderList, OrderListQuery, OrderParams, OrderState, UserParams } from "./schemas";
import type { OrderRecord } from "./storage/types";

type OrderStateInput = z.output<typeof OrderState>;

// What `GET /users/{user_id}/orders` answers without a query.
const FIRST_PAGE = OrderListQuery.parse({});

function conflict(code: string, detail: string, extensions: Record<string, unknown>): HttpProblem {
  return new HttpProblem({ status: 409, code, detail, extensions });
}

/** Declares the orders of a user: list, create, read, replace, merge-patch update and delete. */
export function declareOrders(orders: ResourceBuilder<"/users/{user_id}/orders/{order_id}">, ctx: ShopContext): void {
  /** Moves an order to the state `next` computes, in one transaction with its precondition check and event. */
  async function change(
    request: HttpRequest,
    params: z.output<typeof OrderParams>,
    next: (current: OrderRecord) => OrderStateInput,
  ) {
    const now = ctx.now();
    const changed = await ctx.write(request, async (tx) => {
      const current = await tx.getOrder(params.user_id, params.order_id);
      if (current === undefined) throw notFound("order", params.order_id);
      assertPreconditions(request, current, now);
      const wanted = next(current);
      const transition = checkTransition(current.status, wanted.status);
      if (!transition.ok) {
        throw conflict("invalid_transition", `An order cannot go from ${transition.from} to ${transition.to}.`, {
          from: transition.from,
          to: transition.to,
          allowed: transition.allowed,
        });
      }
      // After the 409: a move no one may make is a conflict with the order's state, whoever asks.
      if (takesAdmin(current.status, wanted.status) && !principalOf(request).admin) {
        throw forbidden(`Moving an order from ${current.status} to ${wanted.status} takes the admin scope.`);
      }
      const itemsChanged = !sameItems(current.items, wanted.items);
      if (itemsChanged && !itemsEditable(current.status)) {
        throw conflict("order_not_editable", `The items of a ${current.status} order cannot change.`, {
          status: current.status,
        });
      }
      // Sending the current state changes nothing: no new version, no event (RFC 9110 §9.2.2).
      if (!transition.changed && !itemsChanged) return { order: current, representation: orderJson(current) };
      const updated: OrderRecord = {
        ...current,
        status: wanted.status,
        items: wanted.items,
        total: orderTotal(wanted.items),
        version: current.version + 1,
        updatedAt: Math.max(now, current.updatedAt),
      };
      // One representation: the event's data and the response body.
      const representation = orderJson(updated);
      await tx.updateOrder(updated);
      await tx.touchOrders(current.userId, now);
      await tx.publish(orderEvent(orderChangeType(current, updated), representation, now));
      return { order: updated, representation };
    });
    return json(200, changed.representation, cachingHeaders(changed.order, now));
  }

  orders.list(
    {
      params: UserParams,
      query: OrderListQuery,
      response: OrderList,
      responses: ORDER_PAGE,
      summary: "List a user's orders (cursor pagination, filter by status)",
      use: [ctx.conditionalList],
    },
    async ({ params, query, url }) => {
      const user = await ctx.storage.getUser(params.user_id);
      if (user === undefined) throw notFound("user", params.user_id);
      // The list changes whenever one of the user's orders does: that time is its Last-Modified.
      return answerOrderList(ctx, url("users.orders.list", { user_id: params.user_id }), query, {
        changedAt: user.ordersChangedAt,
        page: (page) => ctx.storage.listOrders(params.user_id, page),
      });
    },
  );

  orders.create(
    {
      params: UserParams,
      body: OrderCreate,
      response: Order,
      responses: { ...CREATED, ...CONDITIONAL_CREATE },
      summary: "Place an order (Idempotency-Key supported; the total is computed; If-Match on the list honoured)",
      use: [ctx.idempotent, conditionalCreateDescribed],
    },
    async ({ params, body, created, request, url }) => {
      const now = ctx.now();
      const placed = await ctx.write(request, async (tx) => {
        if (hasPreconditions(request)) {
          // Read locked (FOR UPDATE on PostgreSQL): no order comes or goes between the check and the insert.
          const user = await tx.getUser(params.user_id);
          if (user === undefined) throw notFound("user", params.user_id);
          // The collection's current representation is what its GET answers: the first page, unfiltered.
          const list = await answerOrderList(ctx, url("users.orders.list", { user_id: params.user_id }), FIRST_PAGE, {
            changedAt: user.ordersChangedAt,
            page: (page) => tx.listOrders(params.user_id, page),
          });
          assertCollectionPreconditions(request, {
            etag: list.headers.etag as string,
            lastModified: Math.min(user.ordersChangedAt, now),
          });
        }
        const record = await tx.placeOrder({
          id: ctx.newId("ord"),
          userId: params.user_id,
          status: "pending",
          items: body.items,
          total: orderTotal(body.items),
          version: 1,
          createdAt: now,
          updatedAt: now,
        });
        if (record === undefined) throw notFound("user", params.user_id);
        // One representation: the event's data and the response body.
        const representation = orderJson(record);
        await tx.publish(orderEvent("order.created", representation, now));
        return { order: record, representation };
      });
      return created(placed.order.id, placed.representation, cachingHeaders(placed.order, now));
    },
  );

  orders.read(
    {
      params: OrderParams,
      response: Order,
      responses: CONDITIONAL_READ,
      use: [conditionalReadDescribed],
      summary: "Get an order (304 / 412 for conditional requests)",
    },
    async ({ params, request }) => {
      const order = await ctx.storage.getOrder(params.user_id, params.order_id);
      if (order === undefined) throw notFound("order", params.order_id);
      return conditionalRead(request, order, ctx.now(), () => orderJson(order));
    },
  );

  orders.replace(
    {
      params: OrderParams,
      body: OrderState,
      response: Order,
      responses: { ...REPLACED, ...ORDER_CONFLICT, ...ORDER_ADMIN_CHANGE },
      use: [conditionalWriteDescribed],
      summary: "Replace an order's status and items (transitions enforced; If-Match honoured)",
    },
    ({ params, body, request }) => change(request, params, () => body),
  );

  orders.update(
    {
      params: OrderParams,
      body: OrderState,
      response: Order,
      responses: { ...REPLACED, ...ORDER_CONFLICT, ...ORDER_ADMIN_CHANGE },
      use: [conditionalWriteDescribed],
      summary: "Update an order with a JSON Merge Patch (transitions enforced; If-Match honoured)",
    },
    ({ params, merge, request }) =>
      change(request, params, (current) => merge({ status: current.status, items: current.items })),
  );

  orders.remove(
    {
      params: OrderParams,
      responses: { ...CONDITIONAL_WRITE, ...ORDER_ADMIN_DELETE },
      use: [conditionalWriteDescribed],
      summary: "Delete an order (a customer's while pending; If-Match honoured)",
    },
    ({ params, request }) =>
      ctx.write(request, async (tx) => {
        const current = await tx.getOrder(params.user_id, params.order_id);
        // The problem every other method answers for a missing order: a repeated DELETE gets the GET's 404 and code.
        if (current === undefined) throw notFound("order", params.order_id);
        const now = ctx.now();
        assertPreconditions(request, current, now);
        // After the 404 and the 412, as for a status change: no DELETE is a conflict, the admin may make any.
        if (deletionTakesAdmin(current.status) && !principalOf(request).admin) {
          throw forbidden(`Deleting a ${current.status} order takes the admin scope.`);
        }
        await tx.deleteOrder(params.user_id, params.order_id);
        await tx.touchOrders(params.user_id, now);
        await tx.publish(orderEvent("order.deleted", orderJson(current), now));
        return true;
      }),
  );
}
