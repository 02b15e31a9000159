import { createHash } from "node:crypto";
import { z } from "zod";
import { conditional } from "../../caching/conditional-handler";
import { type HttpRequest, type HttpResponse, json, type ResponseHeaders } from "../../http/message";
import { HttpProblem } from "../../http/problem";
import { validationProblem } from "../../http/validation";
import { type IdempotencyOptions, idempotency } from "../../idempotency/middleware";
import { MERGE_PATCH_CONTENT_TYPE } from "../../routing/merge-patch";
import type { ResourceBuilder } from "../../routing/resource";
import type { Router } from "../../routing/router";
import type { Middleware } from "../../routing/types";
import { type ApiKeyCheck, requireApiKey } from "./api-key";
import type { WebhookEndpoint } from "./endpoint";
import { createEndpointAdmin, type EndpointAdminOptions, MAX_REPLAY_BATCH } from "./endpoint-admin";
import { declareDeliveryRoutes } from "./endpoint-api-deliveries";
import { type DescribedEvents, declareEventTypeRoutes } from "./endpoint-api-event-types";
import { isMergePatch, PATCH_TYPES, patchMediaTypes } from "./endpoint-api-patch";
import {
  conditionalDelete,
  conditionalUpdate,
  conditionalWriteDescribed,
  endpointResponse,
  taggedJson,
} from "./endpoint-api-preconditions";
import { invalidCursor, notFound, unwrap } from "./endpoint-api-problems";
import { listQuery, replayBody, replayQuery } from "./endpoint-api-query";
import { type TenantOf, tenantScope } from "./endpoint-api-tenant";
import { mergeEndpointPatch } from "./endpoint-merge-patch";
import {
  createEndpointSchema,
  deliveryJson,
  deliveryJsonSchema,
  endpointJson,
  endpointJsonSchema,
  endpointPatchSchema,
  listJsonSchema,
  rotateSecretBody,
  type UpdateEndpointInput,
  updateEndpointSchema,
} from "./endpoint-schema";
import { isPrintableId as known } from "./printable-id";
import { TEST_EVENT_TYPE } from "./test-event";

/** Options of {@link declareEndpointApi}. */
export interface EndpointApiOptions extends EndpointAdminOptions {
  /**
   * Secret API keys accepted as `Authorization: Bearer <key>`, or a function deciding (e.g. a database look-up). A
   * fixed key must be one that field can carry (RFC 6750 §2.1 b64token: letters, digits, `-._~+/`, then `=`
   * padding), else a TypeError: an empty key, or one read from a file with its line feed, would refuse every request.
   */
  apiKeys: ApiKeyCheck;
  /** Where the API is mounted: a literal path (one with a `{parameter}` is a TypeError). @default "/v1/webhook_endpoints" */
  basePath?: string;
  /**
   * Where the event types are listed (`GET <path>`, `GET <path>/{event_type}`, each with the JSON Schema of its
   * data), when `events` is a catalog from `defineEvents`; `false` for no such routes. Same API key and tenant as
   * the rest of the API.
   * @default the parent of `basePath` + "/event_types" ("/v1/event_types")
   */
  eventTypesPath?: string | false;
  /** Middleware around every operation of the API, inside the API-key check (e.g. caching headers on reads). */
  use?: readonly Middleware[];
  /**
   * Makes the API's POST and PATCH operations retry-safe with an `Idempotency-Key` header (IETF
   * draft-ietf-httpapi-idempotency-key-header): a retry with the same key and body gets the first response again
   * (`Idempotent-Replayed: true`) instead of registering a second endpoint, rotating the secret twice or queuing a
   * replay again; the same key with another body is a 422. Keys are scoped per API key and tenant (`identify`
   * defaults to a SHA-256 of the `Authorization` field and the request's tenant; one of your own must tell tenants
   * apart too). The store keeps each response for `ttlMs` (24 h by default), the signing
   * secret shown by a creation or a rotation included: give it a store you trust with secrets.
   * @default none: a POST runs every time it is sent, whatever its Idempotency-Key
   */
  idempotency?: Omit<IdempotencyOptions, "identify"> & { identify?: IdempotencyOptions["identify"] };
  /**
   * The tenant a request acts for, when tenants manage their own endpoints: from your authentication (the API key's
   * owner, a session), never from a field the caller writes freely. Called after the API-key check. A tenant scopes
   * the request: it creates endpoints of that tenant, lists only its own, and another tenant's endpoint (with its
   * deliveries and log) is a 404, as one that does not exist. {@link OPERATOR} is the operator: every endpoint, and
   * new ones without a tenant. `undefined` or `null` (no tenant found) is `403 tenant_unknown`, never the operator.
   * Throw an `HttpProblem` to refuse a request otherwise (a 403); a value that cannot name a tenant is a TypeError (a
   * 500). An option that is no function is a TypeError when the API is declared.
   * @default every request is the operator's
   * @example tenant: async (request) => (isStaff(request) ? OPERATOR : (await accounts.byApiKey(bearer(request)))?.id)
   */
  tenant?: TenantOf;
}

// The caller of an idempotency key: the API key (checked by requireApiKey before, and never kept as it is) and the
// tenant it acts for, so two tenants sharing a key (a session naming the tenant) never replay each other's answers.
// A field value has no line feed (RFC 9110 §5.5), so the two cannot run into each other; the operator's hash is
// the key's alone, as before tenants.
const callerOf = (request: HttpRequest, tenant: string | undefined): string =>
  createHash("sha256")
    .update(
      tenant === undefined ? (request.headers.authorization ?? "") : `${request.headers.authorization}\n${tenant}`,
    )
    .digest("base64url");

const replayJson = z
  .object({
    object: z.literal("replay"),
    replayed: z.number().int().meta({ description: "How many deliveries this request queued again." }),
    has_more: z.boolean().meta({
      description: "Whether older deliveries may still match: send the request again with next_starting_after.",
    }),
    next_starting_after: z.string().nullable().meta({
      description:
        "The starting_after of the next request (the last delivery this one read); null when has_more is false.",
    }),
  })
  .meta({ id: "WebhookReplay" });
const deletedJson = z
  .object({ id: z.string(), object: z.literal("webhook_endpoint"), deleted: z.literal(true) })
  .meta({ id: "DeletedWebhookEndpoint" });

// RFC 9111 §5.2.2.5: a response carrying a signing secret is stored by no cache, shared or private.
const NO_STORE: ResponseHeaders = { "cache-control": "no-store" };
const NO_STORE_HEADER = {
  "Cache-Control": { description: "no-store: the body carries the signing secret.", schema: { const: "no-store" } },
};

// RFC 9110 §8.7: Content-Location would say this body is what a GET of the endpoint answers, but only this answer
// shows the secret.
function withoutContentLocation(response: HttpResponse): HttpResponse {
  const headers: ResponseHeaders = {};
  for (const [name, value] of Object.entries(response.headers)) if (name !== "content-location") headers[name] = value;
  return { ...response, headers };
}

/**
 * Declares the webhook endpoint API on a router, Stripe's shape under `basePath`: `POST /` create (201, the secret
 * shown once), `GET /` list, `GET|POST|PATCH|DELETE /{endpoint_id}`, `POST /{endpoint_id}/rotate_secret`,
 * `POST /{endpoint_id}/replay` (202), `POST /{endpoint_id}/test` (202, a test event), `GET /{endpoint_id}/deliveries[/{delivery_id}]`,
 * `POST /{endpoint_id}/deliveries/{delivery_id}/retry` (202), `GET /{endpoint_id}/attempts`. Every operation needs
 * `Authorization: Bearer <secret API key>`; 404, 405, HEAD, OPTIONS, validation and OpenAPI come from the router.
 * The endpoint resource is conditional (RFC 9110 §13): its GET and the 200 of its updates carry a strong ETag, a GET
 * answers 304 to a matching If-None-Match, and `PATCH`, `POST` and `DELETE /{endpoint_id}` answer 412 to an If-Match
 * or If-None-Match that does not hold for the endpoint as stored, changing nothing.
 * Without the `tenant` option every key `apiKeys` admits reaches every endpoint, its deliveries and its secret
 * rotation: an operator's API. With it, each request sees only its tenant's endpoints (docs/webhooks-providers.md).
 * @returns the router, for chaining.
 * @example
 * const router = createRouter();
 * declareEndpointApi(router, { endpoints, queue, apiKeys: [process.env.API_KEY!], resolve: systemResolver });
 * createServer(router.handler()).listen(3000);
 */
export function declareEndpointApi(router: Router, options: EndpointApiOptions): Router {
  const admin = createEndpointAdmin(options);
  const { queue } = options;
  const basePath: unknown = options.basePath ?? "/v1/webhook_endpoints";
  // A path parameter would scope nothing (every value reaches the same endpoints) and put the template in Location.
  if (typeof basePath !== "string" || /[{}]/.test(basePath)) {
    throw new TypeError(
      `declareEndpointApi: basePath must be a literal path such as "/v1/webhook_endpoints", without a {parameter} (the tenant option scopes endpoints by account), got ${JSON.stringify(basePath)}.`,
    );
  }
  const base = basePath.replace(/\/+$/, "");
  const tags = ["webhook_endpoints"];
  const { scoped, scope } = tenantScope(options.tenant);
  // Every route of the API, the event types' too: the key check (its keys compiled once), then the tenant scope.
  const authorized = [requireApiKey(options.apiKeys), ...(scoped ? [scoped] : [])];
  const visible = (endpoint: WebhookEndpoint | undefined, tenant: string | undefined): endpoint is WebhookEndpoint =>
    endpoint !== undefined && (tenant === undefined || endpoint.tenant === tenant);
  // Another tenant's endpoint is not found, exactly like one that does not exist: its id tells nothing.
  const find = async (request: HttpRequest, id: string) => {
    const tenant = await scope(request);
    const endpoint = known(id) ? await admin.get(id) : undefined;
    if (!visible(endpoint, tenant)) throw notFound("endpoint");
    return endpoint;
  };
  // The reads answer a matching If-None-Match with a 304: conditional() evaluates against the ETag taggedJson sets,
  // and a thrown 404 passes it (RFC 9110 §13.2.1).
  const revalidated = conditional({ now: options.now });
  const declare = (endpoints: ResourceBuilder<`${string}/{endpoint_id}`>) => {
    // Inside the key check: a request without a valid key neither takes nor replays an idempotency key.
    const retrySafe =
      options.idempotency &&
      idempotency({
        ...options.idempotency,
        identify: options.idempotency.identify ?? (async (request) => callerOf(request, await scope(request))),
      });
    endpoints.use(...authorized, ...(retrySafe ? [retrySafe] : []), ...(options.use ?? []));
    endpoints.create(
      {
        body: createEndpointSchema,
        form: true,
        response: endpointJsonSchema,
        responses: {
          201: {
            description: "Created: the endpoint, with its signing secret (shown this once).",
            schema: endpointJsonSchema,
            headers: {
              Location: {
                description: "The new endpoint's path.",
                schema: { type: "string", format: "uri-reference" },
              },
              ...NO_STORE_HEADER,
            },
          },
          409: { description: "The tenant has the most endpoints it may have (too_many_endpoints): delete one first." },
        },
        tags,
        summary: "Register an endpoint",
      },
      async ({ body, created, request }) => {
        const endpoint = unwrap(await admin.create(body, { tenant: await scope(request) }));
        return withoutContentLocation(created(endpoint.id, endpointJson(endpoint, true), NO_STORE));
      },
    );
    endpoints.list(
      {
        query: listQuery,
        response: listJsonSchema(endpointJsonSchema),
        responses: { 400: { description: "A query parameter is refused, or starting_after names no endpoint." } },
        tags,
        summary: "List endpoints",
        use: [revalidated],
      },
      async ({ query, request }) => {
        const size = query.limit;
        const after = query.starting_after;
        if (after !== undefined && !known(after)) throw invalidCursor("endpoint", after);
        const tenant = await scope(request);
        const page = await admin.list({ limit: size + 1, startingAfter: after, tenant });
        // An empty page after a cursor is the end of the list only if the cursor's endpoint still exists (and is one
        // the caller sees: another tenant's id names none of its endpoints).
        if (page.length === 0 && after !== undefined && !visible(await admin.get(after), tenant)) {
          throw invalidCursor("endpoint", after);
        }
        const data = page.slice(0, size).map((endpoint) => endpointJson(endpoint));
        return taggedJson({ object: "list", data, has_more: page.length > size });
      },
    );
    endpoints.read(
      { response: endpointJsonSchema, tags, summary: "Get an endpoint", use: [revalidated] },
      async ({ params, request }) => endpointResponse(await find(request, params.endpoint_id)),
    );
    endpoints.route(
      "POST",
      "",
      "update",
      {
        body: updateEndpointSchema,
        form: true,
        response: endpointJsonSchema,
        tags,
        summary: "Update an endpoint",
        use: [conditionalWriteDescribed],
      },
      async ({ params, body, request }) => {
        // Found first: a missing endpoint is a 404 whatever its preconditions (RFC 9110 §13.2.1).
        const endpoint = await find(request, params.endpoint_id);
        return endpointResponse(unwrap(await admin.update(endpoint.id, conditionalUpdate(request, body))));
      },
    );
    endpoints.route(
      "PATCH",
      "",
      "patch",
      {
        body: endpointPatchSchema,
        form: true,
        requestMediaTypes: PATCH_TYPES,
        response: endpointJsonSchema,
        tags,
        summary: "Update an endpoint",
        use: [patchMediaTypes, conditionalWriteDescribed],
        description: `With Content-Type ${MERGE_PATCH_CONTENT_TYPE}, a JSON Merge Patch (RFC 7396): metadata and headers merge key by key and a member set to null is removed (a metadata key or header; description back to "", rate_limit lifted). With application/json or a form, the fields given replace the stored ones, as POST does (no null). Any other media type (a JSON Patch, a vendor +json type) is a 415 naming these three in Accept-Patch.`,
      },
      async ({ params, body, request }) => {
        const endpoint = await find(request, params.endpoint_id);
        let input: UpdateEndpointInput | ((current: WebhookEndpoint) => UpdateEndpointInput);
        if (isMergePatch(request.headers["content-type"])) {
          // RFC 7396 §2: applied to the current representation, then validated as a whole. Inside the store's atomic
          // write, so two patches of different metadata keys both stay; a merged result that is refused writes
          // nothing, and its problem leaves through admin.update.
          input = (current) => {
            const merged = mergeEndpointPatch(current, body);
            if (!merged.ok) throw validationProblem(merged.error);
            return merged.input;
          };
        } else {
          const parsed = updateEndpointSchema.safeParse(body);
          if (!parsed.success) throw validationProblem(parsed.error);
          input = parsed.data;
        }
        return endpointResponse(unwrap(await admin.update(endpoint.id, conditionalUpdate(request, input))));
      },
    );
    endpoints.route(
      "DELETE",
      "",
      "remove",
      { response: deletedJson, tags, summary: "Delete an endpoint", use: [conditionalWriteDescribed] },
      async ({ params, request }) => {
        // Found first: a missing endpoint is a 404 whatever its preconditions (RFC 9110 §13.2.1); then checked
        // against the endpoint the store deletes (§13.1.1), so a write landing after this read is never lost.
        const endpoint = await find(request, params.endpoint_id);
        if (!(await admin.delete(endpoint.id, conditionalDelete(request)))) throw notFound("endpoint");
        return json(200, { id: endpoint.id, object: "webhook_endpoint", deleted: true });
      },
    );
    endpoints.action(
      "POST",
      "rotate_secret",
      {
        body: rotateSecretBody,
        form: true,
        response: endpointJsonSchema,
        responses: {
          200: {
            description: "The endpoint, with its new signing secret (shown this once).",
            schema: endpointJsonSchema,
            headers: NO_STORE_HEADER,
          },
        },
        tags,
        summary: "Rotate the signing secret",
      },
      async ({ params, body, request }) => {
        const endpoint = await find(request, params.endpoint_id);
        const rotated = await admin.rotateSecret(endpoint.id, { secret: body?.secret });
        return json(200, endpointJson(unwrap(rotated), true), NO_STORE);
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
        responses: {
          202: { description: "Accepted: one batch of the failed deliveries is queued again.", schema: replayJson },
          400: { description: "A query parameter is refused, or starting_after names no delivery of the endpoint." },
        },
        tags,
        summary: "Retry the failed deliveries since a time (query or body `since`), one batch per request",
        description: `Queues again the failed and exhausted deliveries created at or after since, newest first, at most limit (${MAX_REPLAY_BATCH} by default) per request, so a request costs the same whatever the backlog. While has_more is true, send it again with starting_after set to next_starting_after (and the same since). Safe to repeat: a delivery queued again is pending, which no replay matches. status narrows them: failed, exhausted, or parked (those parked while the endpoint was disabled, which re-enabling retries one batch of); keep it the same while paging.`,
      },
      async ({ params, query, body, request }) => {
        const endpoint = await find(request, params.endpoint_id);
        const since = body?.since ?? query.since;
        if (since === undefined) {
          throw new HttpProblem({
            status: 422,
            code: "invalid_since",
            detail: "since is required: a date-time or Unix seconds, in the query or the body.",
          });
        }
        const after = body?.starting_after ?? query.starting_after;
        if (after !== undefined && !known(after)) throw invalidCursor("delivery", after);
        const limit = body?.limit ?? query.limit;
        const status = body?.status ?? query.status;
        const batch = unwrap(await admin.replay(endpoint.id, since, { limit, startingAfter: after, status }));
        // The queue reads nothing after a cursor that is not one of the endpoint's deliveries: said, not taken for
        // the end of the backlog.
        if (!batch.hasMore && batch.replayed === 0 && after !== undefined) {
          if ((await queue.get(after))?.endpointId !== endpoint.id) throw invalidCursor("delivery", after);
        }
        const next = batch.hasMore ? (batch.next ?? null) : null;
        return json(202, {
          object: "replay",
          replayed: batch.replayed,
          has_more: batch.hasMore,
          next_starting_after: next,
        });
      },
    );
    endpoints.action(
      "POST",
      "test",
      {
        response: deliveryJsonSchema,
        responses: {
          202: {
            description: `Accepted: a ${TEST_EVENT_TYPE} event is queued for this endpoint alone, whatever its enabled_events.`,
            schema: deliveryJsonSchema,
          },
          409: { description: "The endpoint is disabled (endpoint_disabled): enable it first." },
        },
        tags,
        summary: "Send a test event",
        description: `Queues one ${TEST_EVENT_TYPE} event (data: endpoint_id) for the endpoint: signed, retried and logged like any delivery. Follow it with GET /deliveries/{delivery_id} and GET /attempts.`,
      },
      async ({ params, request }) => {
        const endpoint = await find(request, params.endpoint_id);
        return json(202, deliveryJson(unwrap(await admin.sendTest(endpoint.id))));
      },
    );
    declareDeliveryRoutes(endpoints, { admin, queue, find, tags, revalidated });
  };
  router.resource(`${base}/{endpoint_id}`, declare);
  const events = describedEvents(options);
  if (events !== undefined && options.eventTypesPath !== false) {
    const path = (options.eventTypesPath ?? `${base.slice(0, base.lastIndexOf("/"))}/event_types`).replace(/\/+$/, "");
    const use = [...authorized, ...(options.use ?? [])];
    declareEventTypeRoutes(router, path, { events, use, revalidated, tags: ["event_types"] });
  }
  return router;
}

/**
 * The catalog the event-type routes describe: one with the schema of each type's data (`defineEvents`). A catalog
 * without them gets no such routes, unless `eventTypesPath` asks for them: then a TypeError says what is missing.
 */
function describedEvents(options: EndpointApiOptions): DescribedEvents | undefined {
  const events = options.events as (EndpointApiOptions["events"] & Partial<DescribedEvents>) | undefined;
  if (typeof events?.data === "function") return events as DescribedEvents;
  if (typeof options.eventTypesPath === "string") {
    throw new TypeError(
      "declareEndpointApi: eventTypesPath lists the event types of options.events, which must then be a catalog from defineEvents (with data(type)).",
    );
  }
  return undefined;
}
