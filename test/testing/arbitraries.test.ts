import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Order, OrderCreate, OrderList, OrderState, OrderStatusSchema, UserInput } from "../../examples/shop/schemas";
import { parseEntityTagList } from "../../src/caching/entity-tag";
import { parseHttpDate } from "../../src/caching/http-date";
import { parseCacheControl } from "../../src/caching/index";
import { parseIdempotencyKey } from "../../src/idempotency/key";
import { mergePatch } from "../../src/routing/index";
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

  it("malformed entity-tag lists never make the parser throw", () => {
    fc.assert(fc.property(malformedEntityTagList(), (value) => void parseEntityTagList(value)));
  });

  it("httpDate() text parses back to its date in all three forms (§5.6.7)", () => {
    const now = Date.UTC(2026, 10, 22);
    fc.assert(
      fc.property(httpDate(), ({ date, form, text }) => {
        const parsed = parseHttpDate(text, { now });
        expect(parsed).toBeDefined();
        const back = new Date(parsed as number);
        if (form === "rfc850") {
          // Two-digit years: only the century may differ (§5.6.7's 50-year rule picks it).
          expect(back.getUTCFullYear() % 100).toBe(date.getUTCFullYear() % 100);
          expect(back.toISOString().slice(4)).toBe(date.toISOString().slice(4));
        } else {
          expect(back.getTime()).toBe(date.getTime());
        }
      }),
    );
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
