/**
 * The shop's OpenAPI document declares the validators it sends (ETag, Last-Modified) and the precondition headers it
 * evaluates: through `conditional()` on the order lists, through `conditionalReadDescribed` on a read that answers
 * with `conditionalRead`.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, describe, expect, it } from "vitest";
import { createShop } from "../../examples/shop/app";
import { conditionalRead, conditionalReadDescribed } from "../../examples/shop/http-caching";
import { describeShop } from "../../examples/shop/openapi";
import { createRouter } from "../../src/routing/index";
import { testConfig } from "./shop-harness";

// biome-ignore lint/suspicious/noExplicitAny: walking a JSON document in assertions.
type Loose = Record<string, any>;

const headerParameters = (operation: Loose) =>
  ((operation["parameters"] ?? []) as Loose[]).filter((p) => p.in === "header").map((p) => p.name);

describe("the shop's /openapi.json", async () => {
  const shop = await createShop(testConfig());
  afterAll(() => shop.close());
  const document = describeShop(shop.router);

  it("declares ETag and Last-Modified on an order list's 200 and 304, and its precondition headers", async () => {
    const list = (document.paths["/users/{user_id}/orders"] as Loose)["get"] as Loose;
    expect(Object.keys(list["responses"]["200"].headers)).toEqual(expect.arrayContaining(["ETag", "Last-Modified"]));
    expect(Object.keys(list["responses"]["304"].headers)).toEqual(["ETag", "Last-Modified", "Link", "Cache-Control"]);
    expect(headerParameters(list)).toEqual(expect.arrayContaining(["If-None-Match", "If-Modified-Since"]));
    expect(await new Validator().validate(JSON.parse(JSON.stringify(document)))).toMatchObject({ valid: true });
  });

  it("declares the validators and Cache-Control /openapi.json itself sends", async () => {
    const served = await shop.handler({
      method: "GET",
      path: "/openapi.json",
      search: "",
      query: {},
      headers: {},
      body: new Uint8Array(),
    });
    const own = (document.paths["/openapi.json"] as Loose)["get"] as Loose;
    const declared = Object.keys(own["responses"]["200"].headers).map((h) => h.toLowerCase());
    expect(declared).toEqual(expect.arrayContaining(Object.keys(served.headers).filter((h) => h !== "content-type")));
  });
});

describe("conditionalReadDescribed", () => {
  const now = 1_700_000_000_000;
  const router = createRouter().resource("/notes/{note_id}", (notes) => {
    notes.read({ use: [conditionalReadDescribed] }, ({ request }) =>
      conditionalRead(request, { version: 3, updatedAt: now - 1000 }, now, () => ({ id: "n1" })),
    );
  });
  const read = (router.openapi({ title: "t", version: "1" }).paths["/notes/{note_id}"] as Loose)["get"] as Loose;

  it("declares every header conditionalRead sends on its 200 and 304", async () => {
    const base = { method: "GET", path: "/notes/n1", search: "", query: {}, body: new Uint8Array() };
    const ok = await router.handler()({ ...base, headers: {} });
    const again = await router.handler()({ ...base, headers: { "if-none-match": ok.headers["etag"] as string } });
    expect(again.status).toBe(304);
    const declared = (status: number) =>
      Object.keys(read["responses"][String(status)].headers).map((h) => h.toLowerCase());
    expect(declared(200)).toEqual(expect.arrayContaining(Object.keys(ok.headers).filter((h) => h !== "content-type")));
    expect(declared(304)).toEqual(expect.arrayContaining(Object.keys(again.headers)));
  });

  it("lists the precondition headers it evaluates, and its 412", () => {
    expect(headerParameters(read)).toEqual(["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"]);
    expect(read["responses"]["412"].content["application/problem+json"]).toBeDefined();
  });
});
