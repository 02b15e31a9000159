import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeMiddleware } from "../../src/http/described";
import { type Handler, json } from "../../src/http/message";
import { idempotency, MemoryIdempotencyStore } from "../../src/idempotency/index";
import { createRouter } from "../../src/routing/index";
import { expectValid, type Loose, operation } from "./openapi-support";

const info = { title: "t", version: "1" };
const encoder = new TextEncoder();

describe("requestBody.required (OpenAPI 3.1 §4.8.13)", () => {
  const Job = z.object({ n: z.number() });
  const router = createRouter()
    .route("POST", "/jobs", { body: Job.optional() }, ({ body }) => json(200, { got: body ?? null }))
    .route("POST", "/runs", { body: Job }, () => json(200, {}))
    .resource("/things/{thing_id}", (things) => {
      things.replace({ body: Job.optional() }, () => json(200, {}));
      things.update({ body: Job.optional() }, () => json(200, {}));
    });
  const doc = router.openapi(info);

  it("is false when the body schema accepts undefined, as the router takes an empty body as none", async () => {
    const response = await router.handler()({
      method: "POST",
      path: "/jobs",
      search: "",
      query: {},
      headers: {},
      body: new Uint8Array(),
    });
    expect(response.status).toBe(200);
    expect(operation(doc, "/jobs", "post")["requestBody"].required).toBe(false);
    expect(operation(doc, "/things/{thing_id}", "put")["requestBody"].required).toBe(false);
    await expectValid(doc);
  });

  it("stays true for a required body, and for every merge patch (an empty PATCH is malformed)", () => {
    expect(operation(doc, "/runs", "post")["requestBody"].required).toBe(true);
    expect(operation(doc, "/things/{thing_id}", "patch")["requestBody"].required).toBe(true);
  });
});

describe("request headers a middleware reads", () => {
  const body = z.object({ n: z.number() });
  const withKey = (required: boolean | (() => boolean)) =>
    createRouter()
      .use(idempotency({ required, store: new MemoryIdempotencyStore(), identify: () => "me" }))
      .route("POST", "/orders", { body }, () => json(200, {}));
  const keyOf = (doc: ReturnType<ReturnType<typeof withKey>["openapi"]>) =>
    (operation(doc, "/orders", "post")["parameters"] as Loose[]).find((p) => p.name === "Idempotency-Key");

  it("are required where the middleware refuses a request without them: idempotency({ required: true })", async () => {
    const router = withKey(true);
    const response = await router.handler()({
      method: "POST",
      path: "/orders",
      search: "",
      query: {},
      headers: { "content-type": "application/json" },
      body: encoder.encode('{"n":1}'),
    });
    expect(response.status).toBe(400);
    const doc = router.openapi(info);
    expect(keyOf(doc)).toMatchObject({ in: "header", required: true });
    await expectValid(doc);
  });

  it("are optional when the requirement is false or decided per request", () => {
    expect(keyOf(withKey(false).openapi(info))?.required).toBe(false);
    expect(keyOf(withKey(() => true).openapi(info))?.required).toBe(false);
  });

  it("are required when any layer describing them requires them", () => {
    const tenant = (required: boolean) =>
      describeMiddleware((next: Handler) => next, { requestHeaders: { "X-Tenant": { description: "t", required } } });
    const doc = createRouter()
      .use(tenant(false), tenant(true))
      .route("GET", "/x", {}, () => json(200, {}))
      .openapi(info);
    expect(operation(doc, "/x", "get")["parameters"]).toEqual([
      { name: "X-Tenant", in: "header", required: true, description: "t", schema: { type: "string" } },
    ]);
  });
});

describe("path parameters say how long a value the router takes (maxParamLength, RFC 3986 empty segments)", () => {
  const router = (options: { maxParamLength?: number } = {}) =>
    createRouter(options)
      .route("GET", "/items/{id}", {}, () => json(200, {}))
      .route("GET", "/codes/{code}", { params: z.object({ code: z.string().max(8) }) }, () => json(200, {}))
      .route("GET", "/wide/{code}", { params: z.object({ code: z.string().max(500) }) }, () => json(200, {}))
      .route("GET", "/files/{path*}", {}, () => json(200, {}));
  const schemaOf = (document: ReturnType<ReturnType<typeof router>["openapi"]>, path: string) =>
    operation(document, path, "get")["parameters"][0].schema;

  it("regression: a segment's maxLength is the router's bound, and it is never empty", async () => {
    const document = router({ maxParamLength: 20 }).openapi(info);
    expect(schemaOf(document, "/items/{id}")).toEqual({ type: "string", minLength: 1, maxLength: 20 });
    await expectValid(document);
    const response = await router({ maxParamLength: 20 }).handler()({
      method: "GET",
      path: `/items/${"x".repeat(21)}`,
      search: "",
      query: {},
      headers: {},
      body: new Uint8Array(),
    });
    expect(response.status).toBe(400);
  });

  it("uses the default bound (100), and keeps a params schema's tighter one", () => {
    const document = router().openapi(info);
    expect(schemaOf(document, "/items/{id}")["maxLength"]).toBe(100);
    expect(schemaOf(document, "/codes/{code}")["maxLength"]).toBe(8);
    expect(schemaOf(document, "/wide/{code}")["maxLength"]).toBe(100);
  });

  it("leaves a wildcard unbounded, as the router does", () => {
    expect(schemaOf(router({ maxParamLength: 20 }).openapi(info), "/files/{path}")).toEqual({ type: "string" });
  });
});
