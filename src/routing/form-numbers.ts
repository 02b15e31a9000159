import type { z } from "zod";
import { unwrapInput } from "./query-arrays";

/** A number member of a form body's schema: whether it also takes `null` (which an empty value then spells). */
export interface NumberMember {
  readonly nullable: boolean;
}

/**
 * The members of a form body's schema that take a number (`z.number()`, `z.int()`, optional, nullable or defaulted
 * or not). A preprocessed or coerced member (`queryInteger`, `z.coerce.number()`) reads its own text, and is left to it.
 */
export function numberMembers(schema: z.ZodObject): ReadonlyMap<string, NumberMember> {
  const members = new Map<string, NumberMember>();
  for (const [name, member] of Object.entries(schema.shape)) {
    const inner = unwrapInput(member);
    if (inner._zod.def.type !== "number" || (inner._zod.def as { coerce?: boolean }).coerce === true) continue;
    members.set(name, { nullable: member.safeParse(null).success });
  }
  return members;
}

// Plain decimal text, one spelling per number but for trailing fraction zeros: an optional minus (not on zero: "-0"
// would be a second spelling of 0, and -0, as queryInteger refuses it), no leading zero but before a fraction, an
// optional fraction. Number() alone would also read `0x10`, `1e1`, `+5`, ` 5 `, `Infinity` and an empty value (as 0).
const DECIMAL = /^(?:-(?!0(?:\.0+)?$))?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

/**
 * A form's fields with each number member's decimal text as the number it spells, and an empty value as `null` where
 * the member takes null (a form cannot send JSON's null; Stripe's forms unset a field the same way). Any other text
 * is left as it came, for the schema to refuse: a form value is text, a JSON body's number stays as JSON gives it.
 */
export function withNumbers(
  fields: Record<string, unknown>,
  members: ReadonlyMap<string, NumberMember>,
): Record<string, unknown> {
  if (members.size === 0) return fields;
  let out: Record<string, unknown> | undefined;
  for (const [name, member] of members) {
    const value = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (typeof value !== "string") continue;
    const read = value === "" && member.nullable ? null : DECIMAL.test(value) ? Number(value) : value;
    if (read === value) continue;
    out ??= { ...fields };
    out[name] = read;
  }
  return out ?? fields;
}
