import { describe, expect, it } from "vitest";
import { z } from "zod";
import { json } from "../../src/http/message";
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
      { name: "user_id", in: "path", required: true, schema: { type: "string" } },
      { name: "order_id", in: "path", required: true, schema: { type: "string", pattern: "^o\\d+$" } },
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
    expect(patch["requestBody"].content["application/merge-patch+json"].schema.required).toBeUndefined();
    expect(patch["responses"]["415"]).toBeDefined();
    const remove = paths["/users/{user_id}"]?.["delete"] as Loose;
    expect(Object.keys(remove["responses"])).toEqual(["204", "404"]);
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
