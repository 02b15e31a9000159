import { z } from "zod";

/** A JSON Schema object (draft 2020-12, the OpenAPI 3.1 dialect). */
export type JsonSchema = { [keyword: string]: unknown };

const COMPONENT_REF = "#/components/schemas/";

/** The `Problem` component every problem response refers to (RFC 9457 §3.1, with this library's members). */
export const PROBLEM_SCHEMA: JsonSchema = {
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

/**
 * Converts zod schemas, hoisting `$defs` (schemas with a `.meta({ id })`, and zod's `__schemaN` for unnamed
 * recursive ones) into `components.schemas`. Every `$ref` must lead to the schema that validates the value, so a
 * definition takes its id only when that component is free or already holds the same schema; otherwise it takes
 * the first free (or identical) name of `<id>Input`/`<id>Output`, `<id>Input2`, `<id>Input3`…
 */
export class SchemaConverter {
  readonly components: Record<string, JsonSchema> = { Problem: PROBLEM_SCHEMA };
  /** The JSON Merge Patch component of each component a PATCH body refers to (see `mergePatchSchema`). */
  readonly patches = new Map<string, string>();

  convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const converted = z.toJSONSchema(schema, {
      io,
      unrepresentable: (site) => unrepresentable(site.zodSchema, io),
      target: "draft-2020-12",
    }) as JsonSchema;
    const defs = (converted["$defs"] ?? {}) as Record<string, JsonSchema>;
    const renames = this.#names(defs, io);
    for (const [id, def] of Object.entries(defs)) {
      this.components[renames.get(id) as string] = rewrite(def, renames) as JsonSchema;
    }
    const { $schema: _, $defs: __, ...rest } = converted;
    return rewrite(rest, renames) as JsonSchema;
  }

  /**
   * The component name of each definition of one conversion. A definition's content depends on the names of the
   * definitions it refers to, so the names are settled together: a definition whose name is taken by another
   * schema (in the document, or earlier in this batch) moves to its next candidate, and the batch is compared
   * again until no name moves. Names only move forward, so this ends.
   */
  #names(defs: Readonly<Record<string, JsonSchema>>, io: "input" | "output"): Map<string, string> {
    const ids = Object.keys(defs);
    const attempts = new Map(ids.map((id) => [id, 0]));
    const renames = new Map(ids.map((id) => [id, candidate(id, io, 0)]));
    for (let moved = true; moved; ) {
      moved = false;
      const claimed = new Set<string>();
      for (const id of ids) {
        const name = renames.get(id) as string;
        const existing = this.components[name];
        const taken =
          claimed.has(name) ||
          (existing !== undefined && !sameJson(existing, rewrite(defs[id], renames) as JsonSchema));
        if (taken) {
          const attempt = (attempts.get(id) as number) + 1;
          attempts.set(id, attempt);
          renames.set(id, candidate(id, io, attempt));
          moved = true;
        }
        claimed.add(renames.get(id) as string);
      }
    }
    return renames;
  }
}

// The zod types whose whole schema zod's "any" fallback leaves as `{}`; other sites only lose one keyword there
// (a bigint default, a dynamic catch value, a multipleOf of 0), the rest of the schema still saying what it takes.
const COLLAPSING = new Set([
  "bigint",
  "symbol",
  "undefined",
  "void",
  "date",
  "nan",
  "custom",
  "function",
  "transform",
  "map",
  "set",
]);

/**
 * What stands for a zod schema JSON Schema cannot express. A Date in a response is what JSON.stringify writes of it,
 * `toISOString()` (ECMA-262 §21.4.4.37), an RFC 3339 date-time; anything else is still any value, but says why in
 * `x-zod-unrepresentable` (its zod type; OpenAPI 3.1 §4.8.24 allows extensions in a Schema Object) and a description,
 * rather than a bare `{}` a reader or a client generator takes for "any value, on purpose".
 */
function unrepresentable(schema: z.core.$ZodType, io: "input" | "output"): JsonSchema | "any" {
  const def = schema._zod.def as z.core.$ZodTypeDef & { values?: readonly unknown[] };
  const type = def.type;
  // A literal loses only its `undefined` (a member left out); a bigint one became the JSON number, which it refuses.
  const whole =
    COLLAPSING.has(type) || (type === "literal" && (def.values ?? []).some((value) => typeof value === "bigint"));
  if (!whole) return "any";
  if (type === "date" && io === "output") return { type: "string", format: "date-time" };
  return {
    description: `A zod ${type}, which JSON Schema cannot express: any value is documented.`,
    "x-zod-unrepresentable": type,
  };
}

function candidate(id: string, io: "input" | "output", attempt: number): string {
  const name = componentName(id);
  if (attempt === 0) return name;
  const suffix = io === "input" ? "Input" : "Output";
  return attempt === 1 ? `${name}${suffix}` : `${name}${suffix}${attempt}`;
}

/**
 * OpenAPI 3.1 §4.8.7.1: component names (schemas, security schemes…) match ^[a-zA-Z0-9.\-_]+$. Another character of
 * an id (a space, a "/") becomes "_", which also keeps every `$ref` a plain JSON Pointer, nothing to escape.
 */
export function componentName(id: string): string {
  return id === "" ? "_" : id.replace(/[^A-Za-z0-9._-]/g, "_");
}

// RFC 6901 §4: zod escapes an id's "/" and "~" in its `$ref` ("~1" before "~0").
function unescapePointer(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

// Both sides come from the same conversion and rewrite, so key order is the same for equal schemas.
function sameJson(a: JsonSchema, b: JsonSchema): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// JSON Schema refs are relative to the document: "#/$defs/X" becomes "#/components/schemas/X".
function rewrite(value: unknown, renames: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, renames));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$ref" && typeof inner === "string" && inner.startsWith("#/$defs/")) {
      const id = unescapePointer(inner.slice("#/$defs/".length));
      out[key] = `${COMPONENT_REF}${renames.get(id) ?? componentName(id)}`;
    } else {
      out[key] = rewrite(inner, renames);
    }
  }
  return out;
}

/**
 * The schema a root `$ref` points to (a schema given an id converts to a bare reference), followed through
 * `components`; any other schema as it is.
 */
export function dereference(schema: JsonSchema, components: Readonly<Record<string, JsonSchema>>): JsonSchema {
  let current = schema;
  const seen = new Set<string>();
  for (;;) {
    const ref = current["$ref"];
    if (typeof ref !== "string" || !ref.startsWith(COMPONENT_REF) || seen.has(ref)) return current;
    seen.add(ref);
    const target = components[ref.slice(COMPONENT_REF.length)];
    if (target === undefined) return current;
    current = target;
  }
}
