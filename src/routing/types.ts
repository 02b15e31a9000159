import type { z } from "zod";
import type { DescribedHeader } from "../http/described";
import type { JsonBodyOptions } from "../http/json-limits";
import type { Handler, HttpRequest, HttpResponse, QueryRecord, ResponseHeaders } from "../http/message";
import type { MatchOptions } from "./match-result";
import type { JsonValue } from "./merge-patch";
import type { PathParams } from "./template";

/** Wraps a handler: the composition point for caching, idempotency, auth and the like. */
export type Middleware = (next: Handler) => Handler;

/** The kinds of operation the router knows the rules of (plus `custom`, which it only routes). */
export type OperationKind = "list" | "create" | "read" | "replace" | "update" | "remove" | "custom";

/** A zod object schema (params and query schemas must be objects: their keys are the names). */
export type ObjectSchema = z.ZodObject;

/** One response an operation declares (see {@link OperationSpec.responses}). */
export interface OperationResponse {
  /** @default the status's reason phrase */
  description?: string;
  /** The JSON body. */
  schema?: z.ZodType;
  headers?: Readonly<Record<string, DescribedHeader>>;
}

/** What an operation declares besides its handler; every schema is optional. */
export interface OperationSpec {
  /** Validates and converts the path parameters (422 on failure); keys must be the template's names. */
  params?: ObjectSchema;
  /**
   * Validates the query: an unknown name gets 400 `unknown_query_parameter` (unless the schema takes others,
   * `z.looseObject` or `.catchall(schema)`), a bad value 400 `validation_failed`.
   */
  query?: ObjectSchema;
  /** Validates the JSON body (422 on failure); for `update`, the resource the merged result must satisfy. */
  body?: z.ZodType;
  /**
   * Also take the body as `application/x-www-form-urlencoded` (a repeated name, or one ending in `[]`, is an
   * array, and so is the single value of a member the `body` object schema declares an array), validated by the
   * same `body` schema: the shape of Stripe-style APIs. Not for PUT or PATCH merge patches.
   * @default false
   */
  form?: boolean;
  /**
   * The request media types this operation takes, in the order its 415s, its OPTIONS answer (`Accept-Post`,
   * `Accept-Patch`) and OpenAPI name them (each with the `body` schema), when they are others than its kind's (JSON,
   * and a form with `form`): a PATCH that takes `application/merge-patch+json` besides JSON and forms, say. A body of
   * another media type is a 415. Each is JSON (`application/json` or a `+json` type) or, with `form`, a form, without
   * parameters; not for an update, whose merge patch is fixed.
   * @default the kind's: JSON, and a form when `form` is set
   */
  requestMediaTypes?: readonly string[];
  /**
   * This operation's JSON body limits, over the router's `json` (e.g. `{ allowNul: true }` for a handler that keeps
   * NUL in strings on purpose). Its `allowPrototypeKeys` also lets a query parameter named `__proto__` through to
   * the `query` schema, or to the handler when there is none (a 400 `forbidden_member` otherwise).
   * @default the router's `json`
   */
  json?: JsonBodyOptions;
  /** The success body: documented in OpenAPI, checked at run time with `validateResponses` (unless `responses` gives the status its own schema). */
  response?: z.ZodType;
  /**
   * Responses besides what the router knows of: a success status other than the kind's default (201 for create,
   * 204 for remove, 200 or 204 for replace/update without a `response`, 200 otherwise; a declared 2xx replaces the
   * others, and is merged over one of its own status, keeping e.g. Location; a remove answers only 204 and a create
   * 201 or 202, so another 2xx there is `invalid_schema`) with its body schema and headers, or
   * error statuses the handler answers (their body a problem document unless a schema is given; described beside
   * what the router or a middleware says of that status). Documented in OpenAPI; with `validateResponses`, a 2xx's
   * schema here is what that status's body is checked against.
   * @example responses: { 202: { description: "Queued for retry.", schema: Delivery }, 409: { description: "Not retryable." } }
   */
  responses?: Readonly<Record<number, OperationResponse>>;
  /** OpenAPI `summary`. */
  summary?: string;
  /** OpenAPI `description`. */
  description?: string;
  /** OpenAPI `tags`; a resource's operations default to the top resource's name. */
  tags?: readonly string[];
  /** OpenAPI `deprecated`. */
  deprecated?: boolean;
  /** Middleware for this operation only, innermost. */
  use?: readonly Middleware[];
}

type Output<S, K extends keyof OperationSpec, Default> = S extends { [P in K]: infer Z }
  ? Z extends z.ZodType
    ? z.output<Z>
    : Default
  : Default;

/** What every handler receives: validated values typed from the schemas. */
export interface RouteContext<T extends string, S extends OperationSpec> {
  readonly request: HttpRequest;
  /** Path parameters: decoded strings, or the params schema's output. */
  readonly params: Output<S, "params", PathParams<T>>;
  /** The query: the query schema's output, or the raw record when none is declared. */
  readonly query: Output<S, "query", QueryRecord>;
  /** The route that matched. */
  readonly route: RouteInfo;
  /** Builds the path of a named route (see {@link Router.url}). */
  url(name: string, params?: Readonly<Record<string, string | number>>): string;
}

/** A context with the validated JSON body. */
export interface BodyContext<T extends string, S extends OperationSpec> extends RouteContext<T, S> {
  /** The body schema's output, or `undefined` when no body schema is declared (the body is not read). */
  readonly body: Output<S, "body", undefined>;
}

/** The context of `replace` (PUT): the body is always read, since PUT sends the whole representation. */
export interface ReplaceContext<T extends string, S extends OperationSpec> extends RouteContext<T, S> {
  /**
   * The body schema's output; without a body schema, the parsed JSON as `unknown` (still 400 when empty
   * or malformed, 415 when not JSON), for the handler to check.
   */
  readonly body: Output<S, "body", unknown>;
}

/** The context of `create`: the body, and `created` to answer 201 with the new item's `Location`. */
export interface CreateContext<T extends string, S extends OperationSpec> extends BodyContext<T, S> {
  /**
   * The 201 response for a new item (RFC 9110 §9.3.3, §10.2.2): `Location` is the item's path.
   * @param id the new item's identifier (its last path parameter).
   * @param body the representation to send, JSON-encoded (none when omitted).
   */
  created(id: string, body?: unknown, headers?: ResponseHeaders): HttpResponse;
}

/** The context of `update` (PATCH with a JSON Merge Patch, RFC 7396). */
export interface UpdateContext<T extends string, S extends OperationSpec> extends RouteContext<T, S> {
  /** The merge patch as sent. */
  readonly patch: JsonValue;
  /**
   * Applies the patch to the current value and validates the result with the body schema:
   * a result the schema refuses is a 422 problem (thrown).
   */
  merge(current: unknown): Output<S, "body", JsonValue>;
}

/** A handler's return value. */
export type Reply = HttpResponse | Promise<HttpResponse>;

/** A declared route, as {@link Router.routes} lists it. */
export interface RouteInfo {
  /** Unique name, e.g. `users.orders.read`; the OpenAPI `operationId`. */
  readonly name: string;
  readonly method: string;
  readonly template: string;
  readonly kind: OperationKind;
  /** The resource the route belongs to (`users.orders`), if any. */
  readonly resource: string | undefined;
  readonly spec: Readonly<OperationSpec>;
}

/** Options of {@link createRouter}. */
export interface RouterOptions extends MatchOptions {
  /**
   * Check each 2xx JSON body against the schema `responses` declares for its status, otherwise the operation's
   * `response` schema; a mismatch is a `RoutingError` `invalid_response` (a 500 for the client).
   * @default false
   */
  validateResponses?: boolean;
  /**
   * Limits of every JSON body the router reads: nesting depth (default 64, checked before parsing) and NUL in
   * strings (refused by default); lone surrogates are always refused (RFC 7493 §2.1). An operation's `json` overrides.
   * @default { maxDepth: 64, allowNul: false }
   */
  json?: JsonBodyOptions;
}
