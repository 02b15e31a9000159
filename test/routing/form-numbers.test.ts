import { describe, expect, it } from "vitest";
import { z } from "zod";
import { adapt } from "../../src/fetch/index";
import { json } from "../../src/http/message";
import { createRouter } from "../../src/routing/index";
import { queryInteger } from "../../src/routing/query-integer";

// A form's values are text: a z.number() member was a 422 whatever it said, so schemas preprocessed text into numbers,
// which then ran on JSON too ("5" read as 5 where the document says type: number).
describe("a form body's number members read decimal text; a JSON body's numbers stay JSON's", () => {
  const body = z.object({
    rate: z.number().min(0).nullable().optional(),
    count: z.int().default(1),
    own: queryInteger(z.int()).optional(),
    name: z.string().optional(),
  });
  const router = createRouter().route("POST", "/items", { body, form: true }, ({ body }) => json(200, body));
  const serve = adapt(router.handler());
  const post = async (text: string, type = "application/x-www-form-urlencoded") => {
    const response = await serve(
      new Request("http://x/items", { method: "POST", headers: { "content-type": type }, body: text }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it.each([
    ["rate=0.5", { rate: 0.5, count: 1 }],
    ["rate=16&count=-3", { rate: 16, count: -3 }],
    ["rate=0&count=0", { rate: 0, count: 0 }],
    ["rate=", { rate: null, count: 1 }],
    ["own=7&name=5", { own: 7, count: 1, name: "5" }],
  ])("reads %s as the numbers it spells", async (text, expected) => {
    expect(await post(text)).toEqual({ status: 200, body: expected });
  });

  it.each(["0x10", "1e1", "+5", " 5", "5.", ".5", "05", "Infinity", "NaN"])(
    "refuses rate=%s with a 422 pointing at it",
    async (text) => {
      const refused = await post(`rate=${encodeURIComponent(text)}`);
      expect(refused.status).toBe(422);
      expect((refused.body["errors"] as { pointer: string }[]).map((e) => e.pointer)).toEqual(["/rate"]);
    },
  );

  // Regression: "-0" read as -0, a second spelling of 0 (and a value Object.is tells from it), where queryInteger
  // refuses it.
  it.each(["-0", "-0.0", "-0.000"])("refuses rate=%s, a minus on zero, with a 422 pointing at it", async (text) => {
    const refused = await post(`rate=${text}`);
    expect(refused.status).toBe(422);
    expect((refused.body["errors"] as { pointer: string }[]).map((e) => e.pointer)).toEqual(["/rate"]);
  });

  it("still reads a negative number below 1 in magnitude (-0.5)", async () => {
    const signed = createRouter().route("POST", "/n", { body: z.object({ x: z.number() }), form: true }, ({ body }) =>
      json(200, body),
    );
    const response = await adapt(signed.handler())(
      new Request("http://x/n", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "x=-0.5",
      }),
    );
    expect(await response.json()).toEqual({ x: -0.5 });
  });

  it("refuses an empty value where the member takes no null", async () => {
    const refused = await post("count=");
    expect(refused.status).toBe(422);
    expect((refused.body["errors"] as { pointer: string }[]).map((e) => e.pointer)).toEqual(["/count"]);
  });

  it("leaves a JSON body's numbers as JSON gave them: a string is refused", async () => {
    expect(await post('{"rate":5}', "application/json")).toEqual({ status: 200, body: { rate: 5, count: 1 } });
    const refused = await post('{"rate":"5","count":"2"}', "application/json");
    expect(refused.status).toBe(422);
    expect((refused.body["errors"] as { pointer: string }[]).map((e) => e.pointer).sort()).toEqual(["/count", "/rate"]);
  });
});
