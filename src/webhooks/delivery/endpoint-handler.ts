import type { z } from "zod";
import { safeJsonOrFormBody } from "../../http/body";
import type { Handler, HttpRequest, HttpResponse } from "../../http/message";
import { json } from "../../http/message";
import { answeredBy } from "../../http/methods";
import { HttpProblem, problem } from "../../http/problem";
import { validationProblem } from "../../http/validation";
import { type ApiKeyCheck, authenticate, compileApiKeys } from "./api-key";
import { type AdminResult, createEndpointAdmin, type EndpointAdminOptions } from "./endpoint-admin";
import { createEndpointSchema, deliveryJson, endpointJson, updateEndpointSchema } from "./endpoint-schema";
import type { DeliveryStatus } from "./state-machine";

/** Options of {@link createEndpointHandler}. */
export interface EndpointHandlerOptions extends EndpointAdminOptions {
  /** Secret API keys accepted as `Authorization: Bearer <key>`, or a function deciding. */
  apiKeys: ApiKeyCheck;
  /** Path the handler is mounted at. @default "/v1/webhook_endpoints" */
  basePath?: string;
}

const STATUSES = new Set<string>(["pending", "failed", "delivered", "exhausted"]);

function notFound(what: string): HttpResponse {
  return problem({ status: 404, code: `${what}_not_found`, detail: `No such ${what.replace("_", " ")}.` });
}

// HEAD is answered wherever GET is (RFC 9110 §9.3.2), so it is listed with it.
function methodNotAllowed(allow: string): HttpResponse {
  return problem({
    status: 405,
    code: "method_not_allowed",
    headers: { allow: allow.replace("GET", "GET, HEAD") },
  });
}

function refusal(result: Extract<AdminResult<unknown>, { ok: false }>): HttpResponse {
  if (!("detail" in result)) {
    if (result.code === "endpoint_not_found") return notFound("endpoint");
    if (result.code === "delivery_not_found") return notFound("delivery");
    return problem({ status: 409, code: "not_retryable", detail: "The delivery is delivered or in flight." });
  }
  return problem({
    status: 422,
    code: result.code,
    detail: result.detail,
    extensions: { errors: [{ pointer: "/url", in: "body", code: result.code, message: result.detail }] },
  });
}

function parseBody<S extends z.ZodType>(request: HttpRequest, schema: S): z.output<S> | HttpResponse {
  const body = safeJsonOrFormBody(request);
  if (!body.ok) return body.problem.toResponse();
  const parsed = schema.safeParse(body.value);
  return parsed.success ? parsed.data : validationProblem(parsed.error).toResponse();
}

function isResponse(value: unknown): value is HttpResponse {
  return typeof value === "object" && value !== null && "status" in value && "headers" in value && "body" in value;
}

function queryOne(request: HttpRequest, name: string): string | undefined {
  const value = request.query[name];
  return typeof value === "string" ? value : undefined;
}

function queryLimit(request: HttpRequest): number | HttpResponse {
  const raw = queryOne(request, "limit");
  if (raw === undefined) return 10;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return problem({ status: 400, code: "invalid_limit", detail: "limit must be an integer from 1 to 100." });
  }
  return limit;
}

// `since` as an RFC 3339 date-time or Unix seconds.
function parseSince(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * One {@link Handler} for the endpoint API under `basePath` (mount it on `basePath` and `basePath/*`):
 * `POST /` create (201, shows the secret once), `GET /` list, `GET|POST|PATCH|DELETE /:id`,
 * `POST /:id/rotate_secret`, `GET /:id/deliveries`, `GET /:id/attempts`,
 * `POST /:id/deliveries/:delivery_id/retry`, `POST /:id/replay` (`since`).
 * Every request needs `Authorization: Bearer <secret API key>`.
 * @example createServer(createEndpointHandler({ endpoints, queue, apiKeys: [process.env.API_KEY!] }))
 */
export function createEndpointHandler(options: EndpointHandlerOptions): Handler {
  const admin = createEndpointAdmin(options);
  const check = compileApiKeys(options.apiKeys);
  const base = (options.basePath ?? "/v1/webhook_endpoints").replace(/\/+$/, "");

  async function route(request: HttpRequest, parts: string[]): Promise<HttpResponse> {
    // HEAD runs the GET branch; the adapters send its headers without the content (RFC 9110 §9.3.2).
    const method = answeredBy(request.method) ?? request.method;
    const [id, sub, deliveryId, action] = parts;
    if (id === undefined) {
      if (method === "POST") {
        const input = parseBody(request, createEndpointSchema);
        if (isResponse(input)) return input;
        const created = await admin.create(input);
        if (!created.ok) return refusal(created);
        return json(201, endpointJson(created.value, true), { location: `${base}/${created.value.id}` });
      }
      if (method === "GET") {
        const limit = queryLimit(request);
        if (isResponse(limit)) return limit;
        const page = await admin.list({ limit: limit + 1, startingAfter: queryOne(request, "starting_after") });
        return json(200, {
          object: "list",
          data: page.slice(0, limit).map((e) => endpointJson(e)),
          has_more: page.length > limit,
        });
      }
      return methodNotAllowed("GET, POST");
    }
    if (sub === undefined) {
      if (method === "GET") {
        const endpoint = await admin.get(id);
        return endpoint === undefined ? notFound("endpoint") : json(200, endpointJson(endpoint));
      }
      if (method === "POST" || method === "PATCH") {
        const input = parseBody(request, updateEndpointSchema);
        if (isResponse(input)) return input;
        const updated = await admin.update(id, input);
        return updated.ok ? json(200, endpointJson(updated.value)) : refusal(updated);
      }
      if (method === "DELETE") {
        return (await admin.delete(id))
          ? json(200, { id, object: "webhook_endpoint", deleted: true })
          : notFound("endpoint");
      }
      return methodNotAllowed("GET, POST, PATCH, DELETE");
    }
    if (sub === "rotate_secret" && deliveryId === undefined) {
      if (method !== "POST") return methodNotAllowed("POST");
      const rotated = await admin.rotateSecret(id);
      return rotated.ok ? json(200, endpointJson(rotated.value, true)) : refusal(rotated);
    }
    if (sub === "replay" && deliveryId === undefined) {
      if (method !== "POST") return methodNotAllowed("POST");
      let since: string | undefined = queryOne(request, "since");
      if (request.body.byteLength > 0) {
        const body = safeJsonOrFormBody(request);
        if (!body.ok) return body.problem.toResponse();
        const value = (body.value as Record<string, unknown> | null)?.since;
        since = typeof value === "number" ? String(value) : typeof value === "string" ? value : since;
      }
      const sinceMs = parseSince(since);
      if (sinceMs === undefined) {
        return problem({ status: 422, code: "invalid_since", detail: "since must be a date-time or Unix seconds." });
      }
      const replayed = await admin.replay(id, sinceMs);
      return replayed.ok ? json(202, { object: "replay", replayed: replayed.value.replayed }) : refusal(replayed);
    }
    if (sub === "attempts" && deliveryId === undefined) {
      if (method !== "GET") return methodNotAllowed("GET");
      if ((await admin.get(id)) === undefined) return notFound("endpoint");
      const limit = queryLimit(request);
      if (isResponse(limit)) return limit;
      const log = await options.queue.attempts({ endpointId: id, deliveryId: queryOne(request, "delivery_id"), limit });
      return json(200, {
        object: "list",
        data: log.map((a) => ({
          object: "webhook_attempt",
          delivery_id: a.deliveryId,
          event_id: a.eventId,
          attempt: a.attempt,
          started_at: new Date(a.startedAt).toISOString(),
          duration_ms: a.durationMs,
          status: a.status,
          error_kind: a.errorKind,
          response: a.response,
        })),
      });
    }
    if (sub === "deliveries") {
      if (deliveryId === undefined) {
        if (method !== "GET") return methodNotAllowed("GET");
        if ((await admin.get(id)) === undefined) return notFound("endpoint");
        const limit = queryLimit(request);
        if (isResponse(limit)) return limit;
        const status = queryOne(request, "status");
        if (status !== undefined && !STATUSES.has(status)) {
          return problem({ status: 400, code: "invalid_status", detail: `Unknown delivery status "${status}".` });
        }
        const list = await options.queue.list(id, {
          limit,
          status: status === undefined ? undefined : [status as DeliveryStatus],
          since: parseSince(queryOne(request, "since")),
        });
        return json(200, { object: "list", data: list.map(deliveryJson) });
      }
      if (action === "retry" && parts.length === 4) {
        if (method !== "POST") return methodNotAllowed("POST");
        const retried = await admin.retry(id, deliveryId);
        return retried.ok ? json(202, deliveryJson(retried.value)) : refusal(retried);
      }
      if (action === undefined) {
        if (method !== "GET") return methodNotAllowed("GET");
        const delivery = await options.queue.get(deliveryId);
        return delivery === undefined || delivery.endpointId !== id
          ? notFound("delivery")
          : json(200, deliveryJson(delivery));
      }
    }
    return problem({ status: 404, code: "not_found", detail: "No such resource." });
  }

  return async (request) => {
    const path = request.path.replace(/\/+$/, "");
    if (path !== base && !path.startsWith(`${base}/`)) {
      return problem({ status: 404, code: "not_found", detail: "No such resource." });
    }
    const denied = await authenticate(request, check);
    if (denied !== undefined) return denied.toResponse();
    let parts: string[];
    try {
      parts = path.slice(base.length).split("/").filter(Boolean).map(decodeURIComponent);
    } catch {
      return problem({ status: 400, code: "bad_request_target", detail: "The path is not valid percent-encoding." });
    }
    try {
      return await route(request, parts);
    } catch (error) {
      if (error instanceof HttpProblem) return error.toResponse();
      throw error;
    }
  };
}
