/**
 * What every framework example serves: a small items API under /api, and a webhook consumer. The framework
 * examples beside this file differ only in how they mount these two.
 */
import { HttpProblem, json } from "rest-webhooks/http";
import { createRouter, type Router } from "rest-webhooks/routing";
import { z } from "zod";

const Item = z.object({ name: z.string().min(1) }).strict();

/** The items API: `GET /api/items`, `POST /api/items`, `GET /api/items/{item_id}`. */
export function itemsApi(): Router {
  const items = new Map<string, { id: string; name: string }>();
  return createRouter().resource("/api/items/{item_id}", (resource) => {
    resource.list({}, () => json(200, [...items.values()]));
    resource.create({ body: Item }, ({ body, created }) => {
      const item = { id: String(items.size + 1), name: body.name };
      items.set(item.id, item);
      return created(item.id, item);
    });
    resource.read({}, ({ params }) => {
      const item = items.get(params.item_id);
      if (item === undefined) throw new HttpProblem({ status: 404, code: "item_not_found", detail: "No such item." });
      return json(200, item);
    });
  });
}
