import { settledLastModified } from "rest-webhooks/caching";
import { type HttpResponse, json, type ResponseHeaders } from "rest-webhooks/http";
import type { Router } from "rest-webhooks/routing";
import type { z } from "zod";
import { authenticate, principalOf } from "./auth";
import type { ShopContext } from "./context";
import { ORDER_COLLECTION_PAGE } from "./declared-responses";
import { LIST_CACHE_CONTROL, pageEtag } from "./http-caching";
import { cutPage, decodeCursor, nextLink } from "./pagination";
import { orderJson } from "./representations";
import { OrderList, OrderListQuery } from "./schemas";
import type { OrderQuery, OrderRecord } from "./storage/types";

/** What one order list reads: when its orders last changed, and a page of them. */
export interface OrderListSource {
  /**
   * The latest change to any order the list can hold (its Last-Modified), or `undefined` when unknown. Read
   * before the page: a change landing between the two reads then makes Last-Modified too late (a needless 200
   * later), never too early (a 304 for a copy that misses the change).
   */
  readonly changedAt: number | undefined;
  /** Reads the orders of one page, by `seq`. */
  page(query: OrderQuery): Promise<OrderRecord[]>;
}

/**
 * Answers one page of an order list: a JSON array of at most `limit` orders, oldest first, with
 * `Link: <…>; rel="next"` exactly when there is a next page, an ETag of the body and the link together
 * ({@link pageEtag}), Last-Modified from `source.changedAt` and `Cache-Control: private, no-cache`.
 * `ctx.conditionalList` answers 304 and HEAD.
 * @param path the list's own path: the next page's link keeps its filter and page size.
 */
export async function answerOrderList(
  ctx: ShopContext,
  path: string,
  query: z.output<typeof OrderListQuery>,
  source: OrderListSource,
  extraHeaders: ResponseHeaders = {},
): Promise<HttpResponse> {
  const afterSeq = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const rows = await source.page({ status: query.status, afterSeq, limit: query.limit + 1 });
  const { items, next } = cutPage(rows, query.limit);
  const headers: ResponseHeaders = { ...extraHeaders, "cache-control": LIST_CACHE_CONTROL };
  // Once the second of the last change is over: a date sent within it would hide another change made in it.
  const lastModified = source.changedAt === undefined ? undefined : settledLastModified(source.changedAt, ctx.now());
  if (lastModified !== undefined) headers["last-modified"] = lastModified;
  // RFC 8288: the next page, as a link the client follows without building URLs itself.
  const link =
    next === undefined ? undefined : nextLink(path, { status: query.status, limit: query.limit, cursor: next });
  if (link !== undefined) headers.link = link;
  const response = json(200, items.map(orderJson), headers);
  // RFC 9111 §4.3.4: a 304 cannot take back a stored Link, so the tag changes with it, not with the body alone.
  // Last-Modified needs no such care: the link only changes when an order the list holds does (source.changedAt).
  return { ...response, headers: { ...response.headers, etag: pageEtag(response.body as string, link) } };
}

/**
 * Declares `GET /orders`: every user's orders for an admin token, the caller's own for any other, filtered by
 * `?status=` and paginated like a user's list. Who is listed comes from the token alone: the query has no
 * parameter naming a user, and any parameter it does not declare is a 400.
 */
export function declareOrderCollection(router: Router, ctx: ShopContext): void {
  router.route(
    "GET",
    "/orders",
    {
      name: "orders.list",
      query: OrderListQuery,
      response: OrderList,
      responses: ORDER_COLLECTION_PAGE,
      summary: "List orders: every user's for an admin, else the caller's own (cursor pagination, filter by status)",
      tags: ["orders"],
      use: [authenticate(ctx.verify), ctx.conditionalList],
    },
    async ({ request, query, url }) => {
      const principal = principalOf(request);
      let source: OrderListSource;
      if (principal.admin) {
        // The list changes with any user's orders: its Last-Modified is the latest of them all.
        const changedAt = await ctx.storage.lastOrderChange();
        source = { changedAt, page: (page) => ctx.storage.listAllOrders(page) };
      } else {
        // A token whose user does not exist (yet) lists nothing, rather than a 404 for a collection that is there.
        const user = await ctx.storage.getUser(principal.subject);
        source = { changedAt: user?.ordersChangedAt, page: (page) => ctx.storage.listOrders(principal.subject, page) };
      }
      // One URL, a representation per principal: a cache must not answer one token with another's list
      // (RFC 9110 §12.5.5; RFC 9111 §4.1).
      return answerOrderList(ctx, url("orders.list"), query, source, { vary: "authorization" });
    },
  );
}
