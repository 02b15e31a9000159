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
