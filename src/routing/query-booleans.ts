import type { z } from "zod";
import type { QueryRecord } from "../http/message";
import { unwrapInput } from "./query-arrays";

/** A boolean member of a query schema: one boolean, or a list of them. */
export type BooleanMember = "one" | "list";

function isBoolean(schema: z.core.$ZodType): boolean {
  return unwrapInput(schema)._zod.def.type === "boolean";
}

/**
 * The members of a query schema that take a boolean (`z.boolean()` or `z.coerce.boolean()`, optional or defaulted
 * or not), or a list of them. `z.stringbool()` is not one: it reads its own spellings, and is documented as a string.
 */
export function booleanMembers(schema: z.ZodObject): ReadonlyMap<string, BooleanMember> {
  const members = new Map<string, BooleanMember>();
  for (const [name, member] of Object.entries(schema.shape)) {
    const inner = unwrapInput(member);
    const element = (inner._zod.def as { element?: z.core.$ZodType }).element;
    if (inner._zod.def.type === "boolean") members.set(name, "one");
    else if (inner._zod.def.type === "array" && element !== undefined && isBoolean(element)) members.set(name, "list");
  }
  return members;
}

// JSON Schema's boolean literals (RFC 8259 §3), which the document's `type: boolean` has a client send; nothing else,
// where `z.coerce.boolean()` alone would read "false", "0" and an empty value as true.
function booleanOf(text: string): boolean | undefined {
  return text === "true" ? true : text === "false" ? false : undefined;
}

/**
 * The query with each boolean member's `true` or `false` as the boolean, and an issue for any other value (its text
 * is left in the query, where a parse may refuse it again: drop the parse's issues under `refused`).
 */
export function withBooleans(
  query: QueryRecord,
  members: ReadonlyMap<string, BooleanMember>,
): { query: Record<string, unknown>; issues: z.core.$ZodIssue[]; refused: ReadonlySet<string> } {
  const issues: z.core.$ZodIssue[] = [];
  const refused = new Set<string>();
  if (members.size === 0) return { query, issues, refused };
  const out: Record<string, unknown> = { ...query };
  const read = (text: string, path: (string | number)[]): boolean | string => {
    const value = booleanOf(text);
    if (value !== undefined) return value;
    issues.push({
      code: "invalid_type",
      expected: "boolean",
      path,
      message: 'Expected "true" or "false".',
      input: text,
    });
    return text;
  };
  for (const [name, kind] of members) {
    const value = Object.hasOwn(query, name) ? query[name] : undefined;
    if (value === undefined) continue;
    const before = issues.length;
    // A list member's single value is already a one-item list (withLists); a repeated plain member stays a list,
    // for its schema to refuse.
    if (typeof value === "string") out[name] = read(value, [name]);
    else if (kind === "list") out[name] = value.map((text, i) => read(text, [name, i]));
    if (issues.length > before) refused.add(name);
  }
  return { query: out, issues, refused };
}
