import { appliesTo, type DescribedHeader, type MiddlewareDescription } from "../http/described";
import type { JsonBodyOptions } from "../http/json-limits";
import { PROBLEM_CONTENT_TYPE, reasonPhrase } from "../http/problem";
import { MERGE_PATCH_CONTENT_TYPE } from "./merge-patch";
import { routerProblems } from "./openapi-router-problems";
import type { JsonSchema, SchemaConverter } from "./openapi-schemas";
import { readsBody } from "./operation";
import type { ParsedTemplate } from "./template";
import type { RouteInfo } from "./types";

const PHRASES: Record<number, string> = { 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content" };

function phrase(status: number): string {
  return PHRASES[status] ?? reasonPhrase(status);
}

function problemContent(): JsonSchema {
  return { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: "#/components/schemas/Problem" } } };
}

function problemResponse(status: number, description = phrase(status)): JsonSchema {
  return { description, content: problemContent() };
}

function headerObjects(headers: Readonly<Record<string, DescribedHeader>>, method: string): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, header] of Object.entries(headers)) {
    if (!appliesTo(header.methods, method)) continue;
    out[name] = { description: header.description, schema: header.schema ?? { type: "string" } };
  }
  return out;
}

/** Whether a header's `statuses` takes `status`; one that throws takes nothing (a document is still built). */
function holds(statuses: (status: number) => boolean, status: string): boolean {
  try {
    return statuses(Number(status)) === true;
  } catch {
    return false;
  }
}

/**
 * Two sources' words for one status: each may be what the client gets, so both are kept (a bare reason phrase
 * says nothing and gives way).
 */
function joined(existing: unknown, added: string, status: number): string {
  if (typeof existing !== "string" || existing === phrase(status)) return added;
  if (added === phrase(status) || existing.includes(added)) return existing;
  return `${existing} ${added}`;
}

function withHeaders(entry: JsonSchema, headers: Record<string, JsonSchema>): JsonSchema {
  if (Object.keys(headers).length === 0) return entry;
  return { ...entry, headers: { ...(entry["headers"] as object | undefined), ...headers } };
}

/** The success responses of an operation's kind, before what it declares. */
function kindSuccesses(route: RouteInfo, content: JsonSchema | undefined): Map<number, JsonSchema> {
  const success = (status: number, extra: JsonSchema = {}): [number, JsonSchema] => [
    status,
    { description: phrase(status), ...extra, ...(content === undefined || status === 204 ? {} : { content }) },
  ];
  switch (route.kind) {
    case "create":
      // RFC 9110 §15.3.2: the 201 names the new resource.
      return new Map([
        success(201, {
          headers: {
            Location: { description: "The new item's path.", schema: { type: "string", format: "uri-reference" } },
            // RFC 9110 §8.7: `created(id, body)` says the body is the new item's current state.
            "Content-Location": {
              description: "The new item's path, sent with its representation as the body.",
              schema: { type: "string", format: "uri-reference" },
            },
          },
        }),
      ]);
    case "remove":
      return new Map([success(204)]);
    case "replace":
    case "update":
      // RFC 9110 §9.3.4: the handler answers the new state (200) or nothing (204). A response schema says it sends
      // content; without one the router cannot tell, so both are documented (declare a 2xx to keep one).
      return new Map(content === undefined ? [success(200), success(204)] : [success(200)]);
    default:
      return new Map([success(200)]);
  }
}

/**
 * The fields of the body readers' 415s: RFC 9110 §15.5.16, a coded body (Content-Encoding) is answered with the
 * codings taken (Accept-Encoding); a body of another media type with the media types taken, in Accept-Post on a
 * POST (W3C LDP §7.1) and Accept-Patch on a PATCH (RFC 5789 §3.1).
 */
function unsupportedHeaders(route: RouteInfo): Record<string, JsonSchema> {
  const encoding = {
    "Accept-Encoding": {
      description: "Sent when the body was coded (Content-Encoding): only identity is taken.",
      schema: { type: "string", const: "identity" },
    },
  };
  // RFC 7396 §4: the router refuses any other media type in a PATCH itself, naming the merge patch alone.
  if (route.kind === "update") {
    return {
      "Accept-Patch": {
        description: "The patch format accepted.",
        schema: { type: "string", const: MERGE_PATCH_CONTENT_TYPE },
      },
      ...encoding,
    };
  }
  const accepted = {
    description: "Sent when the body is of another media type: the media types taken.",
    schema: { type: "string" },
  };
  // The body readers name what they take in the field of the request's method, and there is none for the others.
  if (route.method === "POST") return { "Accept-Post": accepted, ...encoding };
  if (route.method === "PATCH") return { "Accept-Patch": accepted, ...encoding };
  return encoding;
}

/** The Responses Object of an operation (OpenAPI 3.1 §4.8.16): the router's, each middleware's, the declared. */
export function responses(
  route: RouteInfo,
  parsed: ParsedTemplate,
  converter: SchemaConverter,
  described: readonly MiddlewareDescription[],
  json: JsonBodyOptions = {},
): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  const schema = route.spec.response ? converter.convert(route.spec.response, "output") : undefined;
  const content = schema ? { "application/json": { schema } } : undefined;
  const declared = Object.entries(route.spec.responses ?? {}).map(
    ([status, response]) => [Number(status), response] as const,
  );
  // A declared 2xx replaces the kind's other successes; one of the same status is merged over it below, so it
  // keeps the router's Location and body schema.
  const declaredSuccesses = new Set(
    declared.map(([status]) => status).filter((status) => status >= 200 && status < 300),
  );
  for (const [status, entry] of kindSuccesses(route, content)) {
    if (declaredSuccesses.size === 0 || declaredSuccesses.has(status)) out[String(status)] = entry;
  }
  const problems = routerProblems(route, parsed, json);
  const hasItem =
    route.kind === "read" || route.kind === "replace" || route.kind === "update" || route.kind === "remove";
  const body = readsBody(route);
  out["400"] = problemResponse(400, problems[400]);
  // An item, or anything under a path parameter (a nested collection, a custom operation on an item), names a
  // resource that may not exist: its handler answers 404 when it does not (RFC 9110 §15.5.5).
  if (hasItem || parsed.params.length > 0) {
    out["404"] = problemResponse(
      404,
      hasItem ? undefined : "Not Found: nothing at this path (the resource, or the one it is nested under).",
    );
  }
  // 413 from the adapters' body limit, 415 from the body reader, with the fields that say what it takes.
  if (body) out["413"] = problemResponse(413);
  if (body) out["415"] = withHeaders(problemResponse(415), unsupportedHeaders(route));
  if (problems[422] !== undefined) out["422"] = problemResponse(422, problems[422]);
  // Statuses the operation itself may answer (through the router's checks or its handler), before the middleware's.
  const own = new Set(Object.keys(out));
  own.delete("413"); // the adapters' body limit, before any middleware
  for (const [status] of declared) own.add(String(status));
  for (const description of described) {
    for (const [status, response] of Object.entries(description.responses ?? {})) {
      if (response === undefined || !appliesTo(response.methods, route.method)) continue;
      const current = out[status] ?? {};
      const problem = response.problem ?? Number(status) >= 400;
      const entry = {
        ...current,
        ...(problem ? { content: problemContent() } : {}),
        description: joined(current["description"], response.description, Number(status)),
      };
      out[status] = withHeaders(entry, headerObjects(response.headers ?? {}, route.method));
    }
  }
  for (const [status, response] of declared) {
    const current = out[String(status)] ?? {};
    const entry: JsonSchema = {
      ...current,
      description: joined(current["description"], response.description ?? phrase(status), status),
    };
    if (response.schema !== undefined) {
      entry["content"] = { "application/json": { schema: converter.convert(response.schema, "output") } };
    } else if (status >= 400 && entry["content"] === undefined) {
      entry["content"] = problemContent();
    }
    out[String(status)] = withHeaders(entry, headerObjects(response.headers ?? {}, route.method));
  }
  // Headers a middleware adds to every success response (ETag, Idempotent-Replayed, RateLimit), and to the operation's
  // other answers a header's `statuses` names (a replayed 422).
  for (const description of described) {
    const given = Object.entries(description.successHeaders ?? {});
    for (const [status, response] of Object.entries(out)) {
      const on = given.filter(([, header]) =>
        header.statuses === undefined ? status.startsWith("2") : own.has(status) && holds(header.statuses, status),
      );
      out[status] = withHeaders(response, headerObjects(Object.fromEntries(on), route.method));
    }
  }
  return out;
}
