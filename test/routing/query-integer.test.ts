import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRouter, queryInteger } from "../../src/routing/index";

const limit = queryInteger(z.int().min(1).max(100).default(20));

describe("queryInteger", () => {
  it("reads any integer written in plain decimal digits as that integer", () => {
    const any = queryInteger(z.int().min(0));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const text = String(n);
        if (text.length > 15) return;
        expect(any.parse(text)).toBe(n);
      }),
    );
  });

  it("refuses every other way of writing a number (z.coerce.number() takes them all)", () => {
    for (const text of [
      "0x10",
      "1e1",
      "+10",
      "-1",
      " 10",
      "10 ",
      "10.0",
      "010",
      "",
      "0b1",
      "0o7",
      "1_0",
      "Infinity",
      "١٠",
    ]) {
      expect(limit.safeParse(text).success, text).toBe(false);
      // What it guards against: the coercion the shop used before.
      if (["0x10", "1e1", "+10", "010", "10.0"].includes(text))
        expect(z.coerce.number().int().safeParse(text).success).toBe(true);
    }
  });

  it("refuses any text that is not canonical decimal digits", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const canonical = /^(?:0|[1-9][0-9]{0,14})$/.test(text);
        const n = Number(text);
        expect(limit.safeParse(text).success).toBe(canonical && n >= 1 && n <= 100);
      }),
    );
  });

  it("keeps the schema's default, bounds and optionality, in parsing and in OpenAPI", () => {
    expect(limit.parse(undefined)).toBe(20);
    expect(limit.safeParse("101").success).toBe(false);
    expect(queryInteger(z.int().optional()).parse(undefined)).toBeUndefined();
    const router = createRouter();
    router.resource("/items/{item_id}", (items) =>
      items.list({ query: z.object({ limit, page: queryInteger(z.int().min(1).optional()) }) }, async () => ({
        status: 200,
        headers: {},
        body: "[]",
      })),
    );
    const parameters = router.openapi({ title: "t", version: "1" }).paths["/items"]?.get?.parameters;
    expect(parameters).toEqual([
      {
        name: "limit",
        in: "query",
        required: false,
        schema: { default: 20, type: "integer", minimum: 1, maximum: 100 },
      },
      {
        name: "page",
        in: "query",
        required: false,
        schema: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      },
    ]);
  });
});
