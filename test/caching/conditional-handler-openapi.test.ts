import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type ConditionalOptions, conditional } from "../../src/caching/index";
import { json } from "../../src/http/message";
import { createRouter } from "../../src/routing/index";

// biome-ignore lint/suspicious/noExplicitAny: walking a JSON document in assertions.
type Loose = Record<string, any>;

function documented(options: ConditionalOptions) {
  const router = createRouter().resource("/notes/{note_id}", (notes) => {
    notes.use(conditional(options));
    notes.read({ response: z.object({ t: z.string() }) }, () => json(200, { t: "x" }));
    notes.replace({}, () => json(200, {}));
  });
  const doc = router.openapi({ title: "t", version: "1" });
  const item = doc.paths["/notes/{note_id}"] as Record<string, Loose>;
  const headerParameters = (method: string) =>
    ((item[method]?.["parameters"] ?? []) as Loose[]).filter((p) => p.in === "header").map((p) => p.name);
  return { router, doc, item, headerParameters };
}

describe("what conditional() declares for OpenAPI", () => {
  it("documents ETag and Last-Modified on the 200 and the 304 it sends (RFC 9110 §15.4.5)", async () => {
    const { router, doc, item } = documented({});
    const handler = router.handler();
    const base = { method: "GET", path: "/notes/1", search: "", query: {}, body: new Uint8Array() };
    const ok = await handler({ ...base, headers: {} });
    const again = await handler({ ...base, headers: { "if-none-match": ok.headers["etag"] as string } });
    expect(again.status).toBe(304);
    expect(again.headers["etag"]).toBe(ok.headers["etag"]);
    const responses = item["get"]?.["responses"] as Loose;
    expect(Object.keys(responses["200"].headers)).toEqual(["ETag", "Last-Modified"]);
    expect(Object.keys(responses["304"].headers)).toEqual(["ETag", "Last-Modified"]);
    expect(responses["304"].content).toBeUndefined();
    expect(await new Validator().validate(JSON.parse(JSON.stringify(doc)))).toMatchObject({ valid: true });
  });

  it("lists the precondition headers of reads, and no validators on a write's 2xx", () => {
    const { item, headerParameters } = documented({});
    expect(headerParameters("get")).toEqual(["If-None-Match", "If-Match", "If-Modified-Since", "If-Unmodified-Since"]);
    expect(Object.keys(item["put"]?.["responses"]["200"].headers ?? {})).toEqual([]);
  });

  it("leaves a write's preconditions out when it does not evaluate them (no validators)", () => {
    const { item, headerParameters } = documented({});
    expect(headerParameters("put")).toEqual([]);
    expect(Object.keys(item["put"]?.["responses"])).not.toContain("412");
  });

  it("lists If-Match, If-None-Match and If-Unmodified-Since, and 412, on writes it evaluates", () => {
    const { item, headerParameters } = documented({ validators: () => ({ etag: '"1"' }) });
    expect(headerParameters("put")).toEqual(["If-None-Match", "If-Match", "If-Unmodified-Since"]);
    expect(Object.keys(item["put"]?.["responses"])).toContain("412");
    // The router may already list a 400 (a malformed body): the malformed precondition must be named in it.
    expect(JSON.stringify(item["put"]?.["responses"]["400"])).toContain("If-None-Match");
  });

  it("lists them with the 428 on writes that must carry one", () => {
    const { item, headerParameters } = documented({ requirePrecondition: true });
    expect(headerParameters("put")).toEqual(["If-None-Match", "If-Match", "If-Unmodified-Since"]);
    expect(Object.keys(item["put"]?.["responses"])).toContain("428");
  });
});
