import type { z } from "zod";
import { middlewareDescription } from "../http/described";
import type { JsonBodyOptions } from "../http/json-limits";
import { OpenApiPaths } from "./openapi-paths";
import { parameters, requestBody } from "./openapi-request";
import { responses } from "./openapi-responses";
import { componentName, type JsonSchema, SchemaConverter } from "./openapi-schemas";
import type { ParsedTemplate } from "./template";
import type { RouteInfo } from "./types";

export type { JsonSchema } from "./openapi-schemas";

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
function webhookItem(
  catalog: WebhookCatalog,
  type: string,
  converter: SchemaConverter,
  operationId: string,
): Record<string, JsonSchema> {
  const described = catalog.webhook(type);
  return {
    post: {
      operationId,
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

// OpenAPI 3.1 §4.8.10.1: an operationId is unique among all operations, webhooks included. A route keeps its name
// (its documented operationId); a webhook whose `webhook.<type>` a route took gets the first free `_2`, `_3`…
function freeOperationId(base: string, taken: Set<string>): string {
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}

const OPENAPI_METHODS = new Set(["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]);

/**
 * Builds the OpenAPI 3.1 document of a route table.
 * @param routes each route, its parsed template, its middleware and the router's `json` option (`RouterOptions.json`,
 *   under the route's own), which says which body and query problems it can answer.
 * @param maxParamLength the router's bound on a path parameter (`RouterOptions.maxParamLength`), as documented.
 * @throws RoutingError `openapi_path_conflict` when two routes of one method would be one operation.
 */
export function openApiDocument(
  routes: readonly {
    route: RouteInfo;
    parsed: ParsedTemplate;
    middleware: readonly unknown[];
    json?: JsonBodyOptions | undefined;
  }[],
  info: OpenApiInfo,
  extra: OpenApiExtra = {},
  maxParamLength = 100,
): OpenApiDocument {
  const converter = new SchemaConverter();
  const securitySchemes: Record<string, JsonSchema> = {};
  const openApiPaths = new OpenApiPaths();
  const paths: OpenApiDocument["paths"] = {};
  for (const { route, parsed, middleware, json } of routes) {
    // OpenAPI 3.1 §4.8.9: a Path Item has fields for these methods only.
    if (!OPENAPI_METHODS.has(route.method)) continue;
    const operation: JsonSchema = { operationId: route.name };
    const tags = route.spec.tags ?? (route.resource ? [route.resource.split(".")[0] as string] : undefined);
    if (tags !== undefined) operation["tags"] = [...tags];
    if (route.spec.summary !== undefined) operation["summary"] = route.spec.summary;
    if (route.spec.description !== undefined) operation["description"] = route.spec.description;
    if (route.spec.deprecated) operation["deprecated"] = true;
    const { path, names } = openApiPaths.place(route, parsed);
    const described = middleware.map(middlewareDescription).filter((d) => d !== undefined);
    const params = parameters(route, parsed, names, converter, described, maxParamLength);
    if (params.length > 0) operation["parameters"] = params;
    const body = requestBody(route, converter);
    if (body !== undefined) operation["requestBody"] = body;
    operation["responses"] = responses(route, parsed, converter, described, json);
    // OpenAPI 3.1 §4.8.30: each entry of `security` is an alternative; a layer's schemes are alternatives to each
    // other, and every layer must be satisfied, so layers with schemes combine into each alternative.
    // Security Scheme names are component names (§4.8.7.1): written as schema ids are, in components and requirements.
    const layers = described
      .map((d) => Object.keys(d.security ?? {}).map(componentName))
      .filter((names) => names.length > 0);
    for (const d of described) {
      for (const [name, scheme] of Object.entries(d.security ?? {})) securitySchemes[componentName(name)] = scheme;
    }
    if (layers.length > 0) {
      let alternatives: Record<string, string[]>[] = [{}];
      for (const names of layers) {
        alternatives = alternatives.flatMap((alt) => names.map((name) => ({ ...alt, [name]: [] })));
      }
      operation["security"] = alternatives;
    }
    paths[path] ??= {};
    (paths[path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = operation;
  }
  const webhooks: Record<string, Record<string, JsonSchema>> = {};
  const catalog = extra.webhooks;
  const operationIds = new Set(
    routes.filter(({ route }) => OPENAPI_METHODS.has(route.method)).map(({ route }) => route.name),
  );
  for (const type of catalog?.types ?? []) {
    if (Object.hasOwn(webhooks, type)) continue;
    const operationId = freeOperationId(`webhook.${type}`, operationIds);
    webhooks[type] = webhookItem(catalog as WebhookCatalog, type, converter, operationId);
  }
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
