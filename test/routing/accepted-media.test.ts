import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { adapt } from "../../src/fetch/index";
import { json } from "../../src/http/message";
import { createRouter } from "../../src/routing/index";

// RFC 5789 §3.1 (Accept-Patch) and W3C LDP §7.1 (Accept-Post): the media types an operation takes, named alike by its
// OPTIONS answer and by its 415, whichever check refused the body.
describe("regression: a 415 for a charset other than UTF-8 named application/json, which a PATCH refuses", () => {
  const router = createRouter()
    .resource("/docs/{doc_id}", (docs) => {
      docs.create({ body: z.object({ a: z.string() }), form: true }, ({ body, created }) => created("d1", body));
      docs.update({}, ({ patch }) => json(200, { patch }));
    })
    .route("POST", "/pings", { body: z.object({ a: z.string() }) }, ({ body }) => json(200, body));
  const serve = adapt(router.handler());
  const send = (method: string, path: string, type?: string, body = "{}") =>
    serve(
      new Request(`http://x${path}`, {
        method,
        headers: type === undefined ? {} : { "content-type": type },
        body: method === "OPTIONS" ? undefined : body,
      }),
    );
  const field = (method: string) => (method === "PATCH" ? "accept-patch" : "accept-post");

  it("names application/merge-patch+json in the PATCH's 415 for a merge patch in another charset", async () => {
    const refused = await send("PATCH", "/docs/d1", "application/merge-patch+json; charset=iso-8859-1");
    expect(refused.status).toBe(415);
    expect(refused.headers.get("accept-patch")).toBe("application/merge-patch+json");
    expect(((await refused.json()) as { code: string }).code).toBe("unsupported_media_type");
  });

  it("names the form type too in a form-taking POST's 415 for JSON in another charset", async () => {
    const refused = await send("POST", "/docs", "application/json; charset=iso-8859-1");
    expect(refused.status).toBe(415);
    expect(refused.headers.get("accept-post")).toBe("application/json, application/x-www-form-urlencoded");
  });

  it("gives every 415 of an operation the Accept-* value of its OPTIONS answer (property)", async () => {
    const targets = [
      ["PATCH", "/docs/d1", "/docs/d1"],
      ["POST", "/docs", "/docs"],
      ["POST", "/pings", "/pings"],
    ] as const;
    const essence = fc.constantFrom(
      "application/json",
      "application/merge-patch+json",
      "application/vnd.x+json",
      "application/x-www-form-urlencoded",
      "text/plain",
      "APPLICATION/JSON",
    );
    const parameter = fc.constantFrom(
      "",
      "; charset=utf-8",
      "; charset=UTF-8",
      "; charset=latin1",
      '; charset="utf-16"',
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), essence, parameter, async ([method, path, options], type, rest) => {
        const refused = await send(method, path, `${type}${rest}`, method === "PATCH" ? "{}" : '{"a":"x"}');
        if (refused.status !== 415) return;
        const advertised = (await send("OPTIONS", options)).headers.get(field(method));
        expect(refused.headers.get(field(method))).toBe(advertised);
      }),
      { numRuns: 60 },
    );
  });
});

// A custom operation that takes other media types than its kind's names them alike in its OPTIONS answer, every 415
// and OpenAPI, and refuses the rest. Regression: the endpoint API's PATCH took merge patches, but its OPTIONS answer
// (and, once 415s followed it, a merge patch in another charset) named only JSON and forms, and OpenAPI no merge patch.
describe("requestMediaTypes", () => {
  const TYPES = ["application/merge-patch+json", "application/json", "application/x-www-form-urlencoded"];
  const router = createRouter().route(
    "PATCH",
    "/things/{thing_id}",
    { body: z.object({ a: z.string().optional() }), form: true, requestMediaTypes: TYPES },
    ({ body }) => json(200, { body }),
  );
  const serve = adapt(router.handler());
  const send = (method: string, type?: string, body = '{"a":"x"}') =>
    serve(
      new Request("http://x/things/t1", {
        method,
        headers: type === undefined ? {} : { "content-type": type },
        body: method === "OPTIONS" ? undefined : body,
      }),
    );

  it("names them in the OPTIONS answer and in every 415, whatever refused the body", async () => {
    expect((await send("OPTIONS")).headers.get("accept-patch")).toBe(TYPES.join(", "));
    for (const type of ["text/plain", "application/merge-patch+json; charset=latin1", "application/vnd.x+json"]) {
      const refused = await send("PATCH", type);
      expect(refused.status, type).toBe(415);
      expect(refused.headers.get("accept-patch"), type).toBe(TYPES.join(", "));
    }
  });

  it("takes each of them", async () => {
    expect((await send("PATCH", "application/merge-patch+json")).status).toBe(200);
    expect((await send("PATCH", "Application/JSON; charset=utf-8")).status).toBe(200);
    expect((await send("PATCH", "application/x-www-form-urlencoded", "a=x")).status).toBe(200);
  });

  it("lists them, each with the body schema, as the OpenAPI request body's content", () => {
    const doc = router.openapi({ title: "t", version: "1" }) as unknown as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, unknown> } }>>;
    };
    const content = doc.paths["/things/{thing_id}"]?.["patch"]?.requestBody.content ?? {};
    expect(Object.keys(content)).toEqual(TYPES);
  });

  it.each<[string, Record<string, unknown>]>([
    ["an update (its merge patch is fixed)", { requestMediaTypes: ["application/json"] }],
    ["an empty list", { body: z.object({}), requestMediaTypes: [] }],
    ["a type the reader does not parse", { body: z.object({}), requestMediaTypes: ["text/plain"] }],
    ["a type with parameters", { body: z.object({}), requestMediaTypes: ["application/json; charset=utf-8"] }],
    ["a form without form: true", { body: z.object({}), requestMediaTypes: ["application/x-www-form-urlencoded"] }],
  ])("refuses, when declared, %s", (_name, spec) => {
    const declare = () =>
      "body" in spec
        ? createRouter().route("POST", "/x", spec as never, () => json(200, {}))
        : createRouter().resource("/xs/{x_id}", (xs) => xs.update(spec as never, () => json(200, {})));
    expect(declare).toThrow(/requestMediaTypes/);
  });
});
