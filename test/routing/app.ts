import { z } from "zod";
import { empty, json } from "../../src/http/message";
import { HttpProblem } from "../../src/http/problem";
import { createRouter, type Middleware, type RouterOptions } from "../../src/routing/index";

export const User = z.object({ id: z.string(), name: z.string().min(1), email: z.email(), tags: z.array(z.string()) });
export type User = z.infer<typeof User>;
export const NewUser = User.omit({ id: true });
export const Order = z.object({ id: z.string(), status: z.enum(["pending", "shipped"]), total: z.number().int() });

/** An in-memory store the test app serves; the model tests read it to check state laws. */
export interface Store {
  users: Map<string, User>;
  orders: Map<string, Map<string, z.infer<typeof Order>>>;
  nextId: number;
}

export function newStore(): Store {
  return { users: new Map(), orders: new Map(), nextId: 1 };
}

function notFound(what: string): HttpProblem {
  return new HttpProblem({ status: 404, code: "not_found", detail: `No ${what}.` });
}

/** The users/orders service used by the router tests. */
export function app(store: Store, options: RouterOptions = {}, trace: string[] = []) {
  const tag: Middleware = (next) => async (request) => {
    trace.push(`users:${request.method}`);
    const response = await next(request);
    return { ...response, headers: { ...response.headers, "x-layer": "users" } };
  };
  return createRouter(options)
    .resource("/users/{user_id}", (users) => {
      users.use(tag);
      users.list(
        {
          query: z.object({ tag: z.string().optional(), limit: z.coerce.number().int().min(1).max(50).default(20) }),
          response: z.array(User),
          summary: "List users",
        },
        ({ query }) => {
          const all = [...store.users.values()].filter((u) => query.tag === undefined || u.tags.includes(query.tag));
          return json(200, all.slice(0, query.limit));
        },
      );
      users.create({ body: NewUser, response: User }, ({ body, created }) => {
        const id = `u${store.nextId++}`;
        const user = { id, ...body };
        store.users.set(id, user);
        return created(id, user);
      });
      users.read({ response: User }, ({ params }) => {
        const user = store.users.get(params.user_id);
        if (user === undefined) throw notFound(`user ${params.user_id}`);
        return json(200, user, { etag: `"${user.name.length}"` });
      });
      users.replace({ body: NewUser, response: User }, ({ params, body }) => {
        if (!store.users.has(params.user_id)) throw notFound(`user ${params.user_id}`);
        const user = { id: params.user_id, ...body };
        store.users.set(params.user_id, user);
        return json(200, user);
      });
      users.update({ body: User }, ({ params, merge }) => {
        const current = store.users.get(params.user_id);
        if (current === undefined) throw notFound(`user ${params.user_id}`);
        const next = merge(current);
        if (next.id !== params.user_id) {
          throw new HttpProblem({ status: 409, code: "id_immutable", detail: "The id cannot change." });
        }
        store.users.set(params.user_id, next);
        return json(200, next);
      });
      users.remove({}, ({ params }) => {
        store.orders.delete(params.user_id);
        return store.users.delete(params.user_id);
      });
      users.resource("/orders/{order_id}", (orders) => {
        orders.list({ query: z.object({ status: z.enum(["pending", "shipped"]).optional() }) }, ({ params, query }) => {
          const list = [...(store.orders.get(params.user_id)?.values() ?? [])];
          return json(
            200,
            list.filter((o) => query.status === undefined || o.status === query.status),
          );
        });
        orders.create({ body: Order.omit({ id: true }) }, ({ params, body, created }) => {
          if (!store.users.has(params.user_id)) throw notFound(`user ${params.user_id}`);
          const id = `o${store.nextId++}`;
          const map = store.orders.get(params.user_id) ?? new Map();
          map.set(id, { id, ...body });
          store.orders.set(params.user_id, map);
          return created(id);
        });
        orders.read(
          { params: z.object({ user_id: z.string(), order_id: z.string().regex(/^o\d+$/) }) },
          ({ params }) => {
            const order = store.orders.get(params.user_id)?.get(params.order_id);
            if (order === undefined) throw notFound("order");
            return json(200, order);
          },
        );
        orders.action("POST", "ship", {}, ({ params, url }) => {
          const order = store.orders.get(params.user_id)?.get(params.order_id);
          if (order === undefined) throw notFound("order");
          order.status = "shipped";
          return empty(303, { location: url("users.orders.read", params) });
        });
      });
    })
    .route("GET", "/static/{path*}", { name: "static" }, ({ params }) => json(200, { path: params.path }));
}
