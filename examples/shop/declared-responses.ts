/**
 * The statuses and headers the shop's handlers answer beyond what the router and the middleware declare
 * themselves: they go into `/openapi.json` through each operation's `responses`.
 */
import type { DescribedHeader } from "rest-webhooks/http";
import type { OperationResponse } from "rest-webhooks/routing";
import { CACHING_HEADERS, LIST_CACHE_CONTROL_HEADER } from "./http-caching";
import { OrderList } from "./schemas";

type Declared = Readonly<Record<number, OperationResponse>>;

/** A read that evaluates If-None-Match / If-Modified-Since and If-Match / If-Unmodified-Since (RFC 9110 §13). */
export const CONDITIONAL_READ: Declared = {
  304: { description: "Not Modified: the client's copy (If-None-Match, If-Modified-Since) is current." },
  412: { description: "If-Match or If-Unmodified-Since does not hold." },
};

/**
 * A write that evaluates If-Match / If-Unmodified-Since and If-None-Match before changing anything (RFC 9110 §13.2.2).
 */
export const CONDITIONAL_WRITE: Declared = {
  412: {
    description:
      "If-Match (or If-Unmodified-Since) does not match: it changed since you read it; or If-None-Match does (`*`: " +
      "it exists). Nothing was done.",
  },
};

/**
 * A create that evaluates If-Match / If-Unmodified-Since and If-None-Match against the collection it adds to
 * (RFC 9110 §13.1.1: the target resource is the collection).
 */
export const CONDITIONAL_CREATE: Declared = {
  412: {
    description:
      "If-Match (or If-Unmodified-Since) does not match the collection (the ETag its GET answers; `/users` has none, " +
      "so any If-Match fails): it changed since you read it; or If-None-Match does. Nothing was created.",
  },
};

/**
 * A user replace a customer's token may make only for its name: a new tier takes the admin scope. The description
 * follows the one `authenticate` declares for its own 403.
 */
export const USER_ADMIN_CHANGE: Declared = {
  403: { description: "Or the change takes the admin scope: a new tier (`forbidden`)." },
};

/** An order change a customer's token may make only within a status or from `pending` to `cancelled`. */
export const ORDER_ADMIN_CHANGE: Declared = {
  403: {
    description:
      "Or the status change takes the admin scope: any but keeping the status and pending → cancelled (`forbidden`).",
  },
};

/** An order delete a customer's token may make only while the order is `pending`. */
export const ORDER_ADMIN_DELETE: Declared = {
  403: { description: "Or deleting an order that is not pending takes the admin scope (`forbidden`)." },
};

/**
 * A create whose 201 carries the new record's validators (`cachingHeaders`): the ETag a client sends back in If-Match.
 */
export const CREATED: Declared = { 201: { headers: CACHING_HEADERS } };

/**
 * A PUT or PATCH: its 200 carries the record's new validators (`cachingHeaders`), as a create's 201 does, and a stale
 * If-Match is a 412 ({@link CONDITIONAL_WRITE}).
 */
export const REPLACED: Declared = { 200: { headers: CACHING_HEADERS }, ...CONDITIONAL_WRITE };

/** An order change the order's state forbids. */
export const ORDER_CONFLICT: Declared = {
  409: { description: "The change is not allowed from the order's status (invalid_transition, order_not_editable)." },
};

const LINK: DescribedHeader = {
  description:
    'RFC 8288: `<…>; rel="next"`, present exactly when there is a next page. The target keeps the filter and ' +
    "`limit` and carries the cursor; it is a path, resolved against the request's URL.",
};

/**
 * A page of orders, with the next page's link (RFC 8288). Its 304 repeats the Link and Cache-Control the 200 would
 * send (RFC 9110 §15.4.5; a 304 refreshes the stored fields, RFC 9111 §4.3.4).
 */
export const ORDER_PAGE: Declared = {
  200: {
    description: "A page of orders, oldest first.",
    schema: OrderList,
    headers: { Link: LINK, "Cache-Control": LIST_CACHE_CONTROL_HEADER },
  },
  304: { headers: { Link: LINK, "Cache-Control": LIST_CACHE_CONTROL_HEADER } },
};

const VARY: DescribedHeader = {
  description: "`authorization`: one URL answers each token its own list (RFC 9110 §12.5.5).",
};

/** `GET /orders`: a page like {@link ORDER_PAGE}, whose 200 and 304 also carry `Vary: authorization`. */
export const ORDER_COLLECTION_PAGE: Declared = {
  200: { ...ORDER_PAGE[200], headers: { ...ORDER_PAGE[200]?.headers, Vary: VARY } },
  304: { headers: { ...ORDER_PAGE[304]?.headers, Vary: VARY } },
};
