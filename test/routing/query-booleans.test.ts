import { describe, expect, it } from "vitest";
import { z } from "zod";
import { adapt } from "../../src/fetch/index";
import { json } from "../../src/http/message";
import { createRouter } from "../../src/routing/index";
import { operation } from "./openapi-support";

describe("regression: a boolean query parameter read ?flag=false as true (z.coerce.boolean) or refused every value (z.boolean)", () => {
  const query = z.object({
    plain: z.boolean().optional(),
    coerced: z.coerce.boolean().optional(),
    defaulted: z.boolean().default(false),
    flags: z.array(z.boolean()).optional(),
    q: z.string().optional(),
  });
  const router = createRouter().route("GET", "/items", { query }, ({ query }) => json(200, query));
  const serve = adapt(router.handler());
  const get = async (search: string) => {
    const response = await serve(new Request(`http://x/items?${search}`));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("are documented as booleans, as a client then sends true or false", () => {
    const parameters = operation(router.openapi({ title: "t", version: "1" }), "/items", "get")["parameters"];
    expect(parameters[0].schema).toEqual({ type: "boolean" });
    expect(parameters[1].schema).toEqual({ type: "boolean" });
  });

  it.each([
    ["plain=true", { plain: true }],
    ["plain=false", { plain: false }],
    ["coerced=true", { coerced: true }],
    ["coerced=false", { coerced: false }],
    ["defaulted=true", { defaulted: true }],
    ["flags=true&flags=false", { flags: [true, false] }],
    ["flags=false", { flags: [false] }],
  ])("reads %s as the boolean it spells", async (search, expected) => {
    expect(await get(search)).toEqual({ status: 200, body: { defaulted: false, ...expected } });
  });

  it.each(["plain=yes", "coerced=0", "coerced=", "coerced=False", "plain=1", "coerced=TRUE"])(
    "refuses %s as the other query errors are refused: 400 validation_failed pointing at it",
    async (search) => {
      const name = search.split("=")[0];
      const { status, body } = await get(search);
      expect(status).toBe(400);
      expect(body["code"]).toBe("validation_failed");
      expect(body["errors"]).toEqual([
        { pointer: `/${name}`, in: "query", code: "invalid_type", message: expect.any(String) },
      ]);
    },
  );

  it("points at the list item refused, and lists every other error beside it", async () => {
    const { status, body } = await get("flags=true&flags=no&plain=maybe&q=a&q=b");
    expect(status).toBe(400);
    expect((body["errors"] as { pointer: string }[]).map((e) => e.pointer).sort()).toEqual([
      "/flags/1",
      "/plain",
      "/q",
    ]);
  });

  it("leaves z.stringbool() (zod's own spellings, documented as a string) and string members alone", async () => {
    const router = createRouter().route(
      "GET",
      "/s",
      { query: z.object({ on: z.stringbool().optional(), q: z.string().optional() }) },
      ({ query }) => json(200, query),
    );
    const response = await adapt(router.handler())(new Request("http://x/s?on=yes&q=false"));
    expect(await response.json()).toEqual({ on: true, q: "false" });
  });
});

describe("regression: a form body's boolean member was a 422 whatever it said (form values are text)", () => {
  const body = z.object({ active: z.boolean(), flags: z.array(z.boolean()).optional(), name: z.string().optional() });
  const router = createRouter().route("POST", "/items", { body, form: true }, ({ body }) => json(200, body));
  const serve = adapt(router.handler());
  const post = async (text: string, type = "application/x-www-form-urlencoded") => {
    const response = await serve(
      new Request("http://x/items", { method: "POST", headers: { "content-type": type }, body: text }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it.each([
    ["active=true", { active: true }],
    ["active=false&name=a", { active: false, name: "a" }],
    ["active=true&flags=false&flags=true", { active: true, flags: [false, true] }],
  ])("reads %s as the booleans it spells", async (text, expected) => {
    expect(await post(text)).toEqual({ status: 200, body: expected });
  });

  it("refuses any other spelling with a 422 pointing at it, beside the body's other errors", async () => {
    const refused = await post("active=yes&flags=true&flags=1&name=a&name=b");
    expect(refused.status).toBe(422);
    const pointers = (refused.body["errors"] as { pointer: string }[]).map((error) => error.pointer).sort();
    expect(pointers).toEqual(["/active", "/flags/1", "/name"]);
  });

  it("leaves a JSON body's booleans as JSON gave them", async () => {
    expect(await post('{"active":false}', "application/json")).toEqual({ status: 200, body: { active: false } });
    expect((await post('{"active":"false"}', "application/json")).status).toBe(422);
  });
});
