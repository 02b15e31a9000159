import { describe, expect, it } from "vitest";
import { z } from "zod";
import { adapt } from "../../src/fetch/index";
import { json } from "../../src/http/message";
import { createRouter } from "../../src/routing/index";
import { listMembers, withLists } from "../../src/routing/query-arrays";
import { operation } from "./openapi-support";

describe("array query parameters (OpenAPI 3.1 §4.8.12.4: style form, explode true)", () => {
  const query = z.object({
    tag: z.array(z.string()).optional(),
    ids: z.array(z.coerce.number().int()).default([]),
    pair: z.tuple([z.string()]).optional(),
    q: z.string().optional(),
  });
  const router = createRouter().route("GET", "/items", { query }, ({ query }) => json(200, query));
  const serve = adapt(router.handler());
  const get = async (search: string) => {
    const response = await serve(new Request(`http://x/items?${search}`));
    return { status: response.status, body: (await response.json()) as unknown };
  };

  it("are documented as arrays", () => {
    const parameters = operation(router.openapi({ title: "t", version: "1" }), "/items", "get")["parameters"];
    expect(parameters[0]).toEqual({
      name: "tag",
      in: "query",
      required: false,
      schema: { type: "array", items: { type: "string" } },
    });
  });

  it("take one value as a one-item list, as the document's serialisation sends it", async () => {
    expect(await get("tag=a")).toEqual({ status: 200, body: { tag: ["a"], ids: [] } });
    expect(await get("ids=7&pair=x")).toEqual({ status: 200, body: { ids: [7], pair: ["x"] } });
  });

  it("take repeated values as the list, and leave other members alone", async () => {
    expect(await get("tag=a&tag=b&q=z")).toEqual({ status: 200, body: { tag: ["a", "b"], ids: [], q: "z" } });
    expect((await get("q=a&q=b")).status).toBe(400); // a string member takes one value
  });
});

describe("listMembers / withLists", () => {
  it("finds lists under optional, default, nullable, pipe and lazy wrappers", () => {
    const schema = z.object({
      a: z.array(z.string()).nullable().optional(),
      b: z.array(z.string()).transform((v) => v.length),
      c: z.lazy(() => z.array(z.string())),
      d: z.string(),
      e: z.union([z.string(), z.array(z.string())]),
    });
    expect([...listMembers(schema)]).toEqual(["a", "b", "c"]);
  });

  it("returns the same record when nothing changes", () => {
    const query = { tag: ["a"], q: "x" };
    expect(withLists(query, new Set(["tag"]))).toBe(query);
    expect(withLists({ tag: "a", q: "x" }, new Set(["tag"]))).toEqual({ tag: ["a"], q: "x" });
  });
});

describe("regression: a form body lost its list reading under a wrapper of its z.object", () => {
  const Tags = z.object({ tags: z.array(z.string()) });
  const bodies = {
    strict: Tags.strict(),
    refine: Tags.refine(() => true),
    superRefine: Tags.superRefine(() => {}),
    transform: Tags.transform((value) => value),
    pipe: Tags.pipe(z.object({ tags: z.array(z.string()) })),
    optional: Tags.optional(),
    default: Tags.default({ tags: [] }),
    nullable: Tags.nullable(),
  };
  const router = Object.entries(bodies).reduce(
    (r, [name, body]) => r.route("POST", `/${name}`, { body, form: true }, ({ body }) => json(200, body)),
    createRouter(),
  );
  const serve = adapt(router.handler());

  it.each(Object.keys(bodies))("reads tags=a as [a] through %s", async (name) => {
    const response = await serve(
      new Request(`http://x/${name}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "tags=a",
      }),
    );
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 200, body: { tags: ["a"] } });
  });
});
