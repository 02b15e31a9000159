import type fc from "fast-check";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  type ArbitraryDerivationError,
  fromZod,
  type LawViolation,
  malformedJson,
  type NamedLaw,
  type ResourceSpec,
  resourceLaws,
  staleIfMatchIsRefused,
  type Target,
} from "../../src/testing/index";

describe("rest-webhooks/testing types", () => {
  it("fromZod gives arbitraries of the schema's input type", () => {
    const User = z.strictObject({ name: z.string().trim(), age: z.coerce.number().optional() });
    expectTypeOf(fromZod(User)).toEqualTypeOf<fc.Arbitrary<z.input<typeof User>>>();
    expectTypeOf(fromZod).parameter(1).toEqualTypeOf<{ maxRecursion?: number; maxAttempts?: number } | undefined>();
    // @ts-expect-error a zod schema is required
    fromZod({ type: "object" });
  });

  it("malformedJson yields strings", () => {
    expectTypeOf(malformedJson()).toEqualTypeOf<fc.Arbitrary<string>>();
  });

  it("a resource spec takes count() and supports.list", () => {
    const spec: ResourceSpec = {
      collection: "/users",
      createBody: malformedJson(),
      count: async () => 1,
      supports: { list: false, put: true },
    };
    expectTypeOf(resourceLaws({} as Target, spec)).toEqualTypeOf<NamedLaw[]>();
    expectTypeOf(staleIfMatchIsRefused({} as Target, spec).isAsync()).toEqualTypeOf<true>();
    // @ts-expect-error count answers a number
    const wrong: ResourceSpec = { collection: "/x", createBody: malformedJson(), count: () => "1" };
    void wrong;
  });

  // Regression: `IAsyncPropertyWithHooks<any>` made a counterexample `any` in user code.
  it("a named law's property has no any: fc.check gives its counterexample as unknown[]", () => {
    expectTypeOf<NamedLaw["property"]>().toEqualTypeOf<fc.IAsyncPropertyWithHooks<unknown[]>>();
  });

  it("the errors carry stable codes and the law's details", () => {
    expectTypeOf<LawViolation["code"]>().toEqualTypeOf<"law_violated">();
    expectTypeOf<LawViolation["transcript"]>().toEqualTypeOf<string>();
    expectTypeOf<LawViolation["reason"]>().toEqualTypeOf<string>();
    expectTypeOf<ArbitraryDerivationError["code"]>().toEqualTypeOf<"arbitrary_not_derivable">();
  });
});
