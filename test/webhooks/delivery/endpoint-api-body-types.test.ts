import { beforeEach, describe, expect, it } from "vitest";
import type { Handler, HttpRequest, HttpResponse } from "../../../src/http/message";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { answered } from "./delivery-stores";

// Regression: the schema's preprocessing, meant for form bodies (whose values are text), ran on JSON too, so a JSON
// body's `"rate_limit": "5"` was read as 5, `"enabled_events": "*"` as ["*"] and `"all_tenants": "true"` as true,
// where the OpenAPI document (JSON Schema `type: number`, `array`, `boolean`) says they are refused.

const KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";
const enc = new TextEncoder();
const URL_ = "https://hooks.example.com/in";

function req(method: string, path: string, body: string | object, type?: string): HttpRequest {
  const isForm = typeof body === "string";
  return {
    method,
    path,
    search: "",
    query: {},
    headers: {
      authorization: `Bearer ${KEY}`,
      "content-type": type ?? (isForm ? "application/x-www-form-urlencoded" : "application/json"),
    },
    body: enc.encode(isForm ? body : JSON.stringify(body)),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON documents.
const parse = (res: HttpResponse) => JSON.parse(String(res.body)) as Record<string, any>;

describe("endpoint API bodies: JSON is typed, a form is text", () => {
  let endpoints: ReturnType<typeof createMemoryEndpointStore>;
  let handler: Handler;
  beforeEach(() => {
    endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    handler = answered(
      declareEndpointApi(createRouter(), { endpoints, queue, apiKeys: [KEY], resolve: false }).handler(),
    );
  });
  const created = async () =>
    parse(await handler(req("POST", "/v1/webhook_endpoints", { url: URL_, enabled_events: ["*"] }))).id as string;

  it.each([
    [{ rate_limit: "5" }, "/rate_limit"],
    [{ rate_limit: "" }, "/rate_limit"],
    [{ rate_limit: "0.5" }, "/rate_limit"],
    [{ all_tenants: "true" }, "/all_tenants"],
    [{ enabled_events: "*" }, "/enabled_events"],
  ])("a JSON creation with %j is a 422 pointing at %s, storing nothing", async (fields, pointer) => {
    const res = await handler(req("POST", "/v1/webhook_endpoints", { url: URL_, enabled_events: ["*"], ...fields }));
    expect(res.status).toBe(422);
    expect(parse(res).errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer]);
    expect(await endpoints.list({ limit: 10 })).toEqual([]);
  });

  it.each([
    ["POST", "application/json"],
    ["PATCH", "application/json"],
    ["PATCH", "application/merge-patch+json"],
  ])('a JSON update (%s, %s) with rate_limit "5" is a 422 at /rate_limit, changing nothing', async (method, type) => {
    const id = await created();
    const res = await handler(req(method, `/v1/webhook_endpoints/${id}`, { rate_limit: "5" }, type));
    expect(res.status).toBe(422);
    expect(parse(res).errors[0].pointer).toBe("/rate_limit");
    expect((await endpoints.get(id))?.rateLimit).toBeNull();
  });

  it("a form keeps reading text: rate_limit as decimal, enabled_events once as a list, all_tenants as true", async () => {
    const form = `url=${encodeURIComponent(URL_)}&enabled_events=*&rate_limit=0.5&all_tenants=true`;
    const res = await handler(req("POST", "/v1/webhook_endpoints", form));
    expect(res.status).toBe(201);
    expect(parse(res)).toMatchObject({ enabled_events: ["*"], rate_limit: 0.5, all_tenants: true });
  });

  it("a form's empty rate_limit lifts the limit (a form cannot send null); JSON sends null", async () => {
    const id = await created();
    const set = await handler(req("POST", `/v1/webhook_endpoints/${id}`, "rate_limit=16"));
    expect(parse(set).rate_limit).toBe(16);
    const lifted = await handler(req("POST", `/v1/webhook_endpoints/${id}`, "rate_limit="));
    expect(lifted.status).toBe(200);
    expect(parse(lifted).rate_limit).toBeNull();
    await handler(req("POST", `/v1/webhook_endpoints/${id}`, { rate_limit: 2 }));
    const nulled = await handler(req("POST", `/v1/webhook_endpoints/${id}`, { rate_limit: null }));
    expect(parse(nulled).rate_limit).toBeNull();
  });
});
