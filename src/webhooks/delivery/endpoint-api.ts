import { z } from "zod";
import { json } from "../../http/message";
import { HttpProblem } from "../../http/problem";
import type { ResourceBuilder } from "../../routing/resource";
import type { Router } from "../../routing/router";
import type { Middleware } from "../../routing/types";
import { type ApiKeyCheck, requireApiKey } from "./api-key";
import { type AdminResult, createEndpointAdmin, type EndpointAdminOptions } from "./endpoint-admin";
import {
  attemptJson,
  attemptJsonSchema,
  createEndpointSchema,
  deliveryJson,
  deliveryJsonSchema,
  endpointJson,
  endpointJsonSchema,
  listJsonSchema,
  updateEndpointSchema,
} from "./endpoint-schema";
import { sinceBodySchema, sinceQuerySchema } from "./since";
import { DELIVERY_STATUSES } from "./state-machine";

/** Options of {@link declareEndpointApi}. */
export interface EndpointApiOptions extends EndpointAdminOptions {
  /** Secret API keys accepted as `Authorization: Bearer <key>`, or a function deciding (e.g. a database look-up). */
  apiKeys: ApiKeyCheck;
  /** Where the API is mounted: a literal path. @default "/v1/webhook_endpoints" */
  basePath?: string;
  /** Middleware around every operation of the API, inside the API-key check (e.g. caching headers on reads). */
  use?: readonly Middleware[];
}

// Ids are printable ASCII: anything else names nothing, and is never handed to a store (PostgreSQL refuses NUL).
const PRINTABLE_ID = /^[\x21-\x7e]{1,255}$/;
const known = (id: string): boolean => PRINTABLE_ID.test(id);

const limit = z
  .string()
  .regex(/^\d{1,3}$/, "Expected an integer from 1 to 100.")
  .transform(Number)
  .pipe(z.number().int().min(1).max(100))
  .optional();
const listQuery = z.object({ limit, starting_after: z.string().max(255).optional() });
const deliveriesQuery = z.object({ limit, status: z.enum(DELIVERY_STATUSES).optional(), since: sinceQuerySchema });
const attemptsQuery = z.object({ limit, delivery_id: z.string().max(255).optional() });
const replayBody = z.object({ since: sinceBodySchema }).optional();
const replayQuery = z.object({ since: sinceQuerySchema });
const replayJson = z.object({ object: z.literal("replay"), replayed: z.number().int() }).meta({ id: "WebhookReplay" });
const deletedJson = z
  .object({ id: z.string(), object: z.literal("webhook_endpoint"), deleted: z.literal(true) })
  .meta({ id: "DeletedWebhookEndpoint" });

function notFound(what: "endpoint" | "delivery"): HttpProblem {
  return new HttpProblem({ status: 404, code: `${what}_not_found`, detail: `No such ${what}.` });
}

function refusal(result: Extract<AdminResult<unknown>, { ok: false }>): HttpProblem {
  if (result.code === "unknown_event_type") {
    const pointer = `/enabled_events/${result.index}`;
    return new HttpProblem({
      status: 422,
      code: result.code,
      detail: result.detail,
      extensions: { errors: [{ pointer, in: "body", code: result.code, message: result.detail }] },
    });
  }
  if (!("detail" in result)) {
    if (result.code === "endpoint_not_found") return notFound("endpoint");
    if (result.code === "delivery_not_found") return notFound("delivery");
    return new HttpProblem({ status: 409, code: "not_retryable", detail: "The delivery is delivered or in flight." });
  }
  return new HttpProblem({
    status: 422,
    code: result.code,
    detail: result.detail,
    extensions: { errors: [{ pointer: "/url", in: "body", code: result.code, message: result.detail }] },
  });
}

function unwrap<T>(result: AdminResult<T>): T {
  if (!result.ok) throw refusal(result);
  return result.value;
}

/**
 * Declares the webhook endpoint API on a router, Stripe's shape under `basePath`: `POST /` create (201, the secret
 * shown once), `GET /` list, `GET|POST|PATCH|DELETE /{endpoint_id}`, `POST /{endpoint_id}/rotate_secret`,
 * `POST /{endpoint_id}/replay` (202), `GET /{endpoint_id}/deliveries[/{delivery_id}]`,
 * `POST /{endpoint_id}/deliveries/{delivery_id}/retry` (202), `GET /{endpoint_id}/attempts`. Every operation needs
 * `Authorization: Bearer <secret API key>`; 404, 405, HEAD, OPTIONS, validation and OpenAPI come from the router.
 * @returns the router, for chaining.
 * @example
 * const router = createRouter();
 * declareEndpointApi(router, { endpoints, queue, apiKeys: [process.env.API_KEY!], resolve: systemResolver });
 * createServer(router.handler()).listen(3000);
 */
export function declareEndpointApi(router: Router, options: EndpointApiOptions): Router {
  const admin = createEndpointAdmin(options);
  const { queue } = options;
  const base = (options.basePath ?? "/v1/webhook_endpoints").replace(/\/+$/, "");
  const tags = ["webhook_endpoints"];
  const find = async (id: string) => {
    const endpoint = known(id) ? await admin.get(id) : undefined;
    if (endpoint === undefined) throw notFound("endpoint");
    return endpoint;
  };
  const declare = (endpoints: ResourceBuilder<`${string}/{endpoint_id}`>) => {
    endpoints.use(requireApiKey(options.apiKeys), ...(options.use ?? []));
    endpoints.create(
      { body: createEndpointSchema, form: true, response: endpointJsonSchema, tags, summary: "Register an endpoint" },
      async ({ body, created }) => {
        const endpoint = unwrap(await admin.create(body));
        return created(endpoint.id, endpointJson(endpoint, true));
      },
    );
    endpoints.list(
      { query: listQuery, response: listJsonSchema(endpointJsonSchema), tags, summary: "List endpoints" },
      async ({ query }) => {
        const size = query.limit ?? 10;
        const after = query.starting_after;
        const page =
          after !== undefined && !known(after) ? [] : await admin.list({ limit: size + 1, startingAfter: after });
        const data = page.slice(0, size).map((endpoint) => endpointJson(endpoint));
        return json(200, { object: "list", data, has_more: page.length > size });
      },
    );
    endpoints.read({ response: endpointJsonSchema, tags, summary: "Get an endpoint" }, async ({ params }) =>
      json(200, endpointJson(await find(params.endpoint_id))),
    );
    const update = { body: updateEndpointSchema, form: true, response: endpointJsonSchema, tags };
    for (const [method, name] of [
      ["POST", "update"],
      ["PATCH", "patch"],
    ] as const) {
      endpoints.route(method, "", name, { ...update, summary: "Update an endpoint" }, async ({ params, body }) => {
        const endpoint = await find(params.endpoint_id);
        return json(200, endpointJson(unwrap(await admin.update(endpoint.id, body))));
      });
    }
    endpoints.route(
      "DELETE",
      "",
      "remove",
      { response: deletedJson, tags, summary: "Delete an endpoint" },
      async ({ params }) => {
        const endpoint = await find(params.endpoint_id);
        if (!(await admin.delete(endpoint.id))) throw notFound("endpoint");
        return json(200, { id: endpoint.id, object: "webhook_endpoint", deleted: true });
      },
    );
    endpoints.action(
      "POST",
      "rotate_secret",
      { response: endpointJsonSchema, tags, summary: "Rotate the signing secret" },
      async ({ params }) => {
        const endpoint = await find(params.endpoint_id);
        return json(200, endpointJson(unwrap(await admin.rotateSecret(endpoint.id)), true));
      },
    );
    endpoints.action(
      "POST",
      "replay",
      {
        query: replayQuery,
        body: replayBody,
        form: true,
        response: replayJson,
        responses: { 202: { description: "Accepted: the failed deliveries are queued again.", schema: replayJson } },
        tags,
        summary: "Retry every failed delivery since a time (query or body `since`)",
      },
      async ({ params, query, body }) => {
        const endpoint = await find(params.endpoint_id);
        const since = body?.since ?? query.since;
        if (since === undefined) {
          throw new HttpProblem({
            status: 422,
            code: "invalid_since",
            detail: "since is required: a date-time or Unix seconds, in the query or the body.",
          });
        }
        const replayed = unwrap(await admin.replay(endpoint.id, since)).replayed;
        return json(202, { object: "replay", replayed });
      },
    );
    endpoints.route(
      "GET",
      "/attempts",
      "attempts",
      {
        query: attemptsQuery,
        response: listJsonSchema(attemptJsonSchema),
        tags,
        summary: "The delivery log, newest first",
      },
      async ({ params, query }) => {
        const endpoint = await find(params.endpoint_id);
        const size = query.limit ?? 10;
        const deliveryId = query.delivery_id;
        const log =
          deliveryId !== undefined && !known(deliveryId)
            ? []
            : await queue.attempts({ endpointId: endpoint.id, deliveryId, limit: size + 1 });
        return json(200, { object: "list", data: log.slice(0, size).map(attemptJson), has_more: log.length > size });
      },
    );
    endpoints.resource("/deliveries/{delivery_id}", (deliveries) => {
      deliveries.list(
        {
          query: deliveriesQuery,
          response: listJsonSchema(deliveryJsonSchema),
          tags,
          summary: "The endpoint's deliveries",
        },
        async ({ params, query }) => {
          const endpoint = await find(params.endpoint_id);
          const size = query.limit ?? 10;
          const list = await queue.list(endpoint.id, {
            limit: size + 1,
            status: query.status === undefined ? undefined : [query.status],
            since: query.since,
          });
          return json(200, {
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
      deliveries.read({ response: deliveryJsonSchema, tags, summary: "One delivery" }, async ({ params }) => {
        const endpoint = await find(params.endpoint_id);
        return json(200, deliveryJson(await findDelivery(endpoint.id, params.delivery_id)));
      });
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
        async ({ params }) => {
          const endpoint = await find(params.endpoint_id);
          const delivery = await findDelivery(endpoint.id, params.delivery_id);
          return json(202, deliveryJson(unwrap(await admin.retry(endpoint.id, delivery.id))));
        },
      );
    });
  };
  return router.resource(`${base}/{endpoint_id}`, declare);
}
