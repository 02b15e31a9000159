/**
 * The statuses and headers the shop's handlers answer beyond what the router and the middleware declare
 * themselves: they go into `/openapi.json` through each operation's `responses`.
 */
import type { OperationResponse } from "rest-webhooks/routing";
import { OrderList } from "./schemas";

type Declared = Readonly<Record<number, OperationResponse>>;

/** A read that evaluates If-None-Match / If-Modified-Since and If-Match / If-Unmodified-Since (RFC 9110 §13). */
export const CONDITIONAL_READ: Declared = {
  304: { description: "Not Modified: the client's copy (If-None-Match, If-Modified-Since) is current." },
  412: { description: "If-Match or If-Unmodified-Since does not hold." },
};

/** A write that evaluates If-Match / If-Unmodified-Since before changing anything (RFC 9110 §13.2.2). */
export const CONDITIONAL_WRITE: Declared = {
  412: {
    description: "If-Match (or If-Unmodified-Since) does not match: it changed since you read it; nothing was done.",
  },
};

/** An order change the order's state forbids. */
export const ORDER_CONFLICT: Declared = {
  409: { description: "The change is not allowed from the order's status (invalid_transition, order_not_editable)." },
};

/** A page of orders, with the next page's link (RFC 8288). */
export const ORDER_PAGE: Declared = {
  200: {
    description: "A page of orders, oldest first.",
    schema: OrderList,
    headers: {
      Link: {
        description:
          'RFC 8288: `<…>; rel="next"`, present exactly when there is a next page. The target keeps the filter and ' +
          "`limit` and carries the cursor; it is a path, resolved against the request's URL.",
      },
    },
  },
};
