import type fc from "fast-check";
import { z } from "zod";
import { BoundedFilter } from "./bounded-filter";
import { ArbitraryDerivationError, fromJsonSchema, type JsonSchema } from "./json-schema";

export { ArbitraryDerivationError } from "./json-schema";

/** Options for {@link fromZod}. */
export interface FromZodOptions {
  /**
   * How many times a recursive schema (`z.lazy`, getters) is expanded inside itself; past it only its finite
   * branches remain (optional properties left out, arrays empty).
   * @default 3
   */
  maxRecursion?: number;
  /**
   * How many derived values in a row may fail the schema's `safeParse` (refinements JSON Schema cannot
   * express) before generation stops with an {@link ArbitraryDerivationError} naming the failing check.
   * @default 100
   */
  maxAttempts?: number;
}

// RFC 6901 §3: in a JSON Pointer token, "~" is written "~0" and "/" "~1".
const pointerToken = (token: PropertyKey) => String(token).replaceAll("~", "~0").replaceAll("/", "~1");

function describeFailure(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "no issue reported";
  const path = issue.path.length === 0 ? "the value" : `/${issue.path.map(pointerToken).join("/")}`;
  return `${path}: ${issue.message} (${issue.code})`;
}

// What zod's JSON Schema leaves out and generation needs, written into it (zod's `override` hook, called for each
// schema): the words a `z.stringbool()` accepts become an `enum` of the two it writes itself (`z.encode`), and the
// `alg` of a `z.jwt({ alg })` an `x-jwt-alg` keyword (unknown keywords are allowed, JSON Schema 2020-12 §6.5).
function addWhatZodLeavesOut(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: JsonSchema }): void {
  const def = ctx.zodSchema._zod.def as {
    type: string;
    format?: string;
    alg?: string;
    in?: z.core.$ZodType;
    out?: z.core.$ZodType;
    reverseTransform?: unknown;
  };
  if (def.type === "string" && def.format === "jwt" && typeof def.alg === "string")
    ctx.jsonSchema["x-jwt-alg"] = def.alg;
  const stringbool =
    def.type === "pipe" &&
    def.in?._zod.def.type === "string" &&
    def.out?._zod.def.type === "boolean" &&
    typeof def.reverseTransform === "function";
  if (!stringbool) return;
  try {
    const codec = ctx.zodSchema as z.core.$ZodType;
    ctx.jsonSchema.enum = [z.encode(codec, true), z.encode(codec, false)];
  } catch {
    // Not a codec that writes both booleans back: safeParse filters what the plain string gives.
  }
}

// Where in the value a JSON Schema path (zod's, e.g. ["properties", "a", "items"]) lands, as a JSON Pointer with
// "*" for any item or member (RFC 6901 has no wildcard): "/a/*". Other steps (`anyOf`, `allOf` and the index of
// an alternative or a part) add none to the value.
function valuePath(schemaPath: readonly (string | number)[]): string {
  const steps: string[] = [];
  for (let i = 0; i < schemaPath.length; i++) {
    const keyword = schemaPath[i];
    if (keyword === "properties" || keyword === "prefixItems") steps.push(pointerToken(schemaPath[++i] ?? ""));
    else if (keyword === "items" || keyword === "additionalProperties") steps.push("*");
  }
  return steps.length === 0 ? "the value" : `/${steps.join("/")}`;
}

/**
 * Values that satisfy a zod 4 schema, derived from its JSON Schema (`z.toJSONSchema`, input side): `$ref`s
 * into `$defs` (schemas with `.meta({ id })`) are resolved, recursive schemas expanded to `maxRecursion`
 * levels, and every value is checked with `safeParse` so refinements the JSON Schema cannot express still hold.
 * Throws {@link ArbitraryDerivationError} (code `arbitrary_not_derivable`) for what has no JSON Schema form
 * (`z.custom`, `z.date`, `z.bigint`…), and during generation when the refinements reject every try.
 * @param schema The zod 4 schema, e.g. the body schema of a route.
 * @example fc.assert(fc.property(fromZod(UserInput), (input) => UserInput.safeParse(input).success))
 * @see https://zod.dev/json-schema
 */
export function fromZod<S extends z.ZodType>(schema: S, options: FromZodOptions = {}): fc.Arbitrary<z.input<S>> {
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, {
      io: "input",
      // An unrepresentable type is an error, as with "throw" (zod's default), never an `{}` no generated value could
      // satisfy; thrown here to name where it sits, as zod's own message names only the type.
      unrepresentable: ({ path, message }) => {
        throw new ArbitraryDerivationError(
          `fromZod: the schema has no JSON Schema form at ${valuePath(path)}: ${message}`,
        );
      },
      cycles: "ref",
      override: (ctx) => addWhatZodLeavesOut({ zodSchema: ctx.zodSchema, jsonSchema: ctx.jsonSchema as JsonSchema }),
    }) as JsonSchema;
  } catch (error) {
    if (error instanceof ArbitraryDerivationError) throw error;
    throw new ArbitraryDerivationError(`fromZod: the schema has no JSON Schema form: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const maxAttempts = options.maxAttempts ?? 100;
  const base = fromJsonSchema(json, { maxRecursion: options.maxRecursion ?? 3, maxAttempts });
  const accepts = (value: unknown) => schema.safeParse(value).success;
  return new BoundedFilter(base, accepts, maxAttempts, (last) => {
    const parsed = schema.safeParse(last);
    return new ArbitraryDerivationError(
      `fromZod: none of ${maxAttempts} values derived from the schema's JSON Schema passed safeParse; the last ` +
        `failed at ${parsed.success ? "nothing" : describeFailure(parsed.error)}. The schema has a check JSON ` +
        "Schema cannot express (a refine, a transform's input rule): give that field an arbitrary of its own.",
    );
  }) as fc.Arbitrary<z.input<S>>;
}
