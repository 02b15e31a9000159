/**
 * Conditional requests on the endpoint resource of the endpoint API (RFC 9110 §13): the strong ETag of the
 * representation a GET sends, and the If-Match / If-None-Match check of a write against the endpoint as stored.
 */
import { etagFromBody } from "../../caching/etag-generate";
import { evaluatePreconditions } from "../../caching/preconditions";
import { preconditionProblem } from "../../caching/responses";
import { describeMiddleware } from "../../http/described";
import { type HttpRequest, type HttpResponse, json } from "../../http/message";
import type { Middleware } from "../../routing/types";
import type { WebhookEndpoint } from "./endpoint";
import { endpointJson, type UpdateEndpointInput } from "./endpoint-schema";

/**
 * The 200 of the endpoint resource: the JSON a GET sends (never the secret) and, RFC 9110 §8.8.3, a strong ETag of
 * those bytes. Writes answer with it too, so their tag is the one a GET of the result would send.
 */
export function endpointResponse(endpoint: WebhookEndpoint): HttpResponse {
  return taggedJson(endpointJson(endpoint));
}

/**
 * A 200 of `body` as JSON with a strong ETag of its bytes (RFC 9110 §8.8.3): what the API's reads answer, so that
 * `conditional()` answers a matching If-None-Match with a 304 (a list polled for changes costs no body).
 */
export function taggedJson(body: unknown): HttpResponse {
  const response = json(200, body);
  response.headers.etag = etagFromBody(response.body as string);
  return response;
}

/**
 * Throws the caching module's 412 problem when If-Match or If-None-Match does not hold for `endpoint` (RFC 9110
 * §13.2.2). Without a modification date, If-Unmodified-Since is ignored (§13.1.4: "if the resource does not have a
 * modification date available").
 */
export function assertPreconditions(request: HttpRequest, endpoint: WebhookEndpoint): void {
  const etag = endpointResponse(endpoint).headers.etag as string;
  const problem = preconditionProblem(evaluatePreconditions(request, { etag }));
  if (problem !== undefined) throw problem;
}

/**
 * An update's input made conditional: checked against the endpoint as stored inside `EndpointAdmin.update`'s atomic
 * write, where a throw writes nothing (RFC 9110 §13.1.1: evaluated before performing the method). A request without
 * If-Match or If-None-Match gets `input` back as it is.
 */
export function conditionalUpdate(
  request: HttpRequest,
  input: UpdateEndpointInput | ((current: WebhookEndpoint) => UpdateEndpointInput),
): UpdateEndpointInput | ((current: WebhookEndpoint) => UpdateEndpointInput) {
  if (request.headers["if-match"] === undefined && request.headers["if-none-match"] === undefined) return input;
  return (current) => {
    assertPreconditions(request, current);
    return typeof input === "function" ? input(current) : input;
  };
}

/**
 * A delete made conditional: the check `EndpointAdmin.delete` runs on the endpoint as stored inside the store's
 * atomic delete, where a throw deletes nothing (RFC 9110 §13.1.1). A request without If-Match or If-None-Match gets
 * no check, an unconditional delete.
 */
export function conditionalDelete(request: HttpRequest): { check?: (current: WebhookEndpoint) => void } {
  if (request.headers["if-match"] === undefined && request.headers["if-none-match"] === undefined) return {};
  return { check: (current) => assertPreconditions(request, current) };
}

const WRITES = ["POST", "PATCH", "DELETE"];

/**
 * What the writes of the endpoint resource read and answer, for OpenAPI, riding on a middleware that changes nothing:
 * the check itself runs in the handler, inside the store's atomic update or delete, which no middleware reaches.
 */
export const conditionalWriteDescribed: Middleware = describeMiddleware((next) => next, {
  requestHeaders: {
    "If-Match": {
      description:
        "Change it only when one of these ETags (from a GET, or a write's 200) is current, else 412; * when it exists.",
      methods: WRITES,
    },
    "If-None-Match": {
      description: "Refuse with 412 when one of these ETags is current; * always refuses, the endpoint existing.",
      methods: WRITES,
    },
  },
  responses: {
    412: {
      description: "If-Match or If-None-Match does not hold for the endpoint as stored: nothing was changed.",
      methods: WRITES,
    },
  },
  successHeaders: {
    ETag: { description: "The strong entity tag of the endpoint as a GET now sends it.", methods: ["POST", "PATCH"] },
  },
});
