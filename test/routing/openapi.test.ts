import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeMiddleware } from "../../src/http/described";
import { type Handler, json } from "../../src/http/message";
import { idempotency, MemoryIdempotencyStore } from "../../src/idempotency/index";
import { createRouter } from "../../src/routing/index";
import { app, newStore } from "./app";

// biome-ignore lint/suspicious/noExplicitAny: walking a JSON document in assertions.
type Loose = Record<string, any>;

describe("OpenAPI 3.1 document", () => {
  const doc = app(newStore()).openapi({ title: "Shop", version: "1.0.0" }, { servers: [{ url: "http://127.0.0.1" }] });
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;

  it("lists every route under its OpenAPI path with its operationId", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "http://127.0.0.1" }]);
    expect(Object.keys(paths)).toEqual([
      "/users",
      "/users/{user_id}",
      "/users/{user_id}/orders",
      "/users/{user_id}/orders/{order_id}",
      "/users/{user_id}/orders/{order_id}/ship",
      "/static/{path}",
    ]);
    expect(Object.keys(paths["/users/{user_id}"] ?? {})).toEqual(["get", "put", "patch", "delete"]);
    expect(paths["/users"]?.["get"]?.["operationId"]).toBe("users.list");
    expect(paths["/users"]?.["get"]?.["tags"]).toEqual(["users"]);
  });

  it("describes path and query parameters from the templates and zod schemas", () => {
    expect(paths["/users"]?.["get"]?.["parameters"]).toEqual([
      { name: "tag", in: "query", required: false, schema: { type: "string" } },
      { name: "limit", in: "query", required: false, schema: expect.objectContaining({ type: "integer", minimum: 1 }) },
    ]);
    expect(paths["/users/{user_id}/orders/{order_id}"]?.["get"]?.["parameters"]).toEqual([
      { name: "user_id", in: "path", required: true, schema: { type: "string", minLength: 1, maxLength: 100 } },
      {
        name: "order_id",
        in: "path",
        required: true,
        schema: { type: "string", pattern: "^o\\d+$", minLength: 1, maxLength: 100 },
      },
    ]);
  });

  it("describes bodies, 201 + Location, 204, merge patches and problem responses", () => {
    const create = paths["/users"]?.["post"] as Loose;
    expect(create["requestBody"].content["application/json"].schema.required).toEqual(["name", "email", "tags"]);
    expect(create["responses"]["201"].headers.Location).toBeDefined();
    expect(create["responses"]["201"].content["application/json"].schema.properties.id).toEqual({ type: "string" });
    expect(create["responses"]["422"].content["application/problem+json"].schema).toEqual({
      $ref: "#/components/schemas/Problem",
    });
    const patch = paths["/users/{user_id}"]?.["patch"] as Loose;
    expect(Object.keys(patch["requestBody"].content)).toEqual(["application/merge-patch+json"]);
    const patchSchema = patch["requestBody"].content["application/merge-patch+json"].schema;
    expect(patchSchema.required).toBeUndefined();
    // RFC 7396: any member may be null, which removes it.
    expect(patchSchema.properties.email).toEqual({
      anyOf: [{ type: "string", format: "email", pattern: expect.any(String) }, { type: "null" }],
    });
    expect(patch["responses"]["415"]).toBeDefined();
    const remove = paths["/users/{user_id}"]?.["delete"] as Loose;
    expect(Object.keys(remove["responses"])).toEqual(["204", "400", "404"]); // 400: a malformed user_id
    expect(doc.components.schemas["Problem"]).toBeDefined();
  });

  it("hoists schemas with an id into components and rewrites their references", () => {
    const Money = z.object({ amount: z.number(), currency: z.string() }).meta({ id: "Money" });
    const router = createRouter().route(
      "POST",
      "/payments",
      { body: z.object({ price: Money }), response: z.object({ charged: Money }) },
      () => json(200, {}),
    );
    const spec = router.openapi({ title: "Pay", version: "1" });
    const text = JSON.stringify(spec);
    expect(spec.components.schemas["Money"]).toMatchObject({ type: "object" });
    expect(text).toContain('"$ref":"#/components/schemas/Money"');
    expect(text).not.toContain("#/$defs/");
    expect(text).not.toContain("$schema");
  });

  it("is plain JSON (serves as /openapi.json)", () => {
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});

describe("JSON Merge Patch request schemas (RFC 7396)", () => {
  const Address = z.object({ street: z.string(), city: z.string() }).meta({ id: "Address" });
  const Node: z.ZodType<{ name: string; children: unknown[] }> = z
    .object({
      name: z.string(),
      get children() {
        return z.array(Node);
      },
    })
    .meta({ id: "Node" });
  const Profile = z.object({
    name: z.string(),
    age: z.number().int(),
    contact: z.object({ email: z.email(), phone: z.object({ country: z.string(), number: z.string() }) }),
    tags: z.array(z.object({ key: z.string(), value: z.string() })),
    home: Address,
    tree: Node,
    kind: z.enum(["a", "b"]),
  });
  const router = createRouter().resource("/profiles/{profile_id}", (r) => {
    r.update({ body: Profile }, () => json(200, {}));
  });
  const spec = router.openapi({ title: "Profiles", version: "1" });
  const operation = (spec.paths["/profiles/{profile_id}"] as Record<string, Loose>)["patch"] as Loose;
  const schema = operation["requestBody"].content["application/merge-patch+json"].schema as Loose;
  const nullable = (inner: unknown) => ({ anyOf: [inner, { type: "null" }] });

  it("makes every member optional and nullable, at every depth of objects", () => {
    expect(schema.type).toBe("object");
    expect(schema.required).toBeUndefined();
    expect(schema.properties.name).toEqual(nullable({ type: "string" }));
    expect(schema.properties.kind).toEqual(nullable({ type: "string", enum: ["a", "b"] }));
    const contact = schema.properties.contact.anyOf[0];
    expect(contact.required).toBeUndefined();
    expect(contact.properties.email.anyOf[1]).toEqual({ type: "null" });
    const phone = contact.properties.phone.anyOf[0];
    expect(phone.required).toBeUndefined();
    expect(phone.properties.country).toEqual(nullable({ type: "string" }));
  });

  it("keeps array items whole: a patch replaces an array wholesale", () => {
    expect(schema.properties.tags).toEqual(
      nullable({
        type: "array",
        items: expect.objectContaining({ required: ["key", "value"] }),
      }),
    );
  });

  it("patches referenced components through a <Name>MergePatch component, recursive ones included", () => {
    expect(schema.properties.home).toEqual(nullable({ $ref: "#/components/schemas/AddressMergePatch" }));
    const addressPatch = spec.components.schemas["AddressMergePatch"] as Loose;
    expect(addressPatch.required).toBeUndefined();
    expect(addressPatch.properties.city).toEqual(nullable({ type: "string" }));
    // The resource's own component stays complete.
    expect((spec.components.schemas["Address"] as Loose).required).toEqual(["street", "city"]);
    expect(schema.properties.tree).toEqual(nullable({ $ref: "#/components/schemas/NodeMergePatch" }));
    const nodePatch = spec.components.schemas["NodeMergePatch"] as Loose;
    expect(nodePatch.required).toBeUndefined();
    expect(nodePatch.properties.children.anyOf[0].items).toEqual({ $ref: "#/components/schemas/Node" });
  });

  it("has no required member on any object a patch merges into", () => {
    // Walk the patch schema through object members and referenced patch components, not into array items.
    const seen = new Set<unknown>();
    const walk = (value: Loose | undefined): void => {
      if (value === undefined || seen.has(value)) return;
      seen.add(value);
      expect(value.required).toBeUndefined();
      if (typeof value.$ref === "string")
        walk(spec.components.schemas[value.$ref.split("/").at(-1) as string] as Loose);
      for (const member of Object.values((value.properties ?? {}) as Record<string, Loose>)) walk(member);
      for (const branch of (value.anyOf ?? []) as Loose[]) walk(branch);
    };
    walk(schema);
    expect(seen.size).toBeGreaterThan(10);
  });
});

describe("regression: a PATCH without a body schema was documented as taking objects only", () => {
  it("documents any JSON value, as the router takes a non-object merge patch (RFC 7396 §2: it replaces)", async () => {
    const router = createRouter().resource("/notes/{note_id}", (r) => {
      r.update({}, ({ merge }) => json(200, { value: merge({ text: "a" }) }));
    });
    const spec = router.openapi({ title: "Notes", version: "1" });
    const operation = (spec.paths["/notes/{note_id}"] as Record<string, Loose>)["patch"] as Loose;
    expect(operation["requestBody"].content["application/merge-patch+json"].schema).toEqual({});
    const patch = await router.handler()({
      method: "PATCH",
      path: "/notes/1",
      search: "",
      query: {},
      headers: { "content-type": "application/merge-patch+json" },
      body: new TextEncoder().encode('"replaced"'),
    });
    expect(patch.status).toBe(200);
    expect(JSON.parse(patch.body as string)).toEqual({ value: "replaced" });
  });
});

describe("regression: a merge patch schema kept the body schema's defaults, though a member left out keeps its value", () => {
  const Item = z.object({
    qty: z.number().default(1),
    lines: z.array(z.object({ sku: z.string(), n: z.number().default(1) })).default([]),
  });
  let current = { qty: 5, lines: [] as { sku: string; n: number }[] };
  const router = createRouter().resource("/items/{item_id}", (r) => {
    r.update({ body: Item }, ({ merge }) => {
      current = merge(current);
      return json(200, current);
    });
  });
  const spec = router.openapi({ title: "Items", version: "1" });
  const schema = (spec.paths["/items/{item_id}"] as Record<string, Loose>)["patch"]?.["requestBody"].content[
    "application/merge-patch+json"
  ].schema as Loose;

  it("documents no default on a member a patch may leave out, as an empty patch changes nothing", async () => {
    expect(schema.properties.qty).toEqual({ anyOf: [{ type: "number" }, { type: "null" }] });
    expect(schema.properties.lines.anyOf[0].default).toBeUndefined();
    const response = await router.handler()({
      method: "PATCH",
      path: "/items/i1",
      search: "",
      query: {},
      headers: { "content-type": "application/merge-patch+json" },
      body: new TextEncoder().encode("{}"),
    });
    expect(JSON.parse(response.body as string)).toStrictEqual({ qty: 5, lines: [] });
  });

  it("keeps the defaults of array items: a patch replaces an array whole, and the body schema fills them", () => {
    expect(schema.properties.lines.anyOf[0].items.properties.n).toEqual({ default: 1, type: "number" });
  });
});

describe("path parameters are valid OpenAPI 3.1", () => {
  const router = createRouter()
    .route("GET", "/static/*", { name: "static" }, () => json(200, {}))
    .route("GET", "/assets/{wildcard}/*", { name: "assets" }, () => json(200, {}))
    .route("GET", "/files/{path*}", { name: "files" }, () => json(200, {}))
    .route("GET", "/users/{id}", { name: "users.read" }, () => json(200, {}))
    .route("DELETE", "/users/{user_id}", { name: "users.remove" }, () => json(200, {}))
    .route("GET", "/repos/{base}...{head}", { name: "compare" }, () => json(200, {}));
  const spec = router.openapi({ title: "Paths", version: "1" });
  const parameters = (path: string, method: string) =>
    (((spec.paths[path] as Record<string, Loose>)[method] as Loose)["parameters"] as Loose[]).map((p) => p.name);

  it("names a bare wildcard and never emits allowReserved on a path parameter", () => {
    expect(Object.keys(spec.paths)).toEqual([
      "/static/{wildcard}",
      "/assets/{wildcard}/{wildcard_}",
      "/files/{path}",
      "/users/{id}",
      "/repos/{base}...{head}",
    ]);
    expect(parameters("/static/{wildcard}", "get")).toEqual(["wildcard"]);
    expect(parameters("/assets/{wildcard}/{wildcard_}", "get")).toEqual(["wildcard", "wildcard_"]);
    const text = JSON.stringify(spec);
    expect(text).not.toContain("allowReserved");
    expect(text).not.toContain("{*}");
  });

  it("gives templates that differ only in parameter names one path (OpenAPI 3.1 §4.8.8.1)", () => {
    expect(Object.keys(spec.paths["/users/{id}"] ?? {})).toEqual(["get", "delete"]);
    expect(parameters("/users/{id}", "delete")).toEqual(["id"]);
  });
});

describe("the whole document validates against the official OpenAPI 3.1 schema", () => {
  const doc = app(newStore()).openapi({ title: "Shop", version: "1.0.0" }, { servers: [{ url: "http://127.0.0.1" }] });
  async function validate(document: unknown) {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(JSON.stringify(document)));
    return { ...result, version: validator.version };
  }

  // Every template expression is a path parameter of each operation, and the other way round (§4.8.8.1).
  function expectParametersMatchTemplates(document: { paths: Record<string, Record<string, unknown>> }) {
    for (const [path, item] of Object.entries(document.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const operation of Object.values(item) as Loose[]) {
        const inPath = ((operation["parameters"] ?? []) as Loose[]).filter((p) => p.in === "path").map((p) => p.name);
        expect(inPath).toEqual(names);
      }
    }
  }

  it("for the users/orders service", async () => {
    expect(await validate(doc)).toMatchObject({ valid: true, version: "3.1" });
    expectParametersMatchTemplates(doc);
  });

  it("for every kind of operation, template and schema", async () => {
    const Money = z.object({ amount: z.number(), currency: z.string().length(3) }).meta({ id: "Money" });
    const Item = z.object({ id: z.string(), price: Money, labels: z.record(z.string(), z.string()) });
    const router = createRouter()
      .resource("/shops/{shop_id}", (shops) => {
        shops.list({ query: z.object({ q: z.string().optional() }), response: z.array(Item) }, () => json(200, []));
        shops.create({ body: Item.omit({ id: true }), response: Item }, ({ created }) => created("1"));
        shops.read({ params: z.object({ shop_id: z.string().min(2) }), response: Item }, () => json(200, {}));
        shops.replace({}, () => json(200, {}));
        shops.update({ body: Item }, () => json(200, {}));
        shops.remove({ deprecated: true, summary: "Close a shop" }, () => true);
        shops.action("POST", "archive", { tags: ["admin"] }, () => json(200, {}));
      })
      .route("GET", "/static/*", {}, () => json(200, {}))
      .route("GET", "/files/{path*}", {}, () => json(200, {}))
      .route("GET", "/repos/{base}...{head}", {}, () => json(200, {}))
      .route("HEAD", "/ping", {}, () => json(200, {}))
      .route("PROPFIND", "/dav", {}, () => json(200, {}));
    const document = router.openapi(
      { title: "All", version: "2", description: "Every feature" },
      { servers: [{ url: "https://api.example.com" }] },
    );
    const result = await validate(document);
    expect(result.errors).toBeUndefined();
    expect(result).toMatchObject({ valid: true, version: "3.1" });
    expectParametersMatchTemplates(document);
  });

  it("catches an invalid document (the check can fail)", async () => {
    const broken = JSON.parse(JSON.stringify(doc));
    broken.paths["/users"].get.parameters[0].in = "body";
    expect((await validate(broken)).valid).toBe(false);
  });
});

describe("declared responses", () => {
  const key = describeMiddleware((next: Handler) => next, {
    responses: { 401: { description: "No key." } },
    security: { apiKey: { type: "apiKey", name: "x-api-key", in: "header" } },
  });
  const jwt = describeMiddleware((next: Handler) => next, {
    responses: { 401: { description: "No token." }, 403: { description: "Not yours.", methods: ["PUT"] } },
    successHeaders: { "X-Trace": { description: "A trace id." } },
    requestHeaders: { "X-Tenant": { description: "The tenant.", methods: ["PUT"] } },
    security: { bearer: { type: "http", scheme: "bearer" }, basic: { type: "http", scheme: "basic" } },
  });
  const Thing = z.object({ id: z.string() });
  const router = createRouter()
    .use(key)
    .resource("/things/{thing_id}", (things) => {
      things.use(jwt);
      things.read({ response: Thing }, () => json(200, { id: "t" }));
      things.replace({ body: Thing, responses: { 409: { description: "Locked." } } }, () => json(200, { id: "t" }));
    })
    .route(
      "POST",
      "/things/{thing_id}/retry",
      {
        name: "retry",
        responses: { 202: { description: "Queued.", schema: Thing, headers: { Location: { description: "Where." } } } },
      },
      () => json(202, { id: "t" }),
    );
  const doc = router.openapi({ title: "t", version: "1" });
  const item = doc.paths["/things/{thing_id}"] as Record<
    string,
    { responses: Record<string, Record<string, unknown>>; security?: unknown; parameters?: { name: string }[] }
  >;

  it("adds each layer's statuses where its methods apply, and its success headers to every 2xx", () => {
    expect(Object.keys(item["get"]?.responses ?? {}).sort()).toEqual(["200", "400", "401", "404"]);
    expect(Object.keys(item["put"]?.responses ?? {}).sort()).toEqual([
      "200", // no response schema: the handler may answer the new state or nothing
      "204",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "415",
      "422",
    ]);
    expect(item["put"]?.responses["401"]?.["description"]).toBe("No key. No token."); // either layer may answer
    expect(Object.keys(item["get"]?.responses["200"]?.["headers"] as object)).toEqual(["X-Trace"]);
    expect(item["put"]?.parameters?.map((p) => p.name)).toContain("X-Tenant");
    expect(item["get"]?.parameters?.map((p) => p.name)).not.toContain("X-Tenant");
  });

  it("replaces the default success with a declared 2xx, with its schema and headers", () => {
    const retry = (
      doc.paths["/things/{thing_id}/retry"] as Record<string, { responses: Record<string, Record<string, unknown>> }>
    )["post"];
    // 404: a custom operation on an item names a resource that may not exist.
    expect(Object.keys(retry?.responses ?? {})).toEqual(["202", "400", "401", "404"]);
    expect(retry?.responses["202"]).toMatchObject({
      description: "Queued.",
      headers: { Location: { description: "Where." } },
    });
  });

  it("declares every security scheme and requires one of each layer's", () => {
    expect(Object.keys(doc.components.securitySchemes ?? {}).sort()).toEqual(["apiKey", "basic", "bearer"]);
    expect(item["get"]?.security).toEqual([
      { apiKey: [], bearer: [] },
      { apiKey: [], basic: [] },
    ]);
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    expect(await new Validator().validate(JSON.parse(JSON.stringify(doc)))).toMatchObject({ valid: true });
  });
});

// Regression: a success header went on the 2xx alone, so the idempotency middleware's Idempotent-Replayed, sent on
// every stored answer it replays (a 422 as much as a 201), was undeclared on the refusals.
describe("a success header's statuses", () => {
  const replays = describeMiddleware((next: Handler) => next, {
    responses: { 409: { description: "In progress." } },
    successHeaders: { "X-Replayed": { description: "Replayed.", statuses: (status) => status < 500 } },
  });
  const doc = createRouter()
    .use(replays)
    .resource("/things/{thing_id}", (things) => {
      things.create({ body: z.object({ n: z.number() }) }, ({ created }) => created("t", { id: "t" }));
    })
    .openapi({ title: "t", version: "1" });
  const post = (doc.paths["/things"] as Record<string, { responses: Record<string, { headers?: object }> }>)["post"];
  const headed = (status: string) => Object.keys(post?.responses[status]?.headers ?? {}).includes("X-Replayed");

  it("puts it on the operation's own answers it names, never on one only a middleware gives nor the adapter's 413", () => {
    expect(["201", "400", "415", "422"].filter(headed)).toEqual(["201", "400", "415", "422"]);
    expect(headed("409")).toBe(false);
    expect(headed("413")).toBe(false);
  });

  it("is the idempotency middleware's Idempotent-Replayed: every stored answer, none it does not store", () => {
    const doc = createRouter()
      .use(idempotency({ store: new MemoryIdempotencyStore(), identify: () => "a", storeOutcome: (s) => s !== 415 }))
      .resource("/things/{thing_id}", (things) => {
        things.create({ body: z.object({ n: z.number() }) }, ({ created }) => created("t", { id: "t" }));
      })
      .openapi({ title: "t", version: "1" });
    const responses = (doc.paths["/things"] as Record<string, { responses: Record<string, { headers?: object }> }>)[
      "post"
    ]?.responses;
    const on = Object.keys(responses ?? {}).filter((status) =>
      Object.keys(responses?.[status]?.headers ?? {}).includes("Idempotent-Replayed"),
    );
    expect(on).toEqual(["201", "400", "422"]);
  });
});

describe("regression: a security scheme name OpenAPI refuses as a component name made the document invalid", () => {
  it("names the scheme with '_' in its place, in components and in every requirement", async () => {
    const auth = describeMiddleware((next: Handler) => next, {
      responses: { 401: { description: "No token." } },
      security: { "bearer auth": { type: "http", scheme: "bearer" } },
    });
    const doc = createRouter()
      .use(auth)
      .route("GET", "/x", {}, () => json(200, {}))
      .openapi({ title: "t", version: "1" });
    expect(Object.keys(doc.components.securitySchemes ?? {})).toEqual(["bearer_auth"]);
    expect((doc.paths["/x"] as Loose)["get"].security).toEqual([{ bearer_auth: [] }]);
    const result = await new Validator().validate(JSON.parse(JSON.stringify(doc)));
    expect(result.errors).toBeUndefined();
  });
});

describe("operationId is unique among all operations, webhooks included (OpenAPI 3.1 §4.8.10.1)", () => {
  const catalog = {
    types: ["order.created", "order.shipped"],
    webhook: (type: string) => ({ summary: type, body: z.object({ type: z.literal(type) }), headers: [] }),
  };

  it("regression: a webhook whose operationId a route's name already took gets the next free one", async () => {
    const router = createRouter()
      .route("POST", "/hooks", { name: "webhook.order.created" }, () => json(200, {}))
      .route("POST", "/hooks2", { name: "webhook.order.created_2" }, () => json(200, {}));
    const document = router.openapi({ title: "t", version: "1" }, { webhooks: catalog });
    const ids = [
      ...Object.values(document.paths).flatMap((item) => Object.values(item as Loose)),
      ...Object.values(document.webhooks ?? {}).flatMap((item) => Object.values(item as Loose)),
    ].map((operation) => (operation as Loose)["operationId"]);
    expect(new Set(ids).size).toBe(ids.length);
    // The route keeps its name, which the docs promise as its operationId.
    expect((document.paths["/hooks"] as Loose)["post"].operationId).toBe("webhook.order.created");
    const webhooks = document.webhooks as Loose;
    expect(webhooks["order.created"].post.operationId).toBe("webhook.order.created_3");
    expect(webhooks["order.shipped"].post.operationId).toBe("webhook.order.shipped");
    const result = await new Validator().validate(JSON.parse(JSON.stringify(document)));
    expect(result.errors).toBeUndefined();
  });
});
