/**
 * The resources `check` tests, read from an OpenAPI 3.1 document: a collection is a path whose POST takes a JSON
 * body and that has an item path (the collection plus one `{parameter}` segment) answering GET.
 */
import type fc from "fast-check";
import { fromJsonSchema, type JsonSchema } from "../testing/arbitraries/json-schema";

/** The parts of an OpenAPI 3.1 document read here (OpenAPI 3.1 §4.8). */
export interface OpenApiDocument {
  openapi?: string;
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
}

interface Operation {
  parameters?: { name?: string; in?: string }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

/** One collection and what its item answers, with value generators for the bodies. */
export interface OpenApiResource {
  /** The collection's path template, e.g. `/users/{user_id}/orders`. */
  collection: string;
  /** The item's path template, e.g. `/users/{user_id}/orders/{order_id}`. */
  item: string;
  createBody: fc.Arbitrary<unknown>;
  replaceBody: fc.Arbitrary<unknown> | undefined;
  patchBody: fc.Arbitrary<Record<string, unknown>> | undefined;
  supports: { list: boolean; put: boolean; patch: boolean; delete: boolean; idempotencyKey: boolean };
  /** Top-level fields of the item that are `format: date-time` (server clocks such as `updated_at`). */
  clockFields: string[];
}

const LIMITS = { maxRecursion: 2, maxAttempts: 100 };

function untrimmed(value: unknown): boolean {
  if (typeof value === "string") return value !== value.trim();
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some(untrimmed);
}

/**
 * Values derived from a request schema, without strings that start or end with whitespace: servers commonly trim
 * before validating (zod's `.trim().min(1)`), a rule JSON Schema cannot state, so `" "` would be refused as invalid.
 */
function bodies(document: OpenApiDocument, schema: JsonSchema): fc.Arbitrary<unknown> {
  return fromJsonSchema({ ...schema, components: document.components } as JsonSchema, LIMITS).filter(
    (value) => !untrimmed(value),
  );
}

function operation(document: OpenApiDocument, path: string, method: string): Operation | undefined {
  const value = document.paths?.[path]?.[method];
  return typeof value === "object" && value !== null ? (value as Operation) : undefined;
}

function bodySchema(op: Operation | undefined, mediaType: RegExp): JsonSchema | undefined {
  for (const [type, media] of Object.entries(op?.requestBody?.content ?? {})) {
    if (mediaType.test(type) && media.schema !== undefined) return media.schema;
  }
  return undefined;
}

function resolved(document: OpenApiDocument, schema: JsonSchema | undefined): JsonSchema | undefined {
  const ref = schema?.$ref;
  if (ref === undefined || !ref.startsWith("#/components/schemas/")) return schema;
  return document.components?.schemas?.[ref.slice("#/components/schemas/".length)] as JsonSchema | undefined;
}

function clockFields(document: OpenApiDocument, get: Operation | undefined): string[] {
  const schema = resolved(document, get?.responses?.["200"]?.content?.["application/json"]?.schema);
  return Object.entries(schema?.properties ?? {})
    .filter(([, property]) => resolved(document, property)?.format === "date-time")
    .map(([name]) => name);
}

function declaresIdempotencyKey(op: Operation): boolean {
  return (op.parameters ?? []).some((p) => p.in === "header" && p.name?.toLowerCase() === "idempotency-key");
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
const MERGE_PATCH = /^application\/merge-patch\+json$/;

/**
 * The collections of a document with their item paths and body generators.
 * @param document An OpenAPI 3.1 document, parsed.
 * @param idempotencyKey Run the Idempotency-Key laws even where the POST does not declare the header.
 * @example resourcesOf(await (await fetch(`${base}/openapi.json`)).json(), false)
 */
export function resourcesOf(document: OpenApiDocument, idempotencyKey: boolean): OpenApiResource[] {
  const paths = Object.keys(document.paths ?? {});
  const resources: OpenApiResource[] = [];
  for (const collection of paths) {
    const post = operation(document, collection, "post");
    const create = bodySchema(post, JSON_TYPE);
    if (post === undefined || create === undefined) continue;
    const item = paths.find(
      (p) => p.startsWith(`${collection}/{`) && /^\/\{[^/}]+\}$/.test(p.slice(collection.length)),
    );
    if (item === undefined || operation(document, item, "get") === undefined) continue;
    const replace = bodySchema(operation(document, item, "put"), JSON_TYPE);
    const patch = bodySchema(operation(document, item, "patch"), MERGE_PATCH);
    resources.push({
      collection,
      item,
      createBody: bodies(document, create),
      replaceBody: replace === undefined ? undefined : bodies(document, replace),
      patchBody: patch === undefined ? undefined : (bodies(document, patch) as fc.Arbitrary<Record<string, unknown>>),
      supports: {
        list: operation(document, collection, "get") !== undefined,
        put: replace !== undefined,
        patch: patch !== undefined,
        delete: operation(document, item, "delete") !== undefined,
        idempotencyKey: idempotencyKey || declaresIdempotencyKey(post),
      },
      clockFields: clockFields(document, operation(document, item, "get")),
    });
  }
  return resources;
}

/** The item template a collection template is nested under: `/users/{user_id}` for `/users/{user_id}/orders`. */
export function parentItem(collection: string): { item: string; rest: string } | undefined {
  const match = /^(.*\/\{[^/}]+\})(\/[^{}]*)$/.exec(collection);
  return match === null ? undefined : { item: match[1] as string, rest: match[2] as string };
}
