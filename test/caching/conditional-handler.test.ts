import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { conditional, etagFromBody, formatHttpDate } from "../../src/caching/index";
import { adapt } from "../../src/fetch/index";
import { takeAfterSend, withAfterSend } from "../../src/http/after-send";
import { json } from "../../src/http/index";
import type { Handler, HttpRequest, HttpResponse, RequestHeaders } from "../../src/http/message";
import { createRouter, routeOf } from "../../src/routing/index";
import { documentResource } from "./document-resource";

const BODY = '{"id":1,"title":"Hello"}';
const MODIFIED = Date.parse("2024-05-01T12:00:00Z");
const TAG = etagFromBody(BODY);

function request(method: string, headers: RequestHeaders = {}, body = ""): HttpRequest {
  return { method, path: "/docs/1", search: "", query: {}, headers, body: new TextEncoder().encode(body) };
}

function setup(options: Parameters<typeof conditional>[0] = {}) {
  const resource = documentResource({ "/docs/1": { body: BODY, modified: MODIFIED } });
  const handler = conditional({ validators: resource.validators, ...options })(resource.handler);
  return {
    ...resource,
    handler,
    call: async (req: HttpRequest) => handler(req) as Promise<HttpResponse> | HttpResponse,
  };
}

function problemCode(response: HttpResponse): unknown {
  return JSON.parse(String(response.body)).code;
}

describe("conditional(): GET and HEAD", () => {
  it("adds a strong ETag computed from the body", async () => {
    const { call } = setup();
    const response = await call(request("GET"));
    expect(response.status).toBe(200);
    expect(response.headers.etag).toBe(TAG);
    expect(response.body).toBe(BODY);
  });

  it("answers If-None-Match with a bodyless 304 carrying the §15.4.5 fields", async () => {
    const { call } = setup();
    const response = await call(request("GET", { "if-none-match": TAG }));
    expect(response).toEqual({
      status: 304,
      headers: { "cache-control": "no-cache", vary: "accept", etag: TAG },
      body: null,
    });
  });

  it("answers HEAD like GET", async () => {
    const { call } = setup();
    expect((await call(request("HEAD", { "if-none-match": `"x", ${TAG}` }))).status).toBe(304);
  });

  it("answers If-Modified-Since from the handler's Last-Modified", async () => {
    const { call } = setup();
    expect((await call(request("GET", { "if-modified-since": formatHttpDate(MODIFIED) }))).status).toBe(304);
    expect((await call(request("GET", { "if-modified-since": formatHttpDate(MODIFIED - 1000) }))).status).toBe(200);
  });

  it("sends the full response for a stale tag", async () => {
    const { call } = setup();
    const response = await call(request("GET", { "if-none-match": '"stale"' }));
    expect(response.status).toBe(200);
    expect(response.body).toBe(BODY);
  });

  it("answers a failing If-Match on GET with a 412 problem", async () => {
    const { call } = setup();
    const response = await call(request("GET", { "if-match": '"stale"' }));
    expect(response.status).toBe(412);
    expect(response.headers["content-type"]).toBe("application/problem+json");
    expect(problemCode(response)).toBe("precondition_failed");
  });

  it("leaves non-2xx responses alone (§13.2.1)", async () => {
    const { handler } = setup();
    const response = await handler({ ...request("GET", { "if-none-match": "*" }), path: "/docs/404" });
    expect(response.status).toBe(404);
  });

  it("keeps an ETag the handler set and does not recompute it", async () => {
    const inner: Handler = () => ({ status: 200, headers: { ETag: 'W/"7"' }, body: "x" });
    const response = await conditional()(inner)(request("GET", { "if-none-match": '"7"' }));
    expect(response).toEqual({ status: 304, headers: { ETag: 'W/"7"' }, body: null });
  });

  it("does not hash a partial body (206) into a tag", async () => {
    const partial: Handler = () => ({ status: 206, headers: { "content-range": "bytes 0-0/2" }, body: "x" });
    expect((await conditional()(partial)(request("GET"))).headers.etag).toBeUndefined();
  });

  // Regression: a 206 went out whole although the client's copy was current. §13.2.2 evaluates If-None-Match (step 3)
  // and If-Modified-Since (step 4) before Range and If-Range (step 5): a false one answers a GET 304 first.
  describe("a Range GET answered 206 (§13.2.2: steps 3-4 before step 5)", () => {
    const ranged: Handler = () => ({
      status: 206,
      headers: {
        etag: '"v"',
        "last-modified": formatHttpDate(MODIFIED),
        "content-range": "bytes 0-0/2",
        "content-length": "1",
        "content-type": "text/plain",
        vary: "accept",
      },
      body: "x",
    });
    const ranges = (headers: RequestHeaders) => request("GET", { range: "bytes=0-0", ...headers });

    it("answers a matching If-None-Match with a 304 that carries no range fields", async () => {
      const response = await conditional()(ranged)(ranges({ "if-none-match": 'W/"v"' }));
      expect(response).toEqual({ status: 304, headers: { etag: '"v"', vary: "accept" }, body: null });
    });

    it("answers an If-Modified-Since not before Last-Modified with 304", async () => {
      const response = await conditional()(ranged)(ranges({ "if-modified-since": formatHttpDate(MODIFIED) }));
      expect(response.status).toBe(304);
    });

    it("sends the 206 for a stale tag or an earlier date", async () => {
      expect((await conditional()(ranged)(ranges({ "if-none-match": '"old"' }))).status).toBe(206);
      const earlier = formatHttpDate(MODIFIED - 1000);
      expect((await conditional()(ranged)(ranges({ "if-modified-since": earlier }))).status).toBe(206);
    });

    it("answers as it answers the 200 of the same GET, for any conditional fields", () => {
      const validators = { etag: '"v"', "last-modified": formatHttpDate(MODIFIED) };
      const whole: Handler = () => ({ status: 200, headers: { ...validators }, body: "xy" });
      const partial: Handler = () => ({
        status: 206,
        headers: { ...validators, "content-range": "bytes 0-0/2" },
        body: "x",
      });
      const tags = fc.constantFrom('"v"', 'W/"v"', '"w"', "*", '"w", W/"v"');
      const dates = fc.constantFrom(formatHttpDate(MODIFIED - 1000), formatHttpDate(MODIFIED), "not a date");
      const fields = fc.record(
        { "if-match": tags, "if-none-match": tags, "if-modified-since": dates, "if-unmodified-since": dates },
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(fields, (headers) => {
          const full = conditional()(whole)(request("GET", headers)) as HttpResponse;
          const part = conditional()(partial)(request("GET", { range: "bytes=0-0", ...headers })) as HttpResponse;
          expect(part.status === 206 ? 200 : part.status).toBe(full.status);
        }),
        { numRuns: 300 },
      );
    });
  });

  it("computes a weak tag, or none, on request", async () => {
    const inner: Handler = () => ({ status: 200, headers: {}, body: "x" });
    expect((await conditional({ etag: "weak" })(inner)(request("GET"))).headers.etag).toBe(
      etagFromBody("x", { weak: true }),
    );
    expect((await conditional({ etag: false })(inner)(request("GET"))).headers.etag).toBeUndefined();
  });

  it("bounds a future Last-Modified by the response Date, else by the clock (§8.8.2.1)", async () => {
    const future = "Fri, 01 Jan 2100 00:00:00 GMT";
    const withDate: Handler = () => ({
      status: 200,
      headers: { "Last-Modified": future, date: "Wed, 01 May 2024 12:00:00 GMT" },
      body: "x",
    });
    const dated = await conditional()(withDate)(request("GET"));
    expect(dated.headers["last-modified"]).toBe("Wed, 01 May 2024 12:00:00 GMT");
    expect(dated.headers["Last-Modified"]).toBeUndefined();
    const undated: Handler = () => ({ status: 200, headers: { "last-modified": future }, body: "x" });
    const clocked = await conditional({ now: () => Date.parse("2024-05-03T00:00:00.500Z") })(undated)(request("GET"));
    expect(clocked.headers["last-modified"]).toBe("Fri, 03 May 2024 00:00:00 GMT");
  });

  // Regression: OWS around the value made it no date, so a future Last-Modified (and a Date) went out unchecked.
  it("bounds a future Last-Modified with OWS around it by a Date with OWS around it (§5.5)", () => {
    const handler: Handler = () => ({
      status: 200,
      headers: { "last-modified": " Fri, 01 Jan 2100 00:00:00 GMT", date: "Wed, 01 May 2024 12:00:00 GMT\t" },
      body: "x",
    });
    const response = conditional({ now: () => Date.UTC(2030, 0, 1) })(handler)(request("GET")) as HttpResponse;
    expect(response.headers["last-modified"]).toBe("Wed, 01 May 2024 12:00:00 GMT");
  });

  it("reads a two-digit rfc850 year of Last-Modified with the now option, as the evaluation does (§5.6.7)", () => {
    // With now in 1990, "60" is 1960, not after the clock: the value is kept. Date.now() (2000s) reads 2060, in
    // the future, and replaced it with the clock's time.
    const handler: Handler = () => ({
      status: 200,
      headers: { "last-modified": "Friday, 01-Jan-60 00:00:00 GMT" },
      body: "x",
    });
    const response = conditional({ now: () => Date.UTC(1990, 0, 1) })(handler)(request("GET")) as HttpResponse;
    expect(response.headers["last-modified"]).toBe("Friday, 01-Jan-60 00:00:00 GMT");
  });

  it("reads a handler's Last-Modified that is no HTTP-date as no validator, and leaves it as written (§8.8.2)", () => {
    const handler: Handler = () => ({ status: 200, headers: { "last-modified": "2024-05-01T12:00:00Z" }, body: "x" });
    const since = { "if-modified-since": "Fri, 01 Jan 2100 00:00:00 GMT" };
    const response = conditional({ etag: false })(handler)(request("GET", since)) as HttpResponse;
    expect(response.status).toBe(200);
    expect(response.headers["last-modified"]).toBe("2024-05-01T12:00:00Z");
  });

  // Regression: validators giving an ISO 8601 text as lastModified read as none, so If-Unmodified-Since was ignored
  // and the guarded write reached the handler.
  it("refuses validators whose lastModified is no time, before the handler runs", async () => {
    let ran = false;
    const handler = conditional({ validators: () => ({ lastModified: "2024-05-01T12:00:05Z" }) })(() => {
      ran = true;
      return { status: 204, headers: {}, body: null };
    });
    const guarded = request("PUT", { "if-unmodified-since": "Wed, 01 May 2024 12:00:00 GMT" });
    await expect(async () => handler(guarded)).rejects.toThrow(
      /lastModified "2024-05-01T12:00:05Z" is not an HTTP-date/,
    );
    expect(ran).toBe(false);
  });

  describe("after-send callbacks: the answered response's callback runs", () => {
    const tagged =
      (ran: string[]): Handler =>
      () =>
        withAfterSend({ status: 200, headers: { etag: '"a"' }, body: "x" }, () => ran.push("handler"));

    it("keeps the handler's callback on the 304 that replaces its 200", () => {
      const ran: string[] = [];
      const response = conditional()(tagged(ran))(request("GET", { "if-none-match": '"a"' })) as HttpResponse;
      expect(response.status).toBe(304);
      takeAfterSend(response)?.();
      expect(ran).toEqual(["handler"]);
    });

    it("keeps the handler's callback on the 412 that replaces its 200", () => {
      const ran: string[] = [];
      const response = conditional()(tagged(ran))(request("GET", { "if-match": '"b"' })) as HttpResponse;
      expect(response.status).toBe(412);
      takeAfterSend(response)?.();
      expect(ran).toEqual(["handler"]);
    });

    it("keeps it, once, on a 200 that goes through", () => {
      const ran: string[] = [];
      const response = conditional()(tagged(ran))(request("GET")) as HttpResponse;
      takeAfterSend(response)?.();
      expect(ran).toEqual(["handler"]);
    });

    it("on HEAD answered from GET, keeps the HEAD run's callback and drops the GET probe's", () => {
      const ran: string[] = [];
      const handler: Handler = (req) =>
        withAfterSend({ status: 200, headers: {}, body: req.method === "HEAD" ? null : "x" }, () =>
          ran.push(req.method),
        );
      for (const headers of [{}, { "if-none-match": etagFromBody("x") }, { "if-match": '"b"' }]) {
        ran.length = 0;
        const response = conditional()(handler)(request("HEAD", headers)) as HttpResponse;
        takeAfterSend(response)?.();
        expect({ status: response.status, ran }).toEqual({
          status: "if-none-match" in headers ? 304 : "if-match" in headers ? 412 : 200,
          ran: ["HEAD"],
        });
      }
    });
  });

  it("does not mutate the handler's response", async () => {
    const shared: HttpResponse = { status: 200, headers: { "content-type": "text/plain" }, body: "x" };
    const response = await conditional()(() => shared)(request("GET", { "if-none-match": etagFromBody("x") }));
    expect(response.status).toBe(304);
    expect(shared).toEqual({ status: 200, headers: { "content-type": "text/plain" }, body: "x" });
  });

  it("stays synchronous for a synchronous handler", () => {
    const response = conditional()(() => ({ status: 200, headers: {}, body: "x" }))(request("GET"));
    expect(response).not.toBeInstanceOf(Promise);
  });
});

// A handler that answers HEAD without content, as the router's HEAD-from-GET does (§9.3.2).
function headless(handler: Handler): Handler {
  return async (req) => {
    const response = await handler(req);
    if (req.method !== "HEAD" || response.body == null) return response;
    const length = String(new TextEncoder().encode(String(response.body)).byteLength);
    return { ...response, headers: { ...response.headers, "content-length": length }, body: null };
  };
}

describe("conditional(): HEAD answered without content (RFC 9110 §9.3.2)", () => {
  function setupHeadless(options: Parameters<typeof conditional>[0] = {}) {
    const resource = documentResource({ "/docs/1": { body: BODY, modified: MODIFIED } });
    return { ...resource, handler: conditional(options)(headless(resource.handler)) };
  }

  it("gets the header fields of GET, its ETag included, and no content", async () => {
    const { handler, calls } = setupHeadless();
    const get = await handler(request("GET"));
    calls.length = 0;
    const head = await handler(request("HEAD"));
    expect(head).toEqual({
      status: 200,
      headers: { ...get.headers, "content-length": String(BODY.length) },
      body: null,
    });
    expect(head.headers.etag).toBe(TAG);
    // The handler ran as HEAD, then as GET to compute the validator.
    expect(calls).toEqual(["HEAD /docs/1", "GET /docs/1"]);
  });

  it("answers a matching If-None-Match with 304, and a stale one with 200", async () => {
    const { handler } = setupHeadless();
    const notModified = await handler(request("HEAD", { "if-none-match": TAG }));
    expect(notModified).toEqual({
      status: 304,
      headers: { "cache-control": "no-cache", vary: "accept", etag: TAG },
      body: null,
    });
    expect((await handler(request("HEAD", { "if-none-match": '"stale"' }))).status).toBe(200);
    expect((await handler(request("HEAD", { "if-match": '"stale"' }))).status).toBe(412);
  });

  it("stays synchronous for a synchronous handler", () => {
    const sync: Handler = (req) => ({ status: 200, headers: {}, body: req.method === "HEAD" ? null : "x" });
    const response = conditional()(sync)(request("HEAD", { "if-none-match": etagFromBody("x") }));
    expect(response).not.toBeInstanceOf(Promise);
    expect((response as HttpResponse).status).toBe(304);
  });

  it("runs the handler once when HEAD already carries an ETag, or when ETags are off", async () => {
    const tagged = documentResource({ "/docs/1": { body: BODY, modified: MODIFIED } });
    const withTag: Handler = async (req) => {
      const response = await headless(tagged.handler)(req);
      return { ...response, headers: { ...response.headers, etag: '"v1"' } };
    };
    expect((await conditional()(withTag)(request("HEAD", { "if-none-match": '"v1"' }))).status).toBe(304);
    expect(tagged.calls).toEqual(["HEAD /docs/1"]);
    const { handler, calls } = setupHeadless({ etag: false });
    expect((await handler(request("HEAD"))).headers.etag).toBeUndefined();
    expect(calls).toEqual(["HEAD /docs/1"]);
  });

  // Regression: "" and an empty Uint8Array were hashed as the HEAD's content, the SHA-1 of nothing.
  it.each([
    ["an empty string", ""],
    ["an empty Uint8Array", new Uint8Array(0)],
  ])("treats a zero-length HEAD body (%s) as no body: the GET's ETag and its 304", (_, empty) => {
    const handler: Handler = (req) => ({ status: 200, headers: {}, body: req.method === "HEAD" ? empty : "hello" });
    const tag = etagFromBody("hello");
    const head = conditional()(handler)(request("HEAD")) as HttpResponse;
    expect(head).toEqual({ status: 200, headers: { etag: tag, "content-length": "5" }, body: null });
    expect((conditional()(handler)(request("HEAD", { "if-none-match": tag })) as HttpResponse).status).toBe(304);
  });

  // Regression: the GET run was finished as HEAD, so its empty body was no content and got no tag, and HEAD no 304.
  it("gives HEAD the ETag and the 304 of a GET whose body is empty", () => {
    const handler: Handler = (req) => ({ status: 200, headers: {}, body: req.method === "HEAD" ? null : "" });
    const get = conditional()(handler)(request("GET")) as HttpResponse;
    const tag = etagFromBody("");
    expect(get.headers.etag).toBe(tag);
    const head = conditional()(handler)(request("HEAD")) as HttpResponse;
    expect(head).toEqual({ status: 200, headers: { etag: tag, "content-length": "0" }, body: null });
    expect((conditional()(handler)(request("HEAD", { "if-none-match": tag })) as HttpResponse).status).toBe(304);
  });

  it("gives a zero-length HEAD body no tag of its own when the GET does not answer 200", () => {
    const handler: Handler = (req) =>
      req.method === "HEAD" ? { status: 200, headers: {}, body: "" } : { status: 503, headers: {} };
    expect((conditional()(handler)(request("HEAD")) as HttpResponse).headers.etag).toBeUndefined();
  });

  it("keeps the HEAD response when the GET does not answer 200", async () => {
    let n = 0;
    const flaky: Handler = (req): HttpResponse =>
      req.method === "HEAD"
        ? { status: 200, headers: { "x-n": String(++n) }, body: null }
        : { status: 503, headers: {} };
    expect(await conditional()(flaky)(request("HEAD"))).toEqual({ status: 200, headers: { "x-n": "1" }, body: null });
  });

  it("gives a router's HEAD-from-GET the GET's ETag and its 304", async () => {
    const router = createRouter().route("GET", "/docs/{id}", {}, () => ({
      status: 200,
      headers: { "content-type": "application/json" },
      body: BODY,
    }));
    const handler = conditional()(router.handler());
    const get = await handler(request("GET"));
    const head = await handler(request("HEAD"));
    expect(head.headers.etag).toBe(TAG);
    expect(head.headers).toEqual({ ...get.headers, "content-length": String(BODY.length) });
    expect(head.body ?? null).toBeNull();
    expect((await handler(request("HEAD", { "if-none-match": TAG }))).status).toBe(304);
  });

  it("sends the same header fields for HEAD as for GET over the Fetch adapter", async () => {
    const fetchHandler = adapt(setupHeadless().handler, { onError: () => undefined });
    const get = await fetchHandler(new Request("http://localhost/docs/1"));
    const head = await fetchHandler(new Request("http://localhost/docs/1", { method: "HEAD" }));
    expect(Object.fromEntries(head.headers)).toEqual(Object.fromEntries(get.headers));
    expect(head.headers.get("etag")).toBe(TAG);
    expect(await head.text()).toBe("");
  });
});

describe("conditional(): unsafe methods", () => {
  it("refuses a stale If-Match with 412 before the handler runs", async () => {
    const { call, calls, documents } = setup();
    const response = await call(request("PUT", { "if-match": '"stale"' }, '{"id":1,"title":"Lost"}'));
    expect(response.status).toBe(412);
    expect(problemCode(response)).toBe("precondition_failed");
    expect(calls).toEqual([]);
    expect(documents.get("/docs/1")?.body).toBe(BODY);
  });

  it("runs the handler for the current If-Match", async () => {
    const { call, documents } = setup();
    const response = await call(request("PUT", { "if-match": TAG }, '{"id":1,"title":"New"}'));
    expect(response.status).toBe(204);
    expect(documents.get("/docs/1")?.body).toBe('{"id":1,"title":"New"}');
  });

  it("makes If-None-Match: * a create-only PUT", async () => {
    const { handler } = setup();
    const create = await handler({ ...request("PUT", { "if-none-match": "*" }, "{}"), path: "/docs/2" });
    expect(create.status).toBe(201);
    const again = await handler({ ...request("PUT", { "if-none-match": "*" }, "{}"), path: "/docs/2" });
    expect(again.status).toBe(412);
  });

  it("refuses If-Match: * when the resource does not exist", async () => {
    const { handler } = setup();
    const response = await handler({ ...request("PUT", { "if-match": "*" }, "{}"), path: "/docs/3" });
    expect(response.status).toBe(412);
  });

  it("answers 428 when a precondition is required and missing (RFC 6585)", async () => {
    const { call, calls } = setup({ requirePrecondition: true });
    const response = await call(request("DELETE"));
    expect(response.status).toBe(428);
    expect(problemCode(response)).toBe("precondition_required");
    expect(calls).toEqual([]);
    expect((await call(request("POST"))).status).toBe(405);
  });

  it("requires preconditions on the listed methods only", async () => {
    const { call } = setup({ requirePrecondition: ["POST"] });
    expect((await call(request("POST"))).status).toBe(428);
    expect((await call(request("DELETE"))).status).toBe(204);
  });

  it("requires preconditions even without validators", async () => {
    const { handler } = documentResource({});
    const wrapped = conditional({ requirePrecondition: true })(handler);
    expect((await wrapped(request("PUT", {}, "{}"))).status).toBe(428);
    expect((await wrapped(request("PUT", { "if-match": '"x"' }, "{}"))).status).toBe(201);
  });

  it("accepts asynchronous validators", async () => {
    const resource = documentResource({ "/docs/1": { body: BODY, modified: MODIFIED } });
    const wrapped = conditional({ validators: async (r) => resource.validators(r) })(resource.handler);
    expect((await wrapped(request("DELETE", { "if-match": '"stale"' }))).status).toBe(412);
    expect((await wrapped(request("DELETE", { "if-match": TAG }))).status).toBe(204);
  });

  // Regression: `If-None-Match: abc` (unquoted) on a PUT matched nothing, so the write went through unguarded.
  it("refuses a malformed If-None-Match or If-Match on a write with a 400 problem before the handler runs", async () => {
    for (const field of ["if-none-match", "if-match"]) {
      const { call, calls, documents } = setup();
      const response = await call(request("PUT", { [field]: "abc" }, '{"id":1,"title":"Lost"}'));
      expect(response.status).toBe(400);
      expect(response.headers["content-type"]).toBe("application/problem+json");
      expect(JSON.parse(String(response.body))).toMatchObject({ code: "malformed_precondition", field });
      expect(calls).toEqual([]);
      expect(documents.get("/docs/1")?.body).toBe(BODY);
    }
  });

  it("ignores a malformed If-None-Match on GET: the full 200 is sent (§13.1.2)", async () => {
    const { call } = setup();
    const response = await call(request("GET", { "if-none-match": "abc" }));
    expect(response.status).toBe(200);
    expect(response.body).toBe(BODY);
  });

  it("lets OPTIONS through unevaluated (§13.2.1)", async () => {
    const { call } = setup();
    expect((await call(request("OPTIONS", { "if-match": '"stale"' }))).status).toBe(405);
  });
});

describe("conditional(options): a middleware like idempotency() and rateLimit()", () => {
  it("mounts with resource.use, and its validators read the route's params", async () => {
    const versions = new Map([["a", 3]]);
    const router = createRouter().resource("/docs/{doc_id}", (doc) => {
      doc.use(
        conditional({
          validators: (r) => {
            const version = versions.get(routeOf(r)?.params.doc_id ?? "");
            return version === undefined ? undefined : { etag: `"${version}"` };
          },
        }),
      );
      doc.read({}, ({ params }) => json(200, { id: params.doc_id }, { etag: `"${versions.get(params.doc_id)}"` }));
      doc.replace({ body: z.object({}).passthrough() }, ({ params }) => json(200, { id: params.doc_id }));
    });
    const handler = router.handler();
    expect((await handler({ ...request("GET", { "if-none-match": '"3"' }), path: "/docs/a" })).status).toBe(304);
    const stale = await handler({
      ...request("PUT", { "if-match": '"2"', "content-type": "application/json" }),
      path: "/docs/a",
      body: new TextEncoder().encode("{}"),
    });
    expect(stale.status).toBe(412);
  });

  it("refuses the removed handler-first form and bad options, naming them", () => {
    const handler = () => ({ status: 200, headers: {} });
    expect(() => conditional(handler as never)).toThrow(
      /returns a middleware: write conditional\(\{ validators \}\)\(handler\)/,
    );
    expect(() => conditional({ validators: "etag" as never })).toThrow(/validators must be a function/);
    expect(() => conditional({ etag: "strongest" as never })).toThrow(/etag must be/);
    expect(() => conditional({ requirePrecondition: "PUT" as never })).toThrow(/requirePrecondition/);
  });

  // Regression: ["put"] never matched PUT (methods are case-sensitive) and ["GET"] never applied: no 428, no error.
  it("refuses a requirePrecondition entry that could never apply", () => {
    expect(() => conditional({ requirePrecondition: ["put"] })).toThrow(
      /"put": methods are case-sensitive, write "PUT"/,
    );
    expect(() => conditional({ requirePrecondition: ["PUT", "Delete"] })).toThrow(/write "DELETE"/);
    expect(() => conditional({ requirePrecondition: ["GET"] })).toThrow(/"GET", a safe method/);
    // Extension methods are the caller's to name (RFC 9110 §9.1).
    expect(() => conditional({ requirePrecondition: ["PROPPATCH", "lock"] })).not.toThrow();
  });
});

describe("conditional() through the Fetch adapter", () => {
  const { handler } = setup();
  const fetchHandler = adapt(handler, { onError: () => undefined });

  it("GET with If-None-Match gives a 304 with no body", async () => {
    const first = await fetchHandler(new Request("http://localhost/docs/1"));
    const etag = first.headers.get("etag") ?? "";
    expect(await first.text()).toBe(BODY);
    const second = await fetchHandler(new Request("http://localhost/docs/1", { headers: { "if-none-match": etag } }));
    expect(second.status).toBe(304);
    expect(second.body).toBeNull();
    expect(second.headers.get("etag")).toBe(etag);
  });

  it("PUT with a stale If-Match gives a 412 problem", async () => {
    const response = await fetchHandler(
      new Request("http://localhost/docs/1", { method: "PUT", headers: { "if-match": '"stale"' }, body: "{}" }),
    );
    expect(response.status).toBe(412);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect((await response.json()).code).toBe("precondition_failed");
  });
});
