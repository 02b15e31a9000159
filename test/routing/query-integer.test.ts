import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { adapt } from "../../src/fetch/index";
import { createRouter, queryInteger } from "../../src/routing/index";

const limit = queryInteger(z.int().min(1).max(100).default(20));

describe("queryInteger", () => {
  it("reads any integer written in plain decimal digits as that integer", () => {
    const any = queryInteger(z.int());
    fc.assert(
      fc.property(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(any.parse(String(n))).toBe(n);
      }),
    );
  });

  it("refuses every other way of writing a number (z.coerce.number() takes them all)", () => {
    for (const text of [
      "0x10",
      "1e1",
      "+10",
      "-0",
      "-01",
      "--1",
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
        const canonical = /^(?:0|-?[1-9][0-9]*)$/.test(text);
        const n = Number(text);
        expect(limit.safeParse(text).success).toBe(canonical && n >= 1 && n <= 100);
      }),
    );
  });

  describe("regression: the integers OpenAPI documents for the schema were refused (no sign, at most 15 digits)", () => {
    it.each([
      ["1000000000000000", 1e15],
      ["9007199254740991", Number.MAX_SAFE_INTEGER],
      ["-9007199254740991", Number.MIN_SAFE_INTEGER],
      ["-5", -5],
    ])("takes %s, within z.int()'s documented bounds", (text, n) => {
      expect(queryInteger(z.int()).safeParse(text)).toStrictEqual({ success: true, data: n });
    });

    it.each(["9007199254740992", "9007199254740993", "-9007199254740992", "10000000000000000"])(
      "refuses %s, past the safe integers (Number would round it to a neighbour)",
      (text) => {
        expect(queryInteger(z.number()).safeParse(text).success).toBe(false);
      },
    );

    it("answers a negative offset through the router as the document describes it", async () => {
      const router = createRouter().route(
        "GET",
        "/items",
        { query: z.object({ offset: queryInteger(z.int().min(-10).max(10)) }) },
        ({ query }) => ({ status: 200, headers: {}, body: String(query.offset) }),
      );
      const parameters = router.openapi({ title: "t", version: "1" }).paths["/items"]?.get?.parameters;
      expect(parameters).toMatchObject([{ schema: { type: "integer", minimum: -10, maximum: 10 } }]);
      const serve = adapt(router.handler());
      const answer = async (search: string) => {
        const response = await serve(new Request(`http://h.test/items?${search}`));
        return [response.status, await response.text()];
      };
      expect(await answer("offset=-10")).toStrictEqual([200, "-10"]);
      expect((await answer("offset=-11"))[0]).toBe(400);
    });
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
