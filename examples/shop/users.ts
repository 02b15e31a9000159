import { json } from "rest-webhooks/http";
import { type Router, routeOf } from "rest-webhooks/routing";
import { type Authorize, authenticate, forbidden, mayAccessUser, principalOf } from "./auth";
import { notFound, type ShopContext } from "./context";
import { CONDITIONAL_CREATE, CONDITIONAL_READ, CREATED, REPLACED, USER_ADMIN_CHANGE } from "./declared-responses";
import { userEvent } from "./events";
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
import { declareOrders } from "./orders";
import { userJson } from "./representations";
import { User, UserInput, UserParams } from "./schemas";
import type { UserRecord } from "./storage/types";

/** 403 unless the principal is an admin or the user in the path (creating users takes an admin). */
const authorizeUser: Authorize = (principal, request) => {
  const userId = routeOf(request)?.params.user_id;
  if (userId === undefined) {
    if (!principal.admin) return forbidden("Creating users takes a token with the admin scope.");
  } else if (!mayAccessUser(principal, userId)) {
    return forbidden("This token reaches only its own user and orders.");
  }
  return undefined;
};

/** Declares `/users` and `/users/{user_id}` (and, nested, the user's orders). */
export function declareUsers(router: Router, ctx: ShopContext): void {
  router.resource("/users/{user_id}", (users) => {
    // Authenticated first; then every write runs in one transaction with its idempotency record.
    users.use(authenticate(ctx.verify, authorizeUser), ctx.requestScope);

    users.create(
      {
        body: UserInput,
        response: User,
        responses: { ...CREATED, ...CONDITIONAL_CREATE },
        summary: "Create a user (admin)",
        use: [ctx.idempotent, conditionalCreateDescribed],
      },
      async ({ body, created, request }) => {
        // `/users` has no GET, so no current representation (RFC 9110 §13.1.1): any If-Match fails.
        if (hasPreconditions(request)) assertCollectionPreconditions(request, undefined);
        const now = ctx.now();
        const user: UserRecord = {
          id: ctx.newId("usr"),
          name: body.name,
          tier: body.tier,
          version: 1,
          createdAt: now,
          updatedAt: now,
          ordersChangedAt: now,
        };
        await ctx.write(request, async (tx) => {
          await tx.putUser(user);
          await tx.publish(userEvent("user.created", user, now));
        });
        return created(user.id, userJson(user), cachingHeaders(user, now));
      },
    );

    users.read(
      {
        params: UserParams,
        response: User,
        responses: CONDITIONAL_READ,
        use: [conditionalReadDescribed],
        summary: "Get a user (304 / 412 for conditional requests)",
      },
      async ({ params, request }) => {
        const user = await ctx.storage.getUser(params.user_id);
        if (user === undefined) throw notFound("user", params.user_id);
        return conditionalRead(request, user, ctx.now(), () => userJson(user));
      },
    );

    users.replace(
      {
        params: UserParams,
        body: UserInput,
        response: User,
        responses: { ...REPLACED, ...USER_ADMIN_CHANGE },
        use: [conditionalWriteDescribed],
        summary: "Replace a user's name and tier (a new tier takes the admin scope)",
      },
      async ({ params, body, request }) => {
        const now = ctx.now();
        const user = await ctx.write(request, async (tx) => {
          const current = await tx.getUser(params.user_id);
          if (current === undefined) throw notFound("user", params.user_id);
          assertPreconditions(request, current, now);
          // A customer names itself; its tier is the shop's to set. Sending the current tier changes nothing.
          if (current.tier !== body.tier && !principalOf(request).admin) {
            throw forbidden("Changing a user's tier takes a token with the admin scope.");
          }
          // RFC 9110 §9.3.4: PUT sets the sent state; sending the current one changes nothing.
          if (current.name === body.name && current.tier === body.tier) return current;
          // RFC 9110 §8.8.2: Last-Modified never moves back, even from an instance whose clock is behind.
          const next: UserRecord = {
            ...current,
            ...body,
            version: current.version + 1,
            updatedAt: Math.max(now, current.updatedAt),
          };
          await tx.putUser(next);
          await tx.publish(userEvent("user.updated", next, now));
          return next;
        });
        return json(200, userJson(user), cachingHeaders(user, now));
      },
    );

    users.resource("/orders/{order_id}", (orders) => declareOrders(orders, ctx));
  });
}
