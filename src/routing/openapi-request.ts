import { appliesTo, type MiddlewareDescription } from "../http/described";
import { acceptedMediaTypes } from "./accepted-media";
import { MERGE_PATCH_CONTENT_TYPE } from "./merge-patch";
import { mergePatchSchema } from "./merge-patch-schema";
import { dereference, type JsonSchema, type SchemaConverter } from "./openapi-schemas";
import { readsBody } from "./operation";
import type { ParsedTemplate } from "./template";
import type { RouteInfo } from "./types";

// A params or query schema given an id converts to a bare $ref: its members are those of the component.
function objectMembers(
  schema: JsonSchema,
  converter: SchemaConverter,
): { properties: Record<string, JsonSchema>; required: Set<string> } {
  const object = dereference(schema, converter.components);
  return {
    properties: (object["properties"] ?? {}) as Record<string, JsonSchema>,
    required: new Set((object["required"] ?? []) as string[]),
  };
}

/**
 * What the router takes in a path parameter: a whole segment is never empty (an empty one matches only a wildcard),
 * and no value but a wildcard's is longer than `maxParamLength` (a 400 `param_too_long`). JSON Schema counts
 * characters where the router counts UTF-16 units, so the bound is one the router never goes past; a params
 * schema's own tighter bounds stay.
 */
function pathSchema(given: JsonSchema | undefined, kind: string, maxParamLength: number): JsonSchema {
  const schema: JsonSchema = { ...(given ?? { type: "string" }) };
  if (kind === "wildcard") return schema;
  const min = schema["minLength"];
  if (kind !== "composite" && !(typeof min === "number" && min >= 1)) schema["minLength"] = 1;
  const max = schema["maxLength"];
  if (!(typeof max === "number" && max <= maxParamLength)) schema["maxLength"] = maxParamLength;
  return schema;
}

/** The path, query and header parameters of an operation (OpenAPI 3.1 §4.8.12). */
export function parameters(
  route: RouteInfo,
  parsed: ParsedTemplate,
  names: ReadonlyMap<string, string>,
  converter: SchemaConverter,
  described: readonly MiddlewareDescription[],
  maxParamLength: number,
): JsonSchema[] {
  const out: JsonSchema[] = [];
  const params = route.spec.params
    ? objectMembers(converter.convert(route.spec.params, "input"), converter)
    : undefined;
  for (const segment of parsed.segments) {
    if (segment.kind === "static") continue;
    for (const name of segment.kind === "composite" ? segment.pattern.names : [segment.name]) {
      const parameter: JsonSchema = {
        name: names.get(name) ?? name,
        in: "path",
        required: true,
        schema: pathSchema(params?.properties[name], segment.kind, maxParamLength),
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
    const query = objectMembers(converter.convert(route.spec.query, "input"), converter);
    for (const [name, schema] of Object.entries(query.properties)) {
      out.push({ name, in: "query", required: query.required.has(name), schema });
    }
  }
  for (const description of described) {
    for (const [name, header] of Object.entries(description.requestHeaders ?? {})) {
      if (!appliesTo(header.methods, route.method)) continue;
      const existing = out.find((p) => p["in"] === "header" && p["name"] === name);
      // One layer refusing a request without it is enough to make it required.
      if (existing !== undefined) {
        if (header.required === true) existing["required"] = true;
        continue;
      }
      out.push({
        name,
        in: "header",
        required: header.required ?? false,
        description: header.description,
        schema: header.schema ?? { type: "string" },
      });
    }
  }
  return out;
}

/** The request body of an operation that reads one (OpenAPI 3.1 §4.8.13). */
export function requestBody(route: RouteInfo, converter: SchemaConverter): JsonSchema | undefined {
  if (!readsBody(route)) return undefined;
  const body = route.spec.body;
  if (route.kind === "update") {
    // RFC 7396 §2: a patch that is not an object replaces the whole resource; without a body schema to refuse the
    // result, the router takes any JSON value.
    const resource = body === undefined ? {} : converter.convert(body, "input");
    return {
      // The router reads every PATCH: an empty one is malformed JSON (400).
      required: true,
      description:
        "A JSON Merge Patch (RFC 7396): members left out are kept, members set to null are removed, objects merge.",
      content: {
        [MERGE_PATCH_CONTENT_TYPE]: { schema: mergePatchSchema(resource, converter.components, converter.patches) },
      },
    };
  }
  // A PUT without a body schema still takes JSON (any value): the handler checks it.
  const schema = body === undefined ? {} : converter.convert(body, "input");
  // The types its OPTIONS answer and its 415s name: JSON (and a form with `form`), or its `requestMediaTypes`.
  const content: JsonSchema = {};
  for (const type of acceptedMediaTypes(route)) content[type] = { schema };
  // §4.8.13.1 `required`: the router takes an empty body as absent when the schema accepts `undefined`.
  return { required: body?.safeParse(undefined).success !== true, content };
}
