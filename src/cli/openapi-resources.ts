/**
 * The resources `check` tests, read from an OpenAPI 3.1 document: a collection is a path whose POST takes a JSON
 * body and that has an item path (the collection plus one `{parameter}` segment) answering GET.
 */
import type fc from "fast-check";
import { ArbitraryDerivationError, fromJsonSchema, type JsonSchema } from "../testing/arbitraries/json-schema";
import { UsageError } from "./output";

/** The parts of an OpenAPI 3.1 document read here (OpenAPI 3.1 §4.8). */
export interface OpenApiDocument {
  openapi?: string;
  paths?: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown> | undefined>;
}

interface Parameter {
  name?: string;
  in?: string;
}

interface Content {
  content?: Record<string, { schema?: JsonSchema }>;
}

interface Operation {
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
}

/** The request schemas of one collection and its item, as the document declares them. */
export interface ResourceSchemas {
  create: JsonSchema;
  replace: JsonSchema | undefined;
  patch: JsonSchema | undefined;
}

/** One collection and what its item answers. */
export interface OpenApiResource {
  /** The collection's path template, e.g. `/users/{user_id}/orders`. */
  collection: string;
  /** The item's path template, e.g. `/users/{user_id}/orders/{order_id}`. */
  item: string;
  /** The request body schemas; {@link resourceBodies} turns them into value generators. */
  schemas: ResourceSchemas;
  supports: { list: boolean; put: boolean; patch: boolean; delete: boolean; idempotencyKey: boolean };
  /** Top-level fields of the item that are `format: date-time` (server clocks such as `updated_at`). */
  clockFields: string[];
}

/** Value generators for a resource's request bodies. */
export interface ResourceBodies {
  createBody: fc.Arbitrary<unknown>;
  replaceBody: fc.Arbitrary<unknown> | undefined;
  patchBody: fc.Arbitrary<Record<string, unknown>> | undefined;
}

const LIMITS = { maxRecursion: 2, maxAttempts: 100 };
const MAX_REFERENCE_HOPS = 10;

function untrimmed(value: unknown): boolean {
  if (typeof value === "string") return value !== value.trim();
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some(untrimmed);
}

/**
 * Values derived from a request schema, without strings that start or end with whitespace: servers commonly trim
 * before validating (zod's `.trim().min(1)`), a rule JSON Schema cannot state, so `" "` would be refused as invalid.
 * A schema no values can be derived from is misuse of `check`, named by its operation; so is a malformed one
 * (`pattern: "("`, `properties: { a: null }`, `enum: []`, `minLength: -1`), which the derivation refuses with an
 * {@link ArbitraryDerivationError} too; anything else it throws is named as malformed all the same.
 */
function bodies(document: OpenApiDocument, schema: JsonSchema, operation: string): fc.Arbitrary<unknown> {
  try {
    return fromJsonSchema({ ...schema, components: document.components } as JsonSchema, LIMITS).filter(
      (value) => !untrimmed(value),
    );
  } catch (error) {
    const why = error instanceof ArbitraryDerivationError ? error.message : `it is malformed (${String(error)})`;
    throw new UsageError(`cannot derive request bodies for ${operation} from its schema: ${why}`, { cause: error });
  }
}

/**
 * Value generators for the bodies of one resource, derived only when it is tested (a collection left out with
 * `--path` may have schemas nothing can be derived from). A {@link UsageError} naming the operation otherwise.
 */
export function resourceBodies(document: OpenApiDocument, resource: OpenApiResource): ResourceBodies {
  const { create, replace, patch } = resource.schemas;
  return {
    createBody: bodies(document, create, `POST ${resource.collection}`),
    replaceBody: replace === undefined ? undefined : bodies(document, replace, `PUT ${resource.item}`),
    patchBody:
      patch === undefined
        ? undefined
        : (bodies(document, patch, `PATCH ${resource.item}`) as fc.Arbitrary<Record<string, unknown>>),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

// RFC 6901 §6: a pointer in a URI fragment is percent-encoded; §4: then ~1 is "/" and ~0 is "~". A malformed
// escape ("%zz") makes the pointer invalid: it points at nothing rather than throwing a URIError.
function pointerToken(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
  } catch {
    return undefined;
  }
}

// OpenAPI 3.1 §4.8.23: a Reference Object `{ $ref }` stands for the object it points at (JSON Pointer, RFC 6901).
function dereferenced(document: OpenApiDocument, value: unknown): unknown {
  let node = value;
  for (let hop = 0; hop < MAX_REFERENCE_HOPS; hop++) {
    const ref = isObject(node) ? node.$ref : undefined;
    if (typeof ref !== "string") return node;
    if (!ref.startsWith("#/")) return undefined;
    node = document;
    for (const raw of ref.slice(2).split("/")) {
      const token = pointerToken(raw);
      node = isObject(node) && token !== undefined ? node[token] : undefined;
    }
  }
  return undefined;
}

function operation(document: OpenApiDocument, path: string, method: string): Operation | undefined {
  const value = document.paths?.[path]?.[method];
  return isObject(value) ? (value as Operation) : undefined;
}

// RFC 9110 §8.3.1: media-type = type "/" subtype parameters, case-insensitive; a charset does not change the type.
function essence(mediaType: string): string {
  return (mediaType.split(";")[0] ?? "").trim().toLowerCase();
}

function contentSchema(document: OpenApiDocument, holder: unknown, mediaType: RegExp): JsonSchema | undefined {
  const content = (dereferenced(document, holder) as Content | undefined)?.content;
  for (const [type, media] of Object.entries(isObject(content) ? content : {})) {
    if (mediaType.test(essence(type)) && media?.schema !== undefined) return media.schema;
  }
  return undefined;
}

function clockFields(document: OpenApiDocument, get: Operation | undefined): string[] {
  const schema = dereferenced(document, contentSchema(document, get?.responses?.["200"], JSON_TYPE)) as
    | JsonSchema
    | undefined;
  return Object.entries(schema?.properties ?? {})
    .filter(([, property]) => (dereferenced(document, property) as JsonSchema | undefined)?.format === "date-time")
    .map(([name]) => name);
}

/**
 * The parameters that apply to an operation: its Path Item's, overridden by the operation's own with the same
 * name and location (OpenAPI 3.1 §4.8.9, §4.8.10), each Reference Object resolved.
 */
function parametersOf(document: OpenApiDocument, path: string, op: Operation): Parameter[] {
  const pathItem = document.paths?.[path];
  const byKey = new Map<string, Parameter>();
  for (const list of [pathItem?.parameters, op.parameters]) {
    for (const raw of Array.isArray(list) ? list : []) {
      const parameter = dereferenced(document, raw);
      if (!isObject(parameter) || typeof parameter.name !== "string") continue;
      // Header names are case-insensitive (RFC 9110 §5.1); other locations' names are not.
      const name = parameter.in === "header" ? parameter.name.toLowerCase() : parameter.name;
      byKey.set(`${String(parameter.in)} ${name}`, parameter as Parameter);
    }
  }
  return [...byKey.values()];
}

function declaresIdempotencyKey(document: OpenApiDocument, path: string, op: Operation): boolean {
  return parametersOf(document, path, op).some((p) => p.in === "header" && p.name?.toLowerCase() === "idempotency-key");
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
const MERGE_PATCH = /^application\/merge-patch\+json$/;

/**
 * The collections of a document with their item paths and request schemas.
 * @param document An OpenAPI 3.1 document, parsed.
 * @param idempotencyKey Run the Idempotency-Key laws even where the POST does not declare the header.
 * @example resourcesOf(await (await fetch(`${base}/openapi.json`)).json(), false)
 */
export function resourcesOf(document: OpenApiDocument, idempotencyKey: boolean): OpenApiResource[] {
  const paths = Object.keys(document.paths ?? {});
  const resources: OpenApiResource[] = [];
  for (const collection of paths) {
    const post = operation(document, collection, "post");
    const create = contentSchema(document, post?.requestBody, JSON_TYPE);
    if (post === undefined || create === undefined) continue;
    const item = paths.find(
      (p) => p.startsWith(`${collection}/{`) && /^\/\{[^/}]+\}$/.test(p.slice(collection.length)),
    );
    if (item === undefined || operation(document, item, "get") === undefined) continue;
    const replace = contentSchema(document, operation(document, item, "put")?.requestBody, JSON_TYPE);
    const patch = contentSchema(document, operation(document, item, "patch")?.requestBody, MERGE_PATCH);
    resources.push({
      collection,
      item,
      schemas: { create, replace, patch },
      supports: {
        list: operation(document, collection, "get") !== undefined,
        put: replace !== undefined,
        patch: patch !== undefined,
        delete: operation(document, item, "delete") !== undefined,
        idempotencyKey: idempotencyKey || declaresIdempotencyKey(document, collection, post),
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
