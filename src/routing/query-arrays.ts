import type { z } from "zod";
import type { QueryRecord } from "../http/message";

// Wrappers whose input is their inner schema's: an optional or defaulted list is still a list.
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "nonoptional", "readonly", "catch"]);

// Bounds the unwrapping of a z.lazy that returns itself.
const MAX_UNWRAP = 32;

/**
 * The schema a value meets under the wrappers that hand it on as it came (optional, default, a pipe's input, a
 * lazy's target…): what a `z.array(…).optional()` or a `z.object(…).transform(…)` reads.
 */
export function unwrapInput(schema: z.core.$ZodType): z.core.$ZodType {
  let current: z.core.$ZodType = schema;
  for (let i = 0; i < MAX_UNWRAP; i++) {
    const def = current._zod.def as z.core.$ZodTypeDef & {
      innerType?: z.core.$ZodType;
      in?: z.core.$ZodType;
      getter?: () => z.core.$ZodType;
    };
    if (WRAPPERS.has(def.type) && def.innerType !== undefined) current = def.innerType;
    else if (def.type === "pipe" && def.in !== undefined) current = def.in;
    else if (def.type === "lazy" && def.getter !== undefined) current = def.getter();
    else return current;
  }
  return current;
}

function takesList(schema: z.core.$ZodType): boolean {
  const type = unwrapInput(schema)._zod.def.type;
  return type === "array" || type === "tuple";
}

/** The members of a query schema that take a list (a `z.array` or `z.tuple`, optional or defaulted or not). */
export function listMembers(schema: z.ZodObject): ReadonlySet<string> {
  const names = new Set<string>();
  for (const [name, member] of Object.entries(schema.shape)) if (takesList(member)) names.add(name);
  return names;
}

/**
 * The query with each list member's single value as a one-item list. OpenAPI 3.1 §4.8.12.4: an array query
 * parameter is `style: form, explode: true` by default, so `?tag=a` is the list `["a"]`, as `?tag=a&tag=b` is
 * `["a", "b"]`; the adapters only make a list of a repeated name.
 */
export function withLists(query: QueryRecord, lists: ReadonlySet<string>): QueryRecord {
  if (lists.size === 0) return query;
  let out: Record<string, string | readonly string[]> | undefined;
  for (const name of lists) {
    const value = Object.hasOwn(query, name) ? query[name] : undefined;
    if (typeof value !== "string") continue;
    out ??= { ...query };
    out[name] = [value];
  }
  return out ?? query;
}
