import type { JsonSchema } from "./openapi-schemas";

const COMPONENT_REF = "#/components/schemas/";
// Keywords that make members mandatory: a merge patch may leave out any member (RFC 7396 §2). And `default`: a member
// left out of a patch keeps its current value, never the default (JSON Schema's "value when absent" would be false).
const DROPPED = new Set(["required", "dependentRequired", "minProperties", "default"]);
// Keywords whose subschemas describe members of the same object, and so are patched alike.
const SAME_OBJECT = new Set(["allOf", "anyOf", "oneOf", "if", "then", "else"]);
// Keywords whose subschemas describe member values, each of which a patch may merge into or remove.
const MEMBER_MAPS = new Set(["properties", "patternProperties", "dependentSchemas"]);

/**
 * The JSON Schema of a JSON Merge Patch (RFC 7396 §2) for documents that `schema` describes: every
 * object reached through object members, at any depth, loses `required` (a patch may leave members out)
 * and its members their `default` (one left out keeps its value), and each member may also be `null` (which
 * removes it). Array items keep their full schema, because a
 * patch replaces an array wholesale. A `$ref` to a component refers to a `<Name>MergePatch` component,
 * added to `components` (recursive schemas included); `<Name>MergePatch2`… when that name holds another schema.
 * @param components `components.schemas` of the document, read and extended.
 * @param patches the patch component of each component patched so far, read and extended.
 */
export function mergePatchSchema(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  patches: Map<string, string>,
): JsonSchema {
  return patchOf(schema, { components, patches }) as JsonSchema;
}

interface Patching {
  readonly components: Record<string, JsonSchema>;
  readonly patches: Map<string, string>;
}

function patchOf(schema: unknown, state: Patching): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(schema as JsonSchema)) {
    if (DROPPED.has(keyword)) continue;
    if (keyword === "$ref" && typeof value === "string" && value.startsWith(COMPONENT_REF)) {
      out[keyword] = `${COMPONENT_REF}${patchComponent(value.slice(COMPONENT_REF.length), state)}`;
    } else if (MEMBER_MAPS.has(keyword) && value !== null && typeof value === "object") {
      const members: JsonSchema = {};
      for (const [name, member] of Object.entries(value as JsonSchema)) {
        members[name] = nullable(patchOf(member, state));
      }
      out[keyword] = members;
    } else if (keyword === "additionalProperties" || keyword === "unevaluatedProperties") {
      out[keyword] = value === false ? false : nullable(patchOf(value, state));
    } else if (keyword === "oneOf" && Array.isArray(value)) {
      // Partial branches may overlap (the empty patch fits them all): "exactly one" becomes "any".
      out["anyOf"] = value.map((branch) => patchOf(branch, state));
    } else if (SAME_OBJECT.has(keyword)) {
      out[keyword] = Array.isArray(value) ? value.map((branch) => patchOf(branch, state)) : patchOf(value, state);
    } else {
      out[keyword] = value;
    }
  }
  return out;
}

function patchComponent(name: string, state: Patching): string {
  const known = state.patches.get(name);
  if (known !== undefined) return known;
  const { components } = state;
  const original = components[name];
  if (original === undefined) return name;
  // A component of that name may be a schema of the API's own: the patch takes the next free name.
  let patchName = `${name}MergePatch`;
  for (let n = 2; components[patchName] !== undefined; n++) patchName = `${name}MergePatch${n}`;
  // Registered before it is built, so a schema that refers to itself ends.
  state.patches.set(name, patchName);
  components[patchName] = {};
  components[patchName] = patchOf(original, state) as JsonSchema;
  return patchName;
}

// RFC 7396 §2: a member set to null removes the member.
function nullable(schema: unknown): unknown {
  if (schema === true) return true;
  return { anyOf: [schema, { type: "null" }] };
}
