import { z } from "zod";
import { safeJsonBody, safeJsonOrFormBody } from "../http/body";
import { type ForbiddenMemberPlace, forbiddenMemberProblem } from "../http/forbidden-member";
import type { JsonBodyOptions } from "../http/json-limits";
import { parseMediaType } from "../http/media-type";
import {
  empty,
  type Handler,
  type HttpRequest,
  type HttpResponse,
  json,
  type QueryRecord,
  type ResponseHeaders,
} from "../http/message";
import { definesRequestContent } from "../http/methods";
import { HttpProblem, type HttpProblemCode } from "../http/problem";
import { queryProblem } from "../http/query-check";
import { mountPointOf } from "../http/received-target";
import { unsupportedMediaType } from "../http/unsupported-media-type";
import { validationProblem } from "../http/validation";
import { positiveInteger } from "../options/number-option";
import { RoutingError } from "./errors";
import { type NumberMember, numberMembers, withNumbers } from "./form-numbers";
import { MERGE_PATCH_CONTENT_TYPE, mergePatch } from "./merge-patch";
import { listMembers, unwrapInput, withLists } from "./query-arrays";
import { type BooleanMember, booleanMembers, withBooleans } from "./query-booleans";
import { checkRequestMediaTypes, takesMediaType } from "./request-media-types";
import { parseTemplate } from "./template";
import type { OperationKind, OperationSpec, RouteInfo } from "./types";
import { buildPath, dotless } from "./url";

/** A route and its decoded path parameters, as the router attaches them to a request. */
export interface RouteMatch {
  readonly route: RouteInfo;
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Where a routed request carries its match: a symbol-keyed property, which costs a plain property store, where
 * a WeakMap entry per request costs about a microsecond in writes and garbage collection. `Symbol.for`, so the
 * ESM and CJS copies of the package agree on the key. Requests that cannot take a property (frozen) use the map.
 */
const MATCH: unique symbol = Symbol.for("rest-webhooks.route-match");
type Carrier = HttpRequest & { [MATCH]?: RouteMatch };
const frozenMatches = new WeakMap<HttpRequest, RouteMatch>();

/** Records the match of a request, for the operation and its middleware. */
export function attachMatch(request: HttpRequest, match: RouteMatch): void {
  if (Object.isExtensible(request)) (request as Carrier)[MATCH] = match;
  else frozenMatches.set(request, match);
}

/**
 * The route a request was routed to and its raw path parameters, for middleware
 * (e.g. a cache keyed by route name); `undefined` outside a routed request.
 */
export function routeOf(request: HttpRequest): RouteMatch | undefined {
  return (request as Carrier)[MATCH] ?? frozenMatches.get(request);
}

/** A declared handler with its context type erased. */
export type UntypedHandler = (context: Record<string, unknown>) => unknown;

/** What an operation needs besides its spec and handler. */
export interface OperationSetup {
  readonly info: RouteInfo;
  readonly kind: OperationKind;
  readonly spec: OperationSpec;
  /** The user's handler; its typed context was checked at declaration, here it is plain values. */
  readonly handler: UntypedHandler;
  /** The collection path template of a `create` (its items' Location is built from it). */
  readonly collection?: string;
  readonly url: (name: string, params?: Readonly<Record<string, string | number>>) => string;
  readonly validateResponses: boolean;
  /** The router's JSON body limits; the spec's own `json` overrides them member by member. */
  readonly json?: JsonBodyOptions | undefined;
  /** The request media types the operation takes, as its OPTIONS answer names them (`acceptedMediaTypes`). */
  readonly accepted: readonly string[];
}

/**
 * Whether a query schema takes parameters it does not name: `z.looseObject` or `.catchall(schema)` say so (the
 * catchall then validates them); a plain `z.object` or `z.strictObject` does not, and an unknown name is a 400.
 */
export function takesOthers(schema: z.ZodObject | undefined): boolean {
  const catchall = schema?._zod.def.catchall;
  return catchall !== undefined && catchall._zod.def.type !== "never";
}

function queryOf(
  request: HttpRequest,
  spec: OperationSpec,
  lists: ReadonlySet<string>,
  booleans: ReadonlyMap<string, BooleanMember>,
  others: boolean,
  allowPrototypeKeys: boolean,
): unknown {
  // Parameters that decode to a NUL or to bytes that are not UTF-8 never reach a schema or a store.
  if (request.search !== "") {
    const problem = queryProblem(request.search);
    if (problem !== undefined) throw problem;
  }
  // Own on the null-prototype record, `?__proto__[]=x` sets a prototype once the query is Object.assign-ed, as a
  // form field would. Checked before any schema, as a body's prototype member is: zod would drop it from a loose
  // schema's output or call it unknown to a strict one, and a route answers alike whichever schema it declares.
  if (!allowPrototypeKeys && Object.hasOwn(request.query, "__proto__")) {
    throw forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto_key" }, QUERY);
  }
  const schema = spec.query;
  if (schema === undefined) return request.query;
  const unknown = others ? [] : Object.keys(request.query).filter((name) => !Object.hasOwn(schema.shape, name));
  if (unknown.length > 0) {
    throw new HttpProblem({
      status: 400,
      code: "unknown_query_parameter",
      detail: `Unknown query parameter${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}.`,
      extensions: { parameters: unknown, allowed: Object.keys(schema.shape) },
    });
  }
  const read = withBooleans(withLists(request.query, lists), booleans);
  const parsed = schema.safeParse(read.query);
  if (parsed.success && read.issues.length === 0) return parsed.data;
  // A refused boolean's own issue stands for whatever the parse said of its text; every other error is kept.
  const kept = parsed.success ? [] : parsed.error.issues.filter((issue) => !read.refused.has(String(issue.path[0])));
  throw validationProblem(new z.ZodError([...kept, ...read.issues]), "query", 400);
}

// A query is not content: 400, as its other problems are, with the code and `errors` of a body's prototype member.
const QUERY: ForbiddenMemberPlace = { status: 400, in: "query" };

function paramsOf(raw: Readonly<Record<string, string>>, spec: OperationSpec): unknown {
  if (spec.params === undefined) return raw;
  const parsed = spec.params.safeParse(raw);
  if (!parsed.success) throw validationProblem(parsed.error, "params");
  return parsed.data;
}

/**
 * Whether an operation reads its request body: PATCH (a merge patch, RFC 7396) and PUT (the whole new
 * representation, RFC 9110 §9.3.4) always; others when they declare a body schema and their method gives
 * content a meaning (RFC 9110 §9.3: not GET or DELETE, so list, read and remove never read one); a custom
 * route whenever it declares a body schema.
 */
export function readsBody(info: Pick<RouteInfo, "kind" | "method" | "spec">): boolean {
  if (info.kind === "update" || info.kind === "replace") return true;
  return info.spec.body !== undefined && (info.kind === "custom" || definesRequestContent(info.method));
}

/**
 * The problem a body read ends in, a 415 naming what the operation takes, in the detail and in Accept-Patch or
 * Accept-Post, as its OPTIONS answer does (RFC 5789 §3.1, W3C LDP §7.1): the JSON reader's 415 for a charset other
 * than UTF-8 names `application/json; charset=utf-8`, which a PATCH refuses and which leaves out a form.
 */
function refusal(
  request: HttpRequest,
  problem: HttpProblem<HttpProblemCode>,
  accepted: readonly string[],
): HttpProblem<HttpProblemCode> {
  return problem.code === "unsupported_media_type" ? unsupportedMediaType(request, accepted) : problem;
}

/**
 * The JSON (or form, when the spec takes forms) body, validated when a schema is given (400 empty or malformed,
 * 415 another media type, 422 invalid).
 * @param always read and parse it even without a schema (PUT); otherwise no schema means no read.
 */
function bodyOf(
  request: HttpRequest,
  spec: OperationSpec,
  always: boolean,
  limits: JsonBodyOptions,
  form: FormMembers,
  accepted: readonly string[],
): unknown {
  const schema = spec.body;
  if (schema === undefined && !always) return undefined;
  // An optional body (the schema accepts `undefined`) may be left out: nothing to read, nothing to refuse.
  if (schema !== undefined && request.body.byteLength === 0) {
    const absent = schema.safeParse(undefined);
    if (absent.success) return absent.data;
  }
  // RFC 9110 §15.5.16: the media types the operation declares, and no other the reader would parse (a +json type).
  const declared = spec.requestMediaTypes;
  if (
    declared !== undefined &&
    request.body.byteLength > 0 &&
    !takesMediaType(declared, request.headers["content-type"])
  ) {
    throw unsupportedMediaType(request, accepted);
  }
  const read = spec.form === true ? safeJsonOrFormBody(request, limits) : safeJsonBody(request, limits);
  if (!read.ok) throw refusal(request, read.problem, accepted);
  if (schema === undefined) return read.value;
  if ((form.lists.size === 0 && form.booleans.size === 0 && form.numbers.size === 0) || !isForm(request)) {
    const parsed = schema.safeParse(read.value);
    if (!parsed.success) throw validationProblem(parsed.error, "body");
    return parsed.data;
  }
  // A form's values are text: its lists and booleans are read as the query's are, its numbers as decimal text.
  const fields = withBooleans(withLists(read.value as QueryRecord, form.lists), form.booleans);
  const parsed = schema.safeParse(withNumbers(fields.query, form.numbers));
  if (parsed.success && fields.issues.length === 0) return parsed.data;
  const kept = parsed.success ? [] : parsed.error.issues.filter((issue) => !fields.refused.has(String(issue.path[0])));
  throw validationProblem(new z.ZodError([...kept, ...fields.issues]), "body");
}

/**
 * The members of a form body read as the query's are: lists (`tags=a&tags=b`) and booleans (`true`/`false`); and its
 * numbers, from decimal text (`rate=0.5`).
 */
interface FormMembers {
  lists: ReadonlySet<string>;
  booleans: ReadonlyMap<string, BooleanMember>;
  numbers: ReadonlyMap<string, NumberMember>;
}

function isForm(request: HttpRequest): boolean {
  const media = parseMediaType(request.headers["content-type"] ?? "");
  return media?.type === "application" && media.subtype === "x-www-form-urlencoded";
}

// RFC 5789 §3.1 and RFC 7396 §4: only merge patches are accepted, and Accept-Patch says so.
function patchOf(request: HttpRequest, limits: JsonBodyOptions): unknown {
  const media = parseMediaType(request.headers["content-type"] ?? "");
  if (request.body.byteLength > 0 && (media?.type !== "application" || media.subtype !== "merge-patch+json")) {
    throw unsupportedMediaType(request, [MERGE_PATCH_CONTENT_TYPE]);
  }
  const read = safeJsonBody(request, limits);
  if (!read.ok) throw refusal(request, read.problem, [MERGE_PATCH_CONTENT_TYPE]);
  return read.value;
}

/**
 * A copy of `headers` with Location (and Content-Location), filled key by key: on Node 20 a spread followed by
 * more properties (`{ ...headers, location }`) costs about 1 µs per response, a loop a tenth of that.
 */
function withLocation(headers: ResponseHeaders | undefined, location: string, content: boolean): ResponseHeaders {
  const out: ResponseHeaders = {};
  if (headers !== undefined) for (const name in headers) out[name] = headers[name] as string | readonly string[];
  out["location"] = location;
  if (content) out["content-location"] = location;
  return out;
}

function violation(info: RouteInfo, rule: string): RoutingError {
  return new RoutingError("method_rule_violation", `${info.method} ${info.template} (${info.name}): ${rule}`);
}

// The method rules the router enforces on what a handler answers.
function checkRule(setup: OperationSetup, response: HttpResponse): void {
  const { status } = response;
  if (setup.kind === "create" && status >= 200 && status < 300) {
    // RFC 9110 §9.3.3 / §15.3.2: a POST that creates answers 201 with Location (or 202 if deferred).
    if (status === 202) return;
    if (status !== 201) throw violation(setup.info, `a create must answer 201 (or 202), not ${status}.`);
    if (response.headers["location"] === undefined) throw violation(setup.info, "a 201 needs a Location header.");
  }
}

function checkResponse(setup: OperationSetup, response: HttpResponse): void {
  if (!setup.validateResponses || response.status < 200 || response.status >= 300) return;
  // The schema the OpenAPI document gives this status: one `responses` declares for it (a 202's own body), else
  // the operation's `response`.
  const schema = setup.spec.responses?.[response.status]?.schema ?? setup.spec.response;
  if (schema === undefined) return;
  if (response.body == null || response.status === 204) return;
  const text = typeof response.body === "string" ? response.body : new TextDecoder().decode(response.body);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RoutingError("invalid_response", `${setup.info.name} answered a body that is not JSON.`, {
      cause: error,
    });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RoutingError("invalid_response", `${setup.info.name} answered a body its response schema refuses.`, {
      cause: parsed.error,
    });
  }
}

/** Builds the handler of one operation: validation, the user's handler, then the method's rule. */
export function operationHandler(setup: OperationSetup): Handler {
  const { spec, kind, info } = setup;
  const reads = readsBody(info);
  const limits: JsonBodyOptions = { ...setup.json, ...spec.json };
  // Checked here so a wrong limit fails at startup rather than on the first body.
  if (limits.maxDepth !== undefined) positiveInteger("router", "json.maxDepth", limits.maxDepth);
  // The collection's path is written as url() writes paths, so the Location matches back to the same parent values
  // (a composite's value never ends it early, a "." value is %2E).
  const collection = kind === "create" ? parseTemplate(setup.collection ?? info.template) : undefined;
  const lists = spec.query === undefined ? new Set<string>() : listMembers(spec.query);
  const booleans = spec.query === undefined ? new Map<string, BooleanMember>() : booleanMembers(spec.query);
  const others = takesOthers(spec.query);
  // OpenAPI 3.1 §4.8.15.1: a form body's members are `style: form, explode: true` by default, so `tags=a` is the
  // one-item list of an array member, as in the query.
  // The object under the body's wrappers (`.optional()`, `.default()`, `.transform()`…) names them.
  const formObject = spec.form === true && spec.body !== undefined ? unwrapInput(spec.body) : undefined;
  const form: FormMembers =
    formObject instanceof z.ZodObject
      ? { lists: listMembers(formObject), booleans: booleanMembers(formObject), numbers: numberMembers(formObject) }
      : {
          lists: new Set<string>(),
          booleans: new Map<string, BooleanMember>(),
          numbers: new Map<string, NumberMember>(),
        };
  /** The handler's context: validated params, query and body, and the helpers of its kind. */
  const contextOf = (request: HttpRequest): Record<string, unknown> => {
    const raw = routeOf(request)?.params ?? {};
    const context: Record<string, unknown> = {
      request,
      route: info,
      params: paramsOf(raw, spec),
      query: queryOf(request, spec, lists, booleans, others, limits.allowPrototypeKeys === true),
      url: setup.url,
    };
    if (kind === "update") {
      const patch = patchOf(request, limits);
      context["patch"] = patch;
      context["merge"] = (current: unknown) => {
        const merged = mergePatch(current, patch);
        if (spec.body === undefined) return merged;
        const parsed = spec.body.safeParse(merged);
        if (!parsed.success) throw validationProblem(parsed.error, "body");
        return parsed.data;
      };
    } else if (reads) {
      context["body"] = bodyOf(request, spec, kind === "replace", limits, form, setup.accepted);
    }
    if (collection !== undefined) {
      context["created"] = (id: string, body?: unknown, headers?: ResponseHeaders) => {
        const base = buildPath(info.name, collection, raw);
        // An id "." or ".." would be a dot segment, which the client removes (RFC 3986 §5.2.4): encoded as url() does.
        // Behind a framework's mount (Express `app.use("/api", ...)`), the location begins with the mount's path.
        const location = `${mountPointOf(request)}${base === "/" ? "" : base}/${dotless(encodeURIComponent(id))}`;
        // RFC 9110 §15.3.2 / §8.7: a 201 names the new resource; with its representation as the body,
        // Content-Location says the body is that resource's current state.
        const out = withLocation(headers, location, body !== undefined);
        return body === undefined ? empty(201, out) : json(201, body, out);
      };
    }
    return context;
  };

  /** The handler's result as the response, after the method's rule. */
  const settle = (request: HttpRequest, result: unknown): HttpResponse => {
    if (kind === "remove") {
      if (typeof result !== "boolean") throw violation(info, "a remove handler returns true (deleted) or false.");
      // RFC 9110 §9.3.5: 204 when done; a second DELETE finds nothing, hence 404.
      if (result) return empty(204);
      throw new HttpProblem({ status: 404, code: "not_found", detail: `Nothing at ${request.path}.` });
    }
    const response = result as HttpResponse;
    if (response === null || typeof response !== "object" || typeof response.status !== "number") {
      throw new TypeError(`${info.name}: a handler must return an HttpResponse.`);
    }
    checkRule(setup, response);
    checkResponse(setup, response);
    return response;
  };

  // Kept small: an async function's suspended frame holds every local it has, for each request in flight.
  return async (request) => settle(request, await setup.handler(contextOf(request)));
}

/** Checks, at declaration, that the schemas fit the template. */
const NO_BODY: ReadonlySet<OperationKind> = new Set(["list", "read", "remove"]);
/** The only successes the router lets an operation of these kinds answer (see `settle` and `checkRule`). */
const SUCCESSES: Partial<Record<OperationKind, readonly number[]>> = { create: [201, 202], remove: [204] };

export function checkSpec(
  info: Pick<RouteInfo, "template" | "name" | "kind">,
  names: readonly string[],
  spec: OperationSpec,
): void {
  // RFC 9110 §9.3.1, §9.3.2, §9.3.5: content in GET, HEAD or DELETE has no defined semantics, so a body schema on
  // list, read or remove could never be applied: refused rather than silently ignored.
  if ((spec.body !== undefined || spec.form === true) && NO_BODY.has(info.kind)) {
    throw new RoutingError(
      "invalid_schema",
      `${info.name}: a ${info.kind} operation reads no request body (GET, HEAD and DELETE carry none); remove \`body\`, or declare a create, replace or update.`,
    );
  }
  if (spec.form === true && (info.kind === "update" || info.kind === "replace")) {
    throw new RoutingError("invalid_schema", `${info.name}: form bodies are not for PUT or PATCH merge patches.`);
  }
  const reads = spec.body !== undefined && !NO_BODY.has(info.kind) && info.kind !== "update";
  checkRequestMediaTypes(info.name, spec.requestMediaTypes, spec.form === true, reads);
  // The method rules leave a remove one success, 204 (RFC 9110 §9.3.5), and a create 201 or 202 (§9.3.3, §15.3.2):
  // a declared 2xx the router would never answer (or answer as a method_rule_violation) is refused, not documented.
  const successes = SUCCESSES[info.kind];
  const never = Object.keys(spec.responses ?? {})
    .map(Number)
    .filter((status) => status >= 200 && status < 300 && successes !== undefined && !successes.includes(status));
  if (never.length > 0) {
    throw new RoutingError(
      "invalid_schema",
      `${info.name}: a ${info.kind} operation never answers ${never.join(", ")}; its successes are ${successes?.join(" or ")}.`,
    );
  }
  // RFC 9110 §15.3.5, §15.4.5: a 204 or a 304 has no content, so a body schema for one would document a body never sent.
  const bodiless = [204, 304].filter((status) => spec.responses?.[status]?.schema !== undefined);
  if (bodiless.length > 0) {
    throw new RoutingError(
      "invalid_schema",
      `${info.name}: a ${bodiless.join(" or ")} has no content; remove its schema.`,
    );
  }
  for (const [what, schema] of [
    ["params", spec.params],
    ["query", spec.query],
  ] as const) {
    if (schema !== undefined && !(schema instanceof z.ZodObject)) {
      throw new RoutingError("invalid_schema", `${info.name}: the ${what} schema must be a z.object().`);
    }
  }
  if (spec.params !== undefined) {
    const keys = Object.keys(spec.params.shape);
    const missing = names.filter((name) => !keys.includes(name));
    const extra = keys.filter((key) => !names.includes(key));
    if (missing.length > 0 || extra.length > 0) {
      throw new RoutingError(
        "invalid_schema",
        `${info.name}: the params schema must have exactly the template's parameters (${names.join(", ")}) for ${info.template}.`,
      );
    }
  }
}
