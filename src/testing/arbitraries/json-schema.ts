import fc from "fast-check";
import { BoundedFilter } from "./bounded-filter";
import { ArbitraryDerivationError } from "./derivation-error";
import { numberArbitrary } from "./json-schema-number";
import { formatArbitrary } from "./string-formats";

export { ArbitraryDerivationError } from "./derivation-error";

/** The subset of JSON Schema (draft 2020-12) that zod 4's `z.toJSONSchema` emits and we derive values from. */
export interface JsonSchema {
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  format?: string;
  pattern?: string;
  /** The `alg` a `format: "jwt"` names: `fromZod` carries `z.jwt({ alg })` here (no JSON Schema keyword says it). */
  "x-jwt-alg"?: string;
}

/** How deep recursive schemas are expanded. */
export interface DerivationLimits {
  /** How many times one `$ref` may be expanded inside itself (recursive `z.lazy` or getter schemas). */
  maxRecursion: number;
  /** How many generated strings in a row may miss a `pattern` and length bounds before generation fails. */
  maxAttempts: number;
}

interface Context {
  root: JsonSchema;
  limits: DerivationLimits;
  /** `$ref`s being expanded on the current path, with how many times each. */
  expanding: Map<string, number>;
}

// A branch with no finite value left within the recursion bound: its parent drops it (an optional
// property, an empty array, another alternative) or, when it cannot, is cut too.
type Derived = fc.Arbitrary<unknown> | undefined;

/** JSON Pointer (RFC 6901) of a same-document `$ref`, resolved in the root schema. */
function resolveRef(ref: string, root: JsonSchema): JsonSchema {
  if (ref !== "#" && !ref.startsWith("#/")) {
    throw new ArbitraryDerivationError(`cannot derive values across documents: $ref "${ref}" is not local`);
  }
  let node: unknown = root;
  for (const raw of ref === "#" ? [] : ref.slice(2).split("/")) {
    // RFC 6901 §4: ~1 is "/", then ~0 is "~"; JSON Schema refs are also URI fragments (percent-encoded).
    const token = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[token] : undefined;
    if (node === undefined) throw new ArbitraryDerivationError(`$ref "${ref}" points at nothing`);
  }
  return node as JsonSchema;
}

// Whether every one of 50 values (fixed seed: the choice is deterministic) matches the pattern.
function agrees(arbitrary: fc.Arbitrary<string>, pattern: RegExp): boolean {
  return fc.sample(arbitrary, { numRuns: 50, seed: 0 }).every((value) => pattern.test(value));
}

// How many of 50 values (fixed seed) `accepts` takes.
function acceptedOf(arbitrary: fc.Arbitrary<string>, accepts: (value: string) => boolean): number {
  return fc.sample(arbitrary, { numRuns: 50, seed: 0 }).filter(accepts).length;
}

// A candidate taking 10 of 50 values misses `maxAttempts` (100) in a row with a chance below 1e-9.
const ENOUGH = 10;
const SIZES = ["xsmall", "small", "medium", "large", "xlarge"] as const;

// A pattern is an ECMA-262 regular expression (draft 2020-12 §6.4), and zod emits a `/…/u` pattern's source
// without its flag: read it with "u" (`\p{L}`, astral characters), else without (a source valid only so, `\'`).
function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern, "u");
  } catch {
    return new RegExp(pattern);
  }
}

// JSON Schema 2020-12 validation §6.3.1–6.3.2 (minLength, maxLength) and §6.4.1–6.4.2 (minItems, maxItems): each
// MUST be a non-negative integer. Generating from a negative one ran out of memory.
function lengthBounds(
  schema: JsonSchema,
  min: "minLength" | "minItems",
  max: "maxLength" | "maxItems",
): [number, number | undefined] {
  const low: unknown = schema[min] ?? 0;
  const high: unknown = schema[max];
  for (const [keyword, value] of [
    [min, low],
    [max, high ?? 0],
  ] as const) {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new ArbitraryDerivationError(`the schema is malformed: ${keyword} must be a non-negative integer`);
    }
  }
  if (high !== undefined && (low as number) > (high as number)) {
    throw new ArbitraryDerivationError(`${min} ${low} is past ${max} ${high}: no value has such a length`);
  }
  return [low as number, high as number | undefined];
}

function stringArbitrary(schema: JsonSchema, ctx: Context): fc.Arbitrary<string> {
  const [minLength, maxLength] = lengthBounds(schema, "minLength", "maxLength");
  const format = formatArbitrary(schema.format, schema["x-jwt-alg"]);
  const anyString = () => fc.string({ minLength, maxLength: maxLength ?? Math.max(20, minLength) });
  if (schema.pattern === undefined) return format ?? anyString();
  const pattern = compile(schema.pattern);
  const accepts = (value: unknown) =>
    typeof value === "string" &&
    pattern.test(value) &&
    value.length >= minLength &&
    (maxLength === undefined || value.length <= maxLength);
  // The pattern is what the schema checks (zod's email pattern is stricter than most addresses): a format's
  // realistic values when they match it, else values generated from the pattern at growing sizes, since a
  // pattern's repetitions reach a minLength only at a size scaled to it. The first candidate that meets the
  // length bounds often enough is kept, else the one that meets them most.
  const candidates: fc.Arbitrary<string>[] = [];
  if (format !== undefined && agrees(format, pattern)) candidates.push(format);
  try {
    for (const size of SIZES) candidates.push(fc.stringMatching(pattern, { size }));
  } catch {
    // fast-check cannot generate from this regex (lookarounds, back-references): strings, filtered below.
    candidates.push(format ?? anyString());
  }
  let base = candidates[0] as fc.Arbitrary<string>;
  let best = -1;
  for (const candidate of candidates) {
    const accepted = acceptedOf(candidate, accepts);
    if (accepted > best) [base, best] = [candidate, accepted];
    if (accepted >= ENOUGH) break;
  }
  return new BoundedFilter(base, accepts, ctx.limits.maxAttempts, () => {
    return new ArbitraryDerivationError(
      `no string generated in ${ctx.limits.maxAttempts} tries matched pattern /${schema.pattern}/ with length ${minLength}..${maxLength ?? "∞"}`,
    );
  });
}

function arrayArbitrary(schema: JsonSchema, ctx: Context, depth: number): Derived {
  const [minLength, maxLength] = lengthBounds(schema, "minItems", "maxItems");
  if (schema.prefixItems) {
    const parts = schema.prefixItems.map((s) => derive(s, ctx, depth + 1));
    return parts.every((p) => p !== undefined) ? fc.tuple(...(parts as fc.Arbitrary<unknown>[])) : undefined;
  }
  const items = schema.items ? derive(schema.items, ctx, depth + 1) : fc.jsonValue({ maxDepth: 1 });
  // Past the recursion bound an item has no value left: only the empty array remains, if allowed.
  if (items === undefined) return minLength === 0 ? fc.constant([]) : undefined;
  return fc.array(items, { minLength, maxLength: maxLength ?? Math.max(depth > 2 ? 1 : 4, minLength) });
}

function objectArbitrary(schema: JsonSchema, ctx: Context, depth: number): Derived {
  const required = new Set(schema.required ?? []);
  const properties = schema.properties ?? {};
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, child] of Object.entries(properties)) {
    const value = derive(child, ctx, depth + 1);
    if (value !== undefined) record[name] = value;
    else if (required.has(name)) return undefined;
  }
  // A required name with no property schema is an additional property (draft 2020-12 §10.3.2.3): its value
  // follows `additionalProperties` (zod's record over an enum of keys lists them all as required).
  for (const name of required) {
    if (Object.hasOwn(properties, name)) continue;
    const extra = schema.additionalProperties;
    if (extra === false) {
      throw new ArbitraryDerivationError(`property "${name}" is required, but additionalProperties is false`);
    }
    const value = extra === undefined || extra === true ? fc.jsonValue({ maxDepth: 1 }) : derive(extra, ctx, depth + 1);
    if (value === undefined) return undefined;
    record[name] = value;
  }
  return fc.record(record, { requiredKeys: Object.keys(record).filter((name) => required.has(name)) });
}

// allOf of object schemas (zod's intersections): one object with every part's properties.
function mergeAllOf(parts: JsonSchema[], ctx: Context): JsonSchema {
  const resolved = parts.map((part) => (part.$ref === undefined ? part : resolveRef(part.$ref, ctx.root)));
  if (!resolved.every((part) => part.type === "object" || part.properties !== undefined)) {
    return resolved[0] as JsonSchema; // the zod schema's safeParse checks the other parts
  }
  return {
    type: "object",
    properties: Object.assign({}, ...resolved.map((part) => part.properties ?? {})),
    required: resolved.flatMap((part) => part.required ?? []),
  };
}

function derive(schema: JsonSchema, ctx: Context, depth: number): Derived {
  if (schema.$ref !== undefined) {
    // `times` expansions of this $ref enclose this one: it recurses `times` levels deep.
    const times = ctx.expanding.get(schema.$ref) ?? 0;
    if (times > ctx.limits.maxRecursion) return undefined;
    ctx.expanding.set(schema.$ref, times + 1);
    try {
      return derive(resolveRef(schema.$ref, ctx.root), ctx, depth);
    } finally {
      ctx.expanding.set(schema.$ref, times);
    }
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const derived = alternatives.map((s) => derive(s, ctx, depth + 1)).filter((a) => a !== undefined);
    return derived.length === 0 ? undefined : fc.oneof(...derived);
  }
  if (schema.allOf) {
    const merged = schema.allOf.length === 1 ? (schema.allOf[0] as JsonSchema) : mergeAllOf(schema.allOf, ctx);
    return derive(merged, ctx, depth);
  }
  if (Array.isArray(schema.type)) {
    const derived = schema.type.map((type) => derive({ ...schema, type }, ctx, depth)).filter((a) => a !== undefined);
    return derived.length === 0 ? undefined : fc.oneof(...derived);
  }
  const type = schema.type ?? (schema.properties ? "object" : schema.items ? "array" : undefined);
  switch (type) {
    case "string":
      return stringArbitrary(schema, ctx);
    case "integer":
      return numberArbitrary(schema, true);
    case "number":
      return numberArbitrary(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return arrayArbitrary(schema, ctx, depth);
    case "object":
      return objectArbitrary(schema, ctx, depth);
    case undefined:
      // `{}`: any JSON value (z.any(), z.unknown()).
      return fc.jsonValue({ maxDepth: 2 });
    default:
      throw new ArbitraryDerivationError(`cannot derive values for JSON Schema type "${type}"`);
  }
}

/**
 * Values described by a JSON Schema document: same-document `$ref`s (`#`, `#/$defs/…`) are resolved, and a
 * recursive `$ref` is expanded at most `limits.maxRecursion` times inside itself (then only the finite
 * branches remain: optional properties left out, arrays empty, other alternatives).
 */
export function fromJsonSchema(root: JsonSchema, limits: DerivationLimits): fc.Arbitrary<unknown> {
  // The root is being expanded already: a `$ref` to "#" inside it is its first recursion.
  let derived: Derived;
  try {
    derived = derive(root, { root, limits, expanding: new Map([["#", 1]]) }, 0);
  } catch (error) {
    if (error instanceof ArbitraryDerivationError) throw error;
    // A malformed schema (`properties: { a: null }`, `pattern: "("`, `enum: []`) meets a TypeError, a SyntaxError
    // or fast-check's own Error on the way: the caller is told what it asked for, with the cause kept.
    throw new ArbitraryDerivationError(`the schema is malformed: ${String(error)}`, { cause: error });
  }
  if (derived === undefined) {
    throw new ArbitraryDerivationError(
      `the schema is recursive with no finite value within ${limits.maxRecursion} levels (every branch refers to itself)`,
    );
  }
  return derived;
}
