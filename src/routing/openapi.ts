import { z } from "zod";
import { appliesTo, type DescribedHeader, type MiddlewareDescription, middlewareDescription } from "../http/described";
import { PROBLEM_CONTENT_TYPE, reasonPhrase } from "../http/problem";
import { MERGE_PATCH_CONTENT_TYPE } from "./merge-patch";
import { mergePatchSchema } from "./merge-patch-schema";
import { readsBody } from "./operation";
import { type ParsedTemplate, templateShape } from "./template";
import type { RouteInfo } from "./types";

/** A JSON Schema object (draft 2020-12, the OpenAPI 3.1 dialect). */
export type JsonSchema = { [keyword: string]: unknown };

/** The OpenAPI `info` object (OpenAPI 3.1 §4.8.2). */
export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  [extension: `x-${string}`]: unknown;
}

/** The document {@link Router.openapi} returns (OpenAPI 3.1.0). */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: OpenApiInfo;
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  /** OpenAPI 3.1 §4.8.1: the requests this API sends to its consumers (e.g. from an event catalog's `openApiWebhooks()`). */
  webhooks?: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes?: Record<string, JsonSchema> };
}

/**
 * The events an API sends, as `router.openapi` lists them under `webhooks`: an event catalog (`defineEvents` from
 * `rest-webhooks/webhooks/delivery`) is one.
 */
export interface WebhookCatalog {
  readonly types: readonly string[];
  webhook(type: string): {
    summary: string;
    body: z.ZodType;
    headers: readonly { name: string; description: string }[];
  };
}

/** What {@link Router.openapi} takes besides `info`. */
export interface OpenApiExtra {
  servers?: OpenApiDocument["servers"];
  /** The events the API sends: one `POST` per type under the document's `webhooks` (OpenAPI 3.1 §4.8.1). */
  webhooks?: WebhookCatalog;
}

// One event type as a Path Item: the envelope as the request body, its signature headers, what the consumer answers.
function webhookItem(catalog: WebhookCatalog, type: string, converter: SchemaConverter): Record<string, JsonSchema> {
  const described = catalog.webhook(type);
  return {
    post: {
      operationId: `webhook.${type}`,
      summary: described.summary,
      parameters: described.headers.map((header) => ({
        name: header.name,
        in: "header",
        required: true,
        description: header.description,
        schema: { type: "string" },
      })),
      requestBody: {
        required: true,
        content: { "application/json": { schema: converter.convert(described.body, "output") } },
      },
      responses: {
        "2XX": { description: "Received: the event will not be sent again." },
        default: { description: "Not received (any other status, a time-out, a refused connection): retried later." },
      },
    },
  };
}

const PROBLEM_SCHEMA: JsonSchema = {
  type: "object",
  description: "An RFC 9457 problem document.",
  properties: {
    type: { type: "string", format: "uri-reference" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    instance: { type: "string", format: "uri-reference" },
    code: { type: "string", description: "Stable machine-readable code." },
    errors: {
      type: "array",
      items: {
        type: "object",
        properties: {
          pointer: { type: "string" },
          in: { enum: ["body", "query", "params", "headers"] },
          code: { type: "string" },
          message: { type: "string" },
        },
      },
    },
  },
  required: ["type", "title", "status", "code"],
};

/** Converts zod schemas, hoisting `$defs` (schemas with a `.meta({ id })`) into `components.schemas`. */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = { Problem: PROBLEM_SCHEMA };

  convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const converted = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
    const defs = (converted["$defs"] ?? {}) as Record<string, JsonSchema>;
    const renames = new Map<string, string>();
    for (const [id, def] of Object.entries(defs)) {
      let name = id;
      const existing = this.components[name];
      if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(rewrite(def, renames))) {
        name = `${id}${io === "input" ? "Input" : "Output"}`;
      }
      renames.set(id, name);
    }
    for (const [id, def] of Object.entries(defs))
      this.components[renames.get(id) as string] = rewrite(def, renames) as JsonSchema;
    const { $schema: _, $defs: __, ...rest } = converted;
    return rewrite(rest, renames) as JsonSchema;
  }
}

// JSON Schema refs are relative to the document: "#/$defs/X" becomes "#/components/schemas/X".
function rewrite(value: unknown, renames: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, renames));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$ref" && typeof inner === "string" && inner.startsWith("#/$defs/")) {
      const id = inner.slice("#/$defs/".length);
      out[key] = `#/components/schemas/${renames.get(id) ?? id}`;
    } else {
      out[key] = rewrite(inner, renames);
    }
  }
  return out;
}

function problemResponse(status: number): JsonSchema {
  return {
    description: reasonPhrase(status),
    content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: "#/components/schemas/Problem" } } },
  };
}

/**
 * The OpenAPI name of each template parameter. OpenAPI 3.1 §4.8.8.1: two templated paths that differ only
 * in parameter names are identical and must not both exist, so a template of an already seen shape takes
 * that shape's names (positionally). A bare "*" wildcard gets a real name (OpenAPI names are not "*").
 */
class PathNames {
  readonly #byShape = new Map<string, readonly string[]>();

  of(parsed: ParsedTemplate): Map<string, string> {
    const shape = templateShape(parsed, true);
    let names = this.#byShape.get(shape);
    if (names === undefined) {
      names = parsed.params.map((name) => (name === "*" ? uniqueName("wildcard", parsed.params) : name));
      this.#byShape.set(shape, names);
    }
    const out = new Map<string, string>();
    parsed.params.forEach((name, i) => {
      out.set(name, names[i] as string);
    });
    return out;
  }
}

function uniqueName(base: string, taken: readonly string[]): string {
  let name = base;
  while (taken.includes(name)) name += "_";
  return name;
}

function openApiPath(parsed: ParsedTemplate, names: ReadonlyMap<string, string>): string {
  if (parsed.segments.length === 0) return "/";
  const name = (param: string) => `{${names.get(param) ?? param}}`;
  return parsed.segments
    .map((segment) =>
      segment.kind === "static"
        ? `/${segment.value}`
        : segment.kind === "composite"
          ? `/${segment.pattern.parts.map((part) => (part.name === undefined ? part.literal : name(part.name))).join("")}`
          : `/${name(segment.name)}`,
    )
    .join("");
}

function parameters(
  route: RouteInfo,
  parsed: ParsedTemplate,
  names: ReadonlyMap<string, string>,
  converter: SchemaConverter,
): JsonSchema[] {
  const out: JsonSchema[] = [];
  const paramSchema = route.spec.params ? converter.convert(route.spec.params, "input") : undefined;
  const paramProperties = (paramSchema?.["properties"] ?? {}) as Record<string, JsonSchema>;
  for (const segment of parsed.segments) {
    if (segment.kind === "static") continue;
    const params = segment.kind === "composite" ? segment.pattern.names : [segment.name];
    for (const name of params) {
      const parameter: JsonSchema = {
        name: names.get(name) ?? name,
        in: "path",
        required: true,
        schema: paramProperties[name] ?? { type: "string" },
      };
      // OpenAPI 3.1 §4.8.12.1: allowReserved is for query parameters only; a client sends "/" in a path
      // parameter as %2F, which the router decodes back to "/" in a wildcard.
      if (segment.kind === "wildcard") {
        parameter["description"] = "The rest of the path: may contain '/', sent as is or as %2F.";
      }
      out.push(parameter);
    }
  }
  if (route.spec.query !== undefined) {
    const query = converter.convert(route.spec.query, "input");
    const required = new Set((query["required"] ?? []) as string[]);
    for (const [name, schema] of Object.entries((query["properties"] ?? {}) as Record<string, JsonSchema>)) {
      out.push({ name, in: "query", required: required.has(name), schema });
    }
  }
  return out;
}

function requestBody(route: RouteInfo, converter: SchemaConverter): JsonSchema | undefined {
  if (!readsBody(route)) return undefined;
  const body = route.spec.body;
  if (route.kind === "update") {
    const resource = body === undefined ? { type: "object" } : converter.convert(body, "input");
    return {
      required: true,
      description:
        "A JSON Merge Patch (RFC 7396): members left out are kept, members set to null are removed, objects merge.",
      content: { [MERGE_PATCH_CONTENT_TYPE]: { schema: mergePatchSchema(resource, converter.components) } },
    };
  }
  // A PUT without a body schema still takes JSON (any value): the handler checks it.
  const schema = body === undefined ? {} : converter.convert(body, "input");
  const content: JsonSchema = { "application/json": { schema } };
  if (route.spec.form === true) content["application/x-www-form-urlencoded"] = { schema };
  return { required: true, content };
}

function headerObjects(headers: Readonly<Record<string, DescribedHeader>>, method: string): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, header] of Object.entries(headers)) {
    if (!appliesTo(header.methods, method)) continue;
    out[name] = { description: header.description, schema: header.schema ?? { type: "string" } };
  }
  return out;
}

function responses(
  route: RouteInfo,
  converter: SchemaConverter,
  described: readonly MiddlewareDescription[],
): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  const schema = route.spec.response ? converter.convert(route.spec.response, "output") : undefined;
  const content = schema ? { "application/json": { schema } } : undefined;
  const success = (status: number, extra: JsonSchema = {}) => {
    out[String(status)] = { description: STATUS[status] ?? reasonPhrase(status), ...extra };
    if (content !== undefined && status !== 204) out[String(status)]!["content"] = content;
  };
  const declared = Object.entries(route.spec.responses ?? {}).map(
    ([status, response]) => [Number(status), response] as const,
  );
  // Declared success statuses replace the kind's default one.
  if (!declared.some(([status]) => status >= 200 && status < 300)) {
    switch (route.kind) {
      case "create":
        success(201, {
          headers: {
            Location: { description: "The new item's path.", schema: { type: "string", format: "uri-reference" } },
          },
        });
        break;
      case "remove":
        success(204);
        break;
      case "replace":
      case "update":
        success(content ? 200 : 204);
        break;
      default:
        success(200);
    }
  }
  const hasItem =
    route.kind === "read" || route.kind === "replace" || route.kind === "update" || route.kind === "remove";
  const body = readsBody(route);
  // 400: an unknown or invalid query parameter, or an empty or malformed JSON body.
  if (route.spec.query !== undefined || body) out["400"] = problemResponse(400);
  if (hasItem) out["404"] = problemResponse(404);
  // 413 from the adapters' body limit, 415 from the body reader.
  if (body) out["413"] = problemResponse(413);
  if (body) out["415"] = problemResponse(415);
  if (route.spec.params !== undefined || (body && route.spec.body !== undefined)) out["422"] = problemResponse(422);
  for (const description of described) {
    for (const [status, response] of Object.entries(description.responses ?? {})) {
      if (response === undefined || !appliesTo(response.methods, route.method)) continue;
      const problem = response.problem ?? Number(status) >= 400;
      out[status] = {
        ...(problem ? problemResponse(Number(status)) : {}),
        description: response.description,
        ...(response.headers === undefined ? {} : { headers: headerObjects(response.headers, route.method) }),
      };
    }
  }
  for (const [status, response] of declared) {
    const entry: JsonSchema = { description: response.description ?? reasonPhrase(status) };
    if (response.schema !== undefined) {
      entry["content"] = { "application/json": { schema: converter.convert(response.schema, "output") } };
    } else if (status >= 400) {
      Object.assign(entry, problemResponse(status), { description: entry["description"] });
    }
    if (response.headers !== undefined) entry["headers"] = headerObjects(response.headers, route.method);
    out[String(status)] = entry;
  }
  // Headers a middleware adds to every success response (ETag, Idempotent-Replayed, RateLimit).
  for (const description of described) {
    const headers = headerObjects(description.successHeaders ?? {}, route.method);
    if (Object.keys(headers).length === 0) continue;
    for (const [status, response] of Object.entries(out)) {
      if (status.startsWith("2")) response["headers"] = { ...(response["headers"] as object), ...headers };
    }
  }
  return out;
}

const OPENAPI_METHODS = new Set(["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]);
const STATUS: Record<number, string> = { 200: "OK", 201: "Created", 204: "No Content" };

/** Builds the OpenAPI 3.1 document of a route table. */
export function openApiDocument(
  routes: readonly { route: RouteInfo; parsed: ParsedTemplate; middleware: readonly unknown[] }[],
  info: OpenApiInfo,
  extra: OpenApiExtra = {},
): OpenApiDocument {
  const converter = new SchemaConverter();
  const securitySchemes: Record<string, JsonSchema> = {};
  const pathNames = new PathNames();
  const paths: OpenApiDocument["paths"] = {};
  for (const { route, parsed, middleware } of routes) {
    // OpenAPI 3.1 §4.8.9: a Path Item has fields for these methods only.
    if (!OPENAPI_METHODS.has(route.method)) continue;
    const operation: JsonSchema = { operationId: route.name };
    const tags = route.spec.tags ?? (route.resource ? [route.resource.split(".")[0] as string] : undefined);
    if (tags !== undefined) operation["tags"] = [...tags];
    if (route.spec.summary !== undefined) operation["summary"] = route.spec.summary;
    if (route.spec.description !== undefined) operation["description"] = route.spec.description;
    if (route.spec.deprecated) operation["deprecated"] = true;
    const names = pathNames.of(parsed);
    const described = middleware.map(middlewareDescription).filter((d) => d !== undefined);
    const params = parameters(route, parsed, names, converter);
    for (const description of described) {
      for (const [name, header] of Object.entries(description.requestHeaders ?? {})) {
        if (!appliesTo(header.methods, route.method)) continue;
        if (params.some((p) => p["in"] === "header" && p["name"] === name)) continue;
        params.push({
          name,
          in: "header",
          required: false,
          description: header.description,
          schema: header.schema ?? { type: "string" },
        });
      }
    }
    if (params.length > 0) operation["parameters"] = params;
    const body = requestBody(route, converter);
    if (body !== undefined) operation["requestBody"] = body;
    operation["responses"] = responses(route, converter, described);
    // OpenAPI 3.1 §4.8.30: each entry of `security` is an alternative; a layer's schemes are alternatives to each
    // other, and every layer must be satisfied, so layers with schemes combine into each alternative.
    const layers = described.map((d) => Object.keys(d.security ?? {})).filter((names) => names.length > 0);
    for (const d of described) Object.assign(securitySchemes, d.security);
    if (layers.length > 0) {
      let alternatives: Record<string, string[]>[] = [{}];
      for (const names of layers) {
        alternatives = alternatives.flatMap((alt) => names.map((name) => ({ ...alt, [name]: [] })));
      }
      operation["security"] = alternatives;
    }
    const path = openApiPath(parsed, names);
    paths[path] ??= {};
    (paths[path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = operation;
  }
  const webhooks: Record<string, Record<string, JsonSchema>> = {};
  const catalog = extra.webhooks;
  for (const type of catalog?.types ?? []) webhooks[type] = webhookItem(catalog as WebhookCatalog, type, converter);
  const components: OpenApiDocument["components"] = { schemas: converter.components };
  if (Object.keys(securitySchemes).length > 0) components.securitySchemes = securitySchemes;
  return {
    openapi: "3.1.0",
    info,
    ...(extra.servers === undefined ? {} : { servers: extra.servers }),
    paths,
    ...(catalog === undefined ? {} : { webhooks }),
    components,
  };
}
