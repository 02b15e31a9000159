import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Order, OrderCreate, OrderList, OrderState, OrderStatusSchema, UserInput } from "../../examples/shop/schemas";
import { parseEntityTagList } from "../../src/caching/entity-tag";
import { parseHttpDate } from "../../src/caching/http-date";
import { parseCacheControl } from "../../src/caching/index";
import { parseIdempotencyKey } from "../../src/idempotency/key";
import { mergePatch } from "../../src/routing/index";
import { fromJsonSchema, type JsonSchema } from "../../src/testing/arbitraries/json-schema";
import {
  ArbitraryDerivationError,
  cacheControl,
  entityTagList,
  fromZod,
  httpDate,
  idempotencyKeyHeader,
  jsonDocument,
  malformedEntityTagList,
  malformedHttpDate,
  malformedJson,
  mergePatchDocument,
  signedWebhook,
} from "../../src/testing/index";
import { generateSecret, verify } from "../../src/webhooks/signing/index";

describe("header arbitraries agree with our parsers", () => {
  it("entityTagList() values parse as entity-tag lists (RFC 9110 §8.8.3)", () => {
    fc.assert(
      fc.property(entityTagList(), (value) => {
        expect(parseEntityTagList(value)).toBeDefined();
      }),
    );
  });

  // Regression: "*", "", ",", ",,," and " " were generated as malformed, but the parser rightly accepts them
  // (the wildcard; §5.6.1 empty list elements).
  it("malformedEntityTagList() values are all refused by the parser, never thrown on", () => {
    fc.assert(
      fc.property(malformedEntityTagList(), (value) => {
        expect(parseEntityTagList(value)).toBeUndefined();
      }),
      { numRuns: 5000 },
    );
  });

  // Regression: rfc850-dates were generated for every year 1970-2099, and §5.6.7 reads a two-digit year more than
  // 50 years ahead as the past century: "01-Jan-70" is 2070, not 1970 (1928 of 5000 texts read as another instant).
  it("httpDate() text parses back to its very date in all three forms (§5.6.7), rfc850 relative to now", () => {
    for (const now of [Date.UTC(2026, 10, 22), Date.UTC(1990, 0, 1), Date.UTC(2090, 5, 30)]) {
      const forms = new Set<string>();
      fc.assert(
        fc.property(httpDate({ now }), ({ date, form, text }) => {
          forms.add(form);
          // A recipient whose clock is up to a year away from `now` reads the same instant.
          for (const at of [now, now - 364 * 86_400_000, now + 364 * 86_400_000]) {
            expect(parseHttpDate(text, { now: at })).toBe(date.getTime());
          }
        }),
        { numRuns: 500 },
      );
      expect(forms.size).toBe(3);
    }
  });

  it("httpDate() refuses a now that leaves no rfc850-date in 1970-2099, unless rfc850 is not asked for", () => {
    const now = Date.UTC(2200, 0, 1);
    expect(() => httpDate({ now })).toThrow(TypeError);
    expect(() => httpDate({ now, forms: ["imf-fixdate"] })).not.toThrow();
    expect(() => httpDate({ now: Number.NaN })).toThrow(TypeError);
  });

  it("malformed dates are ignored, never thrown", () => {
    fc.assert(fc.property(malformedHttpDate(), (value) => void parseHttpDate(value)));
  });

  it("cacheControl() values never make the parser throw", () => {
    fc.assert(fc.property(cacheControl(), (value) => void parseCacheControl(value)));
  });

  it("idempotencyKeyHeader() labels agree with the idempotency module's lenient parser", () => {
    fc.assert(
      fc.property(idempotencyKeyHeader(), ({ header, key }) => {
        const parsed = parseIdempotencyKey(header);
        if (key === undefined) expect(parsed.ok).toBe(false);
        else expect(parsed).toEqual({ ok: true, key });
      }),
    );
  });
});

describe("signedWebhook()", () => {
  const secrets = [generateSecret(), generateSecret()];
  const foreignSecret = generateSecret();
  const now = Date.UTC(2026, 10, 22, 12);

  it("produces deliveries whose shouldVerify our verifier agrees with, for every kind", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(signedWebhook({ secrets, foreignSecret, now }), (delivery) => {
        seen.add(delivery.kind);
        const result = verify({ body: delivery.body, headers: delivery.headers, secrets, now: () => now });
        expect(result.ok).toBe(delivery.shouldVerify);
      }),
      { numRuns: 400 },
    );
    expect(seen.size).toBe(9);
  });

  // Regression: a "future" delivery could be signed at now + tolerance + 1 s (where shrinking goes), so a
  // verifier a second later accepted it although it was labelled shouldVerify: false.
  it("keeps expired and future deliveries refused by a verifier minutes away from now", () => {
    const arbitrary = signedWebhook({ secrets, foreignSecret, now, kinds: ["expired", "future"] });
    const minutes = [-9, -1, 1, 9].map((m) => now + m * 60_000);
    fc.assert(
      fc.property(arbitrary, (delivery) => {
        for (const at of minutes) {
          expect(verify({ body: delivery.body, headers: delivery.headers, secrets, now: () => at }).ok).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("mergePatchDocument()", () => {
  it("patches apply idempotently and never pollute prototypes (RFC 7396)", () => {
    fc.assert(
      fc.property(jsonDocument(), mergePatchDocument(), (doc, patch) => {
        const once = mergePatch(doc, patch);
        expect(mergePatch(once, patch)).toEqual(once);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(Object.getPrototypeOf(once)).toBe(Object.prototype);
      }),
    );
  });
});

describe("fromZod()", () => {
  const Order = z
    .object({
      id: z.uuid(),
      email: z.email(),
      status: z.enum(["pending", "paid", "shipped"]),
      items: z
        .array(
          z.object({
            sku: z.string().min(1).max(12),
            quantity: z.int().min(1).max(99),
            unit_price: z.int().nonnegative(),
          }),
        )
        .min(1)
        .max(3),
      note: z.string().max(20).optional(),
      created_at: z.iso.datetime(),
      flag: z.union([z.boolean(), z.null()]),
      ratio: z.number().gt(0).lt(1),
    })
    .strict();

  it("derives values that satisfy the schema", () => {
    fc.assert(
      fc.property(fromZod(Order), (value) => {
        expect(Order.safeParse(value).success).toBe(true);
      }),
      {
        numRuns: 200,
      },
    );
  });

  it("keeps refinements JSON Schema cannot express, by filtering", () => {
    const Even = z
      .int()
      .min(0)
      .max(100)
      .refine((n) => n % 2 === 0);
    fc.assert(
      fc.property(fromZod(Even), (n) => {
        expect(n % 2).toBe(0);
      }),
    );
  });
});

describe("fromZod() on ordinary satisfiable schemas", () => {
  // Regression: each of these threw — ArbitraryDerivationError for a pattern with a minLength (generated at
  // fast-check's "xsmall" size only), a raw fast-check error for one numeric bound outside ±1e9, a refused
  // unicode pattern (read without its "u" flag), and a record over an enum of keys (required, no properties).
  const cases: { name: string; schema: z.ZodType }[] = [
    { name: "a pattern with minLength and maxLength", schema: z.string().regex(/^\d+$/).min(8).max(12) },
    {
      name: "a pattern with a minLength",
      schema: z
        .string()
        .regex(/^[a-z]+$/)
        .min(10),
    },
    { name: "startsWith with a long minLength", schema: z.string().startsWith("sk_").min(30) },
    { name: "lowercase with a minLength", schema: z.string().lowercase().min(5) },
    { name: "an email with a long minLength", schema: z.email().min(30) },
    { name: "a minimum far above the default range (a time in ms)", schema: z.number().min(1_600_000_000_000) },
    { name: "an exclusive minimum above the default range", schema: z.number().gt(2e9) },
    { name: "a maximum far below the default range", schema: z.number().max(-2e9) },
    { name: "a multipleOf with a minimum above the default range", schema: z.number().multipleOf(5).min(5e6) },
    { name: "a unicode property pattern", schema: z.string().regex(/^\p{L}+$/u) },
    { name: "a unicode pattern of two classes", schema: z.string().regex(/^\p{Lu}\p{Ll}*$/u) },
    { name: "a record over an enum of keys", schema: z.record(z.enum(["a", "b"]), z.number()) },
    {
      name: "an object with such a record inside",
      schema: z.object({ totals: z.record(z.enum(["x", "y"]), z.int()) }),
    },
  ];
  for (const { name, schema } of cases) {
    it(`derives values for ${name}`, () => {
      fc.assert(
        fc.property(fromZod(schema), (value) => {
          expect(schema.safeParse(value).success).toBe(true);
        }),
        { numRuns: 200 },
      );
    });
  }

  // Regression: each threw ArbitraryDerivationError during generation (a pattern fast-check cannot generate from, a
  // format with no pattern, a codec whose accepted words zod leaves out of its JSON Schema).
  const formats: { name: string; schema: z.ZodType }[] = [
    { name: "z.iso.duration()", schema: z.iso.duration() },
    { name: "z.emoji()", schema: z.emoji() },
    { name: "z.jwt()", schema: z.jwt() },
    { name: "z.jwt({ alg: 'RS256' })", schema: z.jwt({ alg: "RS256" }) },
    { name: "z.stringbool()", schema: z.stringbool() },
    {
      name: "z.stringbool() with words of its own, case-sensitive",
      schema: z.stringbool({ truthy: ["Si"], falsy: ["No"], case: "sensitive" }),
    },
    {
      name: "an object of them",
      schema: z.object({ every: z.iso.duration(), mood: z.emoji(), token: z.jwt(), on: z.stringbool().optional() }),
    },
  ];
  for (const { name, schema } of formats) {
    it(`derives values for ${name}, each one parsing`, () => {
      fc.assert(
        fc.property(fromZod(schema), (value) => {
          expect(schema.safeParse(value).success).toBe(true);
        }),
        { numRuns: 200 },
      );
    });
  }

  it("derives both words of z.stringbool(): true and false", () => {
    const schema = z.stringbool();
    const parsed = new Set(fc.sample(fromZod(schema), { numRuns: 100, seed: 1 }).map((value) => schema.parse(value)));
    expect(parsed).toEqual(new Set([true, false]));
  });

  it("keeps an exclusive bound out, however large (an epsilon is lost at 2e9)", () => {
    const schema = z
      .int()
      .gt(2e9)
      .lt(2e9 + 2);
    expect(new Set(fc.sample(fromZod(schema), { numRuns: 50 }))).toEqual(new Set([2e9 + 1]));
  });

  it("refuses numeric bounds no value satisfies with ArbitraryDerivationError, not fast-check's error", () => {
    for (const schema of [z.number().min(5).max(4), z.number().multipleOf(10).min(1).max(9), z.int().gt(1).lt(2)]) {
      expect(() => fromZod(schema)).toThrow(ArbitraryDerivationError);
    }
  });
});

describe("fromJsonSchema() on a malformed schema (what `rest-webhooks check` reads from a server's document)", () => {
  const limits = { maxRecursion: 3, maxAttempts: 100 };
  it.each<[string, JsonSchema]>([
    // Regression: a negative length ran the process out of memory.
    ["a negative minLength", { type: "string", minLength: -1 }],
    ["a negative minItems", { type: "array", minItems: -1 }],
    ["a minLength past maxLength", { type: "string", minLength: 5, maxLength: 2 }],
    ["a fractional maxItems", { type: "array", maxItems: 1.5 }],
    ["a minLength that is no number", { type: "string", minLength: "a" } as unknown as JsonSchema],
    // Regression: each threw a TypeError, a SyntaxError or fast-check's own Error.
    ["a property that is null", { type: "object", properties: { a: null } } as unknown as JsonSchema],
    ["a pattern that is no regular expression", { type: "string", pattern: "(" }],
    ["an empty enum", { enum: [] }],
    ["an allOf that is no array", { allOf: 5 } as unknown as JsonSchema],
  ])("refuses %s with ArbitraryDerivationError", (_what, schema) => {
    expect(() => fromJsonSchema(schema, limits)).toThrow(ArbitraryDerivationError);
  });
});

describe("fromZod() with $ref, $defs and recursion", () => {
  // Regression: every shop schema has .meta({ id }), so z.toJSONSchema answers a $ref into $defs; without
  // resolving it, generation fell back to random JSON filtered by safeParse and never ended.
  const shopSchemas = { UserInput, OrderCreate, OrderState, Order, OrderList, OrderStatusSchema };
  for (const [name, schema] of Object.entries(shopSchemas)) {
    it(`derives values the shop's ${name} schema accepts`, () => {
      fc.assert(
        fc.property(fromZod(schema), (value) => {
          expect(schema.safeParse(value).success).toBe(true);
        }),
        { numRuns: 200 },
      );
    });
  }

  interface Tree {
    value: number;
    children: Tree[];
  }
  const Tree: z.ZodType<Tree, Tree> = z.object({ value: z.int().min(0).max(9), children: z.array(z.lazy(() => Tree)) });
  const depth = (tree: Tree): number => 1 + Math.max(0, ...tree.children.map(depth));

  it("expands a recursive z.lazy schema (a $ref to #) to a bounded depth", () => {
    const depths = new Set<number>();
    fc.assert(
      fc.property(fromZod(Tree, { maxRecursion: 2 }), (tree) => {
        expect(Tree.safeParse(tree).success).toBe(true);
        depths.add(depth(tree));
        // The root, then at most two expansions of the $ref inside itself.
        expect(depth(tree)).toBeLessThanOrEqual(3);
      }),
      { numRuns: 300 },
    );
    expect(Math.max(...depths)).toBe(3);
  });

  it("resolves a recursive schema with an id (getter) into $defs, leaving the optional self-reference out at the bound", () => {
    const Category = z
      .object({
        name: z.string().min(1).max(8),
        get parent() {
          return Category.optional();
        },
      })
      .meta({ id: "Category" });
    const chain = (c: { parent?: unknown }): number => (c.parent ? 1 + chain(c.parent as { parent?: unknown }) : 1);
    fc.assert(
      fc.property(fromZod(Category), (category) => {
        expect(Category.safeParse(category).success).toBe(true);
        expect(chain(category)).toBeLessThanOrEqual(4);
      }),
    );
  });

  it("refuses a recursive schema with no finite value, naming why", () => {
    interface Endless {
      next: Endless;
    }
    const Endless: z.ZodType<Endless, Endless> = z.object({ next: z.lazy(() => Endless) });
    expect(() => fromZod(Endless)).toThrow(ArbitraryDerivationError);
    expect(() => fromZod(Endless)).toThrow(/recursive/);
  });

  it("refuses a type with no JSON Schema form at once, naming it", () => {
    let error: unknown;
    try {
      fromZod(z.object({ at: z.date() }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ArbitraryDerivationError);
    expect((error as ArbitraryDerivationError).code).toBe("arbitrary_not_derivable");
    expect((error as Error).message).toContain("Date");
  });

  describe("names where a type with no JSON Schema form sits, as a path into the value", () => {
    const cases: { schema: z.ZodType; path: string; kind: string }[] = [
      { schema: z.object({ a: z.object({ b: z.date() }) }), path: "at /a/b:", kind: "Date" },
      { schema: z.object({ list: z.array(z.bigint()) }), path: "at /list/*:", kind: "BigInt" },
      { schema: z.object({ r: z.record(z.string(), z.map(z.string(), z.number())) }), path: "at /r/*:", kind: "Map" },
      { schema: z.union([z.string(), z.object({ "x/y": z.custom() })]), path: "at /x~1y:", kind: "Custom" },
      { schema: z.tuple([z.string(), z.set(z.string())]), path: "at /1:", kind: "Set" },
      { schema: z.object({ a: z.string() }).and(z.object({ b: z.nan() })), path: "at /b:", kind: "NaN" },
      { schema: z.date(), path: "at the value:", kind: "Date" },
    ];
    for (const { schema, path, kind } of cases) {
      it(`${kind} ${path}`, () => {
        let error: unknown;
        try {
          fromZod(schema);
        } catch (caught) {
          error = caught;
        }
        expect(error).toBeInstanceOf(ArbitraryDerivationError);
        expect((error as ArbitraryDerivationError).code).toBe("arbitrary_not_derivable");
        expect((error as Error).message).toContain(path);
        expect((error as Error).message).toContain(kind);
      });
    }
  });

  it("fails fast, naming the refusing check, when a refinement rejects every derived value", () => {
    const Never = z.object({ n: z.int().refine(() => false, "never") });
    let error: unknown;
    try {
      fc.assert(fc.property(fromZod(Never, { maxAttempts: 20 }), () => true));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ArbitraryDerivationError);
    expect((error as Error).message).toContain("/n: never");
  });

  // Regression: the failing member's path was joined as it is, so a member named "a/b" read as /a/b (RFC 6901 §3).
  it("names the refusing member by a JSON Pointer, its '/' and '~' escaped", () => {
    const Never = z.object({ "a/b": z.object({ "c~d": z.int().refine(() => false, "never") }) });
    expect(() => fc.assert(fc.property(fromZod(Never, { maxAttempts: 20 }), () => true))).toThrow("/a~1b/c~0d: never");
  });
});

describe("malformedJson()", () => {
  it("never yields a text JSON.parse accepts (RFC 8259), so `{}` is never called malformed", () => {
    fc.assert(
      fc.property(malformedJson(), (text) => {
        expect(() => JSON.parse(text)).toThrow(SyntaxError);
      }),
      { numRuns: 3000 },
    );
  });
});
