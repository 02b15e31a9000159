import type { HttpRequest } from "../../http/message";
import { json } from "../../http/message";
import type { ResourceBuilder } from "../../routing/resource";
import type { Middleware } from "../../routing/types";
import type { AttemptRecord } from "./attempt";
import { AttemptCursorError } from "./attempt-cursor";
import type { DeliveryQueue } from "./delivery-queue";
import type { WebhookEndpoint } from "./endpoint";
import type { EndpointAdmin } from "./endpoint-admin";
import { taggedJson } from "./endpoint-api-preconditions";
import { invalidCursor, notFound, unwrap } from "./endpoint-api-problems";
import { attemptsQuery, deliveriesQuery } from "./endpoint-api-query";
import { attemptJson, attemptJsonSchema, deliveryJson, deliveryJsonSchema, listJsonSchema } from "./endpoint-schema";
import { isPrintableId as known } from "./printable-id";

/** What the delivery routes share with the endpoint API that declares them. */
export interface DeliveryRoutesContext {
  admin: EndpointAdmin;
  queue: DeliveryQueue;
  /** The endpoint the request names, as the caller may see it; else throws the 404. */
  find: (request: HttpRequest, id: string) => Promise<WebhookEndpoint>;
  tags: string[];
  /** The reads' middleware: a 304 for an If-None-Match matching the ETag of what they answer. */
  revalidated: Middleware;
}

/**
 * The endpoint API's routes under one endpoint that read and retry its deliveries: `GET /attempts` (the delivery log),
 * `GET /deliveries[/{delivery_id}]` and `POST /deliveries/{delivery_id}/retry`. Each finds the endpoint first, so
 * another tenant's endpoint is a 404 here as everywhere.
 */
export function declareDeliveryRoutes(
  endpoints: ResourceBuilder<`${string}/{endpoint_id}`>,
  { admin, queue, find, tags, revalidated }: DeliveryRoutesContext,
): void {
  endpoints.route(
    "GET",
    "/attempts",
    "attempts",
    {
      query: attemptsQuery,
      response: listJsonSchema(attemptJsonSchema),
      responses: { 400: { description: "A query parameter is refused, or starting_after is no line id." } },
      tags,
      summary: "The delivery log, newest first",
      description:
        "The newest lines (of one delivery, with delivery_id), up to limit; has_more says there are older ones. To read them, pass the id of the page's last line as starting_after, with the same delivery_id.",
      use: [revalidated],
    },
    async ({ params, query, request }) => {
      const endpoint = await find(request, params.endpoint_id);
      const size = query.limit;
      const deliveryId = query.delivery_id;
      const after = query.starting_after;
      if (after !== undefined && !known(after)) throw invalidCursor("attempt", after);
      if (deliveryId !== undefined && !known(deliveryId))
        return taggedJson({ object: "list", data: [], has_more: false });
      let log: AttemptRecord[];
      try {
        log = await queue.attempts({ endpointId: endpoint.id, deliveryId, limit: size + 1, startingAfter: after });
      } catch (error) {
        // DeliveryQueue.attempts: a startingAfter the queue cannot place, whatever its id format. Any other error
        // (a plain TypeError included) is the queue's failure, a 500.
        if (after !== undefined && error instanceof AttemptCursorError) throw invalidCursor("attempt", after);
        throw error;
      }
      return taggedJson({ object: "list", data: log.slice(0, size).map(attemptJson), has_more: log.length > size });
    },
  );
  endpoints.resource("/deliveries/{delivery_id}", (deliveries) => {
    deliveries.list(
      {
        query: deliveriesQuery,
        response: listJsonSchema(deliveryJsonSchema),
        responses: { 400: { description: "A query parameter is refused, or starting_after names no delivery." } },
        tags,
        summary: "The endpoint's deliveries, newest first",
        use: [revalidated],
      },
      async ({ params, query, request }) => {
        const endpoint = await find(request, params.endpoint_id);
        const size = query.limit;
        const after = query.starting_after;
        if (after !== undefined && !known(after)) throw invalidCursor("delivery", after);
        // An id no event can have finds nothing, without a look-up (as an unknown delivery_id of the log).
        if (query.event_id !== undefined && !known(query.event_id)) {
          return taggedJson({ object: "list", data: [], has_more: false });
        }
        const list = await queue.list(endpoint.id, {
          eventId: query.event_id,
          limit: size + 1,
          status: query.status === undefined ? undefined : [query.status],
          since: query.since,
          startingAfter: after,
        });
        // The queue gives an empty page for a cursor that is not one of the endpoint's deliveries (or was forgotten).
        if (list.length === 0 && after !== undefined && (await queue.get(after))?.endpointId !== endpoint.id) {
          throw invalidCursor("delivery", after);
        }
        return taggedJson({
          object: "list",
          data: list.slice(0, size).map(deliveryJson),
          has_more: list.length > size,
        });
      },
    );
    const findDelivery = async (endpointId: string, deliveryId: string) => {
      const delivery = known(deliveryId) ? await queue.get(deliveryId) : undefined;
      if (delivery === undefined || delivery.endpointId !== endpointId) throw notFound("delivery");
      return delivery;
    };
    deliveries.read(
      { response: deliveryJsonSchema, tags, summary: "One delivery", use: [revalidated] },
      async ({ params, request }) => {
        const endpoint = await find(request, params.endpoint_id);
        return taggedJson(deliveryJson(await findDelivery(endpoint.id, params.delivery_id)));
      },
    );
    deliveries.action(
      "POST",
      "retry",
      {
        response: deliveryJsonSchema,
        responses: {
          202: { description: "Accepted: the delivery is queued for an attempt now.", schema: deliveryJsonSchema },
          409: { description: "The delivery is delivered or in flight: nothing to retry." },
        },
        tags,
        summary: "Retry a delivery now",
      },
      async ({ params, request }) => {
        const endpoint = await find(request, params.endpoint_id);
        const delivery = await findDelivery(endpoint.id, params.delivery_id);
        return json(202, deliveryJson(unwrap(await admin.retry(endpoint.id, delivery.id))));
      },
    );
  });
}
