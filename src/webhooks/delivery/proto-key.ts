import { z } from "zod";

/**
 * `schema` behind a check that refuses an own `__proto__` key: zod's record skips one without a word (assigning it
 * would set the prototype), so a body member would be dropped where it must be refused, pointing at it.
 */
export function refusingProtoKey<S extends z.ZodType>(schema: S, message: string) {
  return z.preprocess((input, ctx) => {
    if (input !== null && typeof input === "object" && Object.hasOwn(input, "__proto__")) {
      ctx.addIssue({ code: "custom", path: ["__proto__"], input, message });
    }
    return input;
  }, schema);
}
