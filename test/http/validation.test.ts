import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrors, validationProblem } from "../../src/http/validation";

const schema = z.object({
  name: z.string().min(1),
  items: z.array(z.object({ quantity: z.number().int().positive() })),
  "a/b~c": z.string().optional(),
});

describe("validation problems (422 with JSON Pointer field errors)", () => {
  it("lists every failed field with an RFC 6901 pointer", () => {
    const parsed = schema.safeParse({ name: "", items: [{ quantity: 1 }, { quantity: -1 }], "a/b~c": 3 });
    expect(parsed.success).toBe(false);
    const problem = validationProblem(parsed.error as z.ZodError);
    expect(problem.status).toBe(422);
    expect(problem.code).toBe("validation_failed");
    const doc = problem.toJSON();
    const errors = doc.errors as { pointer: string; in: string; code: string }[];
    expect(errors.map((e) => e.pointer).sort()).toStrictEqual(["/a~1b~0c", "/items/1/quantity", "/name"]);
    expect(errors.every((e) => e.in === "body")).toBe(true);
    expect(errors.find((e) => e.pointer === "/name")?.code).toBe("too_small");
    expect(problem.toResponse().headers["content-type"]).toBe("application/problem+json");
  });

  it("points at the whole document with the empty pointer", () => {
    const parsed = z.string().safeParse(1);
    expect(fieldErrors(parsed.error?.issues ?? [], "query")).toMatchObject([
      { pointer: "", in: "query", code: "invalid_type" },
    ]);
  });

  it("titles its about:blank problem with the status phrase, not a sentence of its own (RFC 9457 §4.2.1)", () => {
    const parsed = schema.safeParse({});
    const doc = validationProblem(parsed.error as z.ZodError).toJSON();
    expect(doc.type).toBe("about:blank");
    expect(doc.title).toBe("Unprocessable Content");
    expect(validationProblem(parsed.error as z.ZodError, "query", 400).toJSON().title).toBe("Bad Request");
  });

  it("takes another location and status", () => {
    const parsed = z.object({ page: z.coerce.number().int() }).safeParse({ page: "x" });
    const problem = validationProblem(parsed.error as z.ZodError, "query", 400);
    expect(problem.status).toBe(400);
    expect(problem.toJSON().errors).toMatchObject([{ pointer: "/page", in: "query" }]);
  });
});
