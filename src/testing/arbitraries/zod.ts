import fc from "fast-check";
import { z } from "zod";

/** The subset of JSON Schema (draft 2020-12) that zod 4's `z.toJSONSchema` emits and we derive values from. */
interface JsonSchema {
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
}

/** Raised when a schema has a construct values cannot be derived for (e.g. a transform or a custom refinement-only type). */
export class ArbitraryDerivationError extends Error {
  readonly code = "arbitrary_not_derivable";
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case "email":
      return fc.emailAddress();
    case "uuid":
      return fc.uuid();
    case "date-time":
      return fc
        .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
        .map((d) => d.toISOString());
    case "date":
      return fc
        .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2099-12-31T00:00:00Z"), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case "uri":
    case "url":
      return fc.webUrl();
    case "ipv4":
      return fc.ipV4();
    case "ipv6":
      return fc.ipV6();
  }
  if (schema.pattern !== undefined) return fc.stringMatching(new RegExp(schema.pattern));
  return fc.string({
    minLength: schema.minLength ?? 0,
    maxLength: schema.maxLength ?? Math.max(20, schema.minLength ?? 0),
  });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const lower = schema.minimum ?? (schema.exclusiveMinimum === undefined ? undefined : schema.exclusiveMinimum);
  const upper = schema.maximum ?? (schema.exclusiveMaximum === undefined ? undefined : schema.exclusiveMaximum);
  if (integer) {
    const min = Math.ceil(
      (lower ?? -1_000_000) + (schema.exclusiveMinimum !== undefined && schema.minimum === undefined ? 1 : 0),
    );
    const max = Math.floor(
      (upper ?? 1_000_000) - (schema.exclusiveMaximum !== undefined && schema.maximum === undefined ? 1 : 0),
    );
    const base = fc.integer({
      min: Math.max(min, Number.MIN_SAFE_INTEGER),
      max: Math.min(max, Number.MAX_SAFE_INTEGER),
    });
    return schema.multipleOf ? base.map((n) => Math.round(n / schema.multipleOf!) * schema.multipleOf!) : base;
  }
  return fc.double({
    min: lower ?? -1e9,
    max: upper ?? 1e9,
    minExcluded: schema.exclusiveMinimum !== undefined && schema.minimum === undefined,
    maxExcluded: schema.exclusiveMaximum !== undefined && schema.maximum === undefined,
    noNaN: true,
    noDefaultInfinity: true,
  });
}

function fromJsonSchema(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => fromJsonSchema(s, depth + 1)));
  if (schema.allOf?.length === 1) return fromJsonSchema(schema.allOf[0] as JsonSchema, depth);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return stringArbitrary(schema);
    case "integer":
      return numberArbitrary(schema, true);
    case "number":
      return numberArbitrary(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      if (schema.prefixItems) return fc.tuple(...schema.prefixItems.map((s) => fromJsonSchema(s, depth + 1)));
      const items = schema.items ? fromJsonSchema(schema.items, depth + 1) : fc.anything();
      return fc.array(items, {
        minLength: schema.minItems ?? 0,
        maxLength: schema.maxItems ?? Math.max(depth > 2 ? 1 : 4, schema.minItems ?? 0),
      });
    }
    case "object": {
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, child] of Object.entries(properties)) record[name] = fromJsonSchema(child, depth + 1);
      return fc.record(record, { requiredKeys: Object.keys(properties).filter((name) => required.has(name)) });
    }
    case undefined:
      return fc.jsonValue({ maxDepth: 2 });
    default:
      throw new ArbitraryDerivationError(`cannot derive values for JSON Schema type "${type}"`);
  }
}

/**
 * Values that satisfy a zod 4 schema, derived from its JSON Schema (`z.toJSONSchema`), filtered
 * through `safeParse` so refinements the JSON Schema cannot express still hold.
 * @example fc.assert(fc.property(fromZod(UserInput), (input) => UserInput.safeParse(input).success))
 */
export function fromZod<S extends z.ZodType>(schema: S): fc.Arbitrary<z.input<S>> {
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  } catch (error) {
    throw new ArbitraryDerivationError(`zod schema has no JSON Schema form: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return fromJsonSchema(json, 0).filter((value) => schema.safeParse(value).success) as fc.Arbitrary<z.input<S>>;
}
