import { describe, expect, it } from "vitest";
import { z } from "zod";
import { json } from "../../src/http/message";
import { createRouter } from "../../src/routing/index";
import { bodySchema, expectValid, type Loose, operation, resolve } from "./openapi-support";

const info = { title: "t", version: "1" };

describe("components: every $ref leads to the schema that validates the value", () => {
  it("never renames onto a component another schema holds (a user's own UserInput)", async () => {
    const UserInput = z.object({ name: z.string(), password: z.string() }).meta({ id: "UserInput" });
    const User = z.object({ id: z.string(), name: z.string() }).meta({ id: "User" });
    const router = createRouter().resource("/users/{user_id}", (users) => {
      users.create({ body: UserInput, response: User }, ({ created }) => created("u1"));
      users.read({ response: User }, () => json(200, {}));
      // User's input side differs from its output side (no additionalProperties: false): it needs another name.
      users.replace({ body: User, response: User }, () => json(200, {}));
    });
    const doc = router.openapi(info);
    expect(bodySchema(doc, "/users", "post")["required"]).toEqual(["name", "password"]);
    const put = bodySchema(doc, "/users/{user_id}", "put");
    expect(Object.keys(put["properties"])).toEqual(["id", "name"]);
    expect(put["additionalProperties"]).toBeUndefined();
    expect(
      resolve(doc, operation(doc, "/users/{user_id}", "get")["responses"]["200"].content["application/json"].schema),
    ).toMatchObject({ additionalProperties: false });
    await expectValid(doc);
  });

  it("gives each unnamed recursive schema its own component (zod calls each __schema0)", () => {
    const tree = (field: string) => {
      const Node: z.ZodType = z.lazy(() => z.object({ [field]: z.string(), kids: z.array(Node) }));
      return z.object({ tree: Node });
    };
    let router = createRouter();
    for (const field of ["alpha", "beta", "gamma"]) {
      router = router.route("POST", `/${field}`, { body: tree(field) }, () => json(200, {}));
    }
    const doc = router.openapi(info);
    for (const field of ["alpha", "beta", "gamma"]) {
      const node = resolve(doc, bodySchema(doc, `/${field}`, "post")["properties"].tree);
      expect(Object.keys(node["properties"])).toEqual([field, "kids"]);
      // The recursion points back at the same component.
      expect(resolve(doc, node["properties"].kids.items)).toBe(node);
    }
  });

  it("renames a definition whose reference moved, rather than overwrite the first one's", () => {
    const B1 = z.object({ x: z.string() }).meta({ id: "B" });
    const A1 = z.object({ b: B1 }).meta({ id: "A" });
    const B2 = z.object({ y: z.number() }).meta({ id: "B" });
    const A2 = z.object({ b: B2 }).meta({ id: "A" });
    const doc = createRouter()
      .route("POST", "/one", { body: z.object({ a: A1 }) }, () => json(200, {}))
      .route("POST", "/two", { body: z.object({ a: A2 }) }, () => json(200, {}))
      .openapi(info);
    const member = (path: string) =>
      Object.keys(resolve(doc, resolve(doc, bodySchema(doc, path, "post")["properties"].a)["properties"].b).properties);
    expect(member("/one")).toEqual(["x"]);
    expect(member("/two")).toEqual(["y"]);
  });

  it("reuses a component for the same schema, and keeps Problem the problem document's", async () => {
    const Money = z.object({ amount: z.number() }).meta({ id: "Money" });
    const Problem = z.object({ reason: z.string() }).meta({ id: "Problem" });
    const doc = createRouter()
      .route("POST", "/a", { body: z.object({ price: Money }) }, () => json(200, {}))
      .route("POST", "/b", { body: z.object({ price: Money, issue: Problem }) }, () => json(200, {}))
      .openapi(info);
    expect(Object.keys(doc.components.schemas).sort()).toEqual(["Money", "Problem", "ProblemInput"]);
    expect(doc.components.schemas["Problem"]).toMatchObject({ description: "An RFC 9457 problem document." });
    expect(resolve(doc, bodySchema(doc, "/b", "post")["properties"].issue)["required"]).toEqual(["reason"]);
    await expectValid(doc);
  });
});

describe("regression: an id with a character OpenAPI refuses in a component name made the document invalid", () => {
  it("names the component with '_' in its place, and every $ref leads to it (a '/' made a dangling one)", async () => {
    const Item = z.object({ id: z.string() }).meta({ id: "Order Item" });
    const Other = z.object({ a: z.string(), b: z.string() }).meta({ id: "shop/Other~1" });
    const router = createRouter()
      .route("GET", "/items", { response: z.object({ item: Item, other: Other }) }, () => json(200, {}))
      .route("PATCH", "/others", { body: Other }, () => json(200, {}))
      .resource("/others/{other_id}", (others) => {
        others.update({ body: Other }, ({ merge }) => json(200, merge({ a: "", b: "" })));
      });
    const doc = router.openapi(info);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(["Order_Item", "shop_Other_1", "shop_Other_1Input", "shop_Other_1InputMergePatch"]),
    );
    for (const name of Object.keys(doc.components.schemas)) expect(name).toMatch(/^[a-zA-Z0-9._-]+$/);
    const item = operation(doc, "/items", "get")["responses"]["200"].content["application/json"].schema;
    const properties = resolve(doc, item)["properties"];
    expect(resolve(doc, properties.item)["required"]).toEqual(["id"]);
    expect(resolve(doc, properties.other)["required"]).toEqual(["a", "b"]);
    expect(bodySchema(doc, "/others", "patch")["required"]).toEqual(["a", "b"]);
    await expectValid(doc);
  });
});

describe("merge patch components", () => {
  it("never take a component name the API's own schema holds (<Name>MergePatch)", async () => {
    const User = z.object({ id: z.string(), name: z.string() }).meta({ id: "User" });
    const Own = z.object({ note: z.string() }).meta({ id: "UserMergePatch" });
    const doc = createRouter()
      .route("POST", "/notes", { body: z.object({ own: Own }) }, () => json(200, {}))
      .resource("/users/{user_id}", (users) => users.update({ body: User }, () => json(200, {})))
      .openapi(info);
    const patch = operation(doc, "/users/{user_id}", "patch")["requestBody"].content["application/merge-patch+json"];
    expect(Object.keys(resolve(doc, patch.schema)["properties"])).toEqual(["id", "name"]);
    expect(Object.keys(resolve(doc, bodySchema(doc, "/notes", "post")["properties"].own)["properties"])).toEqual([
      "note",
    ]);
    await expectValid(doc);
  });
});

describe("params and query schemas given an id", () => {
  const Query = z
    .object({ limit: z.coerce.number().int().max(50), q: z.string().optional() })
    .meta({ id: "ListQuery" });
  const Params = z.object({ user_id: z.string().regex(/^u\d+$/) }).meta({ id: "UserParams" });
  const doc = createRouter()
    .route("GET", "/items", { query: Query }, () => json(200, {}))
    .route("GET", "/users/{user_id}", { params: Params }, () => json(200, {}))
    .openapi(info);

  it("still list their members as parameters", async () => {
    const query = operation(doc, "/items", "get")["parameters"] as Loose[];
    expect(query.map((p) => [p.name, p.in, p.required])).toEqual([
      ["limit", "query", true],
      ["q", "query", false],
    ]);
    const path = operation(doc, "/users/{user_id}", "get")["parameters"] as Loose[];
    expect(path).toEqual([
      {
        name: "user_id",
        in: "path",
        required: true,
        schema: { type: "string", pattern: "^u\\d+$", minLength: 1, maxLength: 100 },
      },
    ]);
    await expectValid(doc);
  });
});

describe("regression: a zod type JSON Schema cannot express was documented as {} (any value) without a word", () => {
  const Row = z.object({
    id: z.int64(),
    createdAt: z.date(),
    seen: z.iso.datetime().pipe(z.coerce.date()),
    tags: z.set(z.string()),
    slug: z.string().transform((s) => s.toLowerCase()),
    version: z.literal(2n),
    label: z.string(),
  });
  const doc = createRouter()
    .route("GET", "/rows", { query: z.object({ after: z.coerce.bigint() }), response: Row }, () => json(200, {}))
    .route("POST", "/rows", { body: z.object({ at: z.date(), label: z.string() }) }, () => json(200, {}))
    .openapi(info);
  const response = () =>
    operation(doc, "/rows", "get")["responses"]["200"].content["application/json"].schema["properties"] as Loose;

  it("documents a Date in a response as the string JSON.stringify writes (RFC 3339 date-time)", async () => {
    expect(response()["createdAt"]).toEqual({ type: "string", format: "date-time" });
    expect(response()["seen"]).toEqual({ type: "string", format: "date-time" });
    await expectValid(doc);
  });

  it("marks every other such schema, in responses, bodies and parameters, rather than leave a bare {}", () => {
    for (const name of ["id", "tags", "slug", "version"]) {
      expect(response()[name], name).toMatchObject({ "x-zod-unrepresentable": expect.any(String) });
    }
    // A bigint literal is not the JSON number zod's fallback gave it.
    expect(response()["version"]["const"]).toBeUndefined();
    expect(response()["label"]).toEqual({ type: "string" });
    // A JSON body never holds a Date: no date-time string is promised on the input side.
    expect(bodySchema(doc, "/rows", "post")["properties"].at).toMatchObject({ "x-zod-unrepresentable": "date" });
    const after = (operation(doc, "/rows", "get")["parameters"] as Loose[]).find((p) => p.name === "after");
    expect(after?.schema).toMatchObject({ "x-zod-unrepresentable": "bigint" });
  });
});
