import { describe, expect, it, vi } from "vitest";
import { adapt, readRequest, sendResponse } from "../../src/fetch";
import { bodyConsumed } from "../../src/http/adapter-options";
import { json } from "../../src/http/message";
import { HTTP_PROBLEM_CODES } from "../../src/http/problem";

describe("fetch readRequest", () => {
  it.each([
    ["http://h.test", "/", ""],
    ["http://h.test?x=1", "/", "x=1"],
    ["http://h.test/a/b?x=/y", "/a/b", "x=/y"],
    ["http://h.test/a#frag?not-query", "/a", ""],
    ["http://h.test/a?x=1#frag", "/a", "x=1"],
    ["http://h.test:8080/p%20q", "/p%20q", ""],
  ])("takes the origin-form target of %s", async (url, path, search) => {
    const read = await readRequest(new Request(url));
    expect(read.ok && { path: read.request.path, search: read.request.search }).toStrictEqual({ path, search });
  });

  describe("regression: a body read before the adapter is a 500 body_consumed naming the cause, not a thrown TypeError nor a bare internal_error", () => {
    const posted = () =>
      new Request("http://h.test/hook", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"a":1}',
      });

    it.each([
      ["read (bodyUsed)", async (request: Request) => void (await request.text())],
      ["locked by a reader", async (request: Request) => void request.body?.getReader()],
    ])("a body %s", async (_, consume) => {
      const request = posted();
      await consume(request);
      const read = await readRequest(request);
      expect(read.ok).toBe(false);
      if (read.ok) return;
      expect(read.problem.status).toBe(500);
      // Its own stable code: operators tell it from a handler's crash (internal_error) by the code alone.
      expect(read.problem.code).toBe("body_consumed");
      expect(HTTP_PROBLEM_CODES).toContain(read.problem.code);
      expect(read.problem.cause).toBeInstanceOf(TypeError);
    });

    it("the adapter answers it 500 body_consumed and reports the cause to onError", async () => {
      const onError = vi.fn();
      const handler = vi.fn(() => json(200, {}));
      const request = posted();
      await request.json();
      const response = await adapt(handler, { onError })(request);
      expect(response.status).toBe(500);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      // The document the node, Express and Fastify adapters send for the same mistake (one factory).
      expect(await response.json()).toStrictEqual(bodyConsumed(new TypeError()).toJSON());
      expect(handler).not.toHaveBeenCalled();
      expect(onError).toHaveBeenCalledWith(expect.any(TypeError), undefined);
    });
  });

  describe("regression: a client gone before its body ended left the read, and the request, waiting forever", () => {
    // A source that never ends nor errors: only the abort can end the read.
    const endless = (controller: AbortController, sent: Uint8Array[] = []) =>
      new Request("http://h.test/hook", {
        method: "POST",
        body: new ReadableStream<Uint8Array>({
          pull: (stream) => {
            const chunk = sent.shift();
            if (chunk !== undefined) stream.enqueue(chunk);
            return new Promise<void>(() => {});
          },
        }),
        duplex: "half",
        signal: controller.signal,
      } as RequestInit);

    it("answers 400 body_read_failed once request.signal aborts, and never calls the handler", async () => {
      const controller = new AbortController();
      const handler = vi.fn(() => json(200, {}));
      const pending = adapt(handler)(endless(controller, [new Uint8Array([1, 2, 3])]));
      await new Promise((resolve) => setTimeout(resolve, 0));
      controller.abort();
      const response = await pending;
      expect(response.status).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe("body_read_failed");
      expect(handler).not.toHaveBeenCalled();
    });

    it("refuses at once a body whose client had already gone", async () => {
      const controller = new AbortController();
      controller.abort();
      const read = await readRequest(endless(controller));
      expect(!read.ok && read.problem.code).toBe("body_read_failed");
    });

    it("still serves a body that ended before the client went away", async () => {
      const controller = new AbortController();
      const request = new Request("http://h.test/hook", { method: "POST", body: "abc", signal: controller.signal });
      const read = await readRequest(request);
      controller.abort();
      expect(read.ok && new TextDecoder().decode(read.request.body)).toBe("abc");
    });
  });

  it('regression: joins repeated Set-Cookie request fields with ", " as node does, where it kept only the last', async () => {
    // A Headers iterator yields each Set-Cookie value apart (Fetch "sort and combine"), every other name joined.
    const request = new Request("http://h.test/", {
      headers: [
        ["set-cookie", "a=1"],
        ["Set-Cookie", "b=2"],
        ["x-tag", "1"],
        ["x-tag", "2"],
      ],
    });
    const read = await readRequest(request);
    expect(read.ok && read.request.headers).toStrictEqual({ "set-cookie": "a=1, b=2", "x-tag": "1, 2" });
  });

  it("passes the Request's signal through", async () => {
    const controller = new AbortController();
    const read = await readRequest(new Request("http://h.test/", { signal: controller.signal }));
    controller.abort();
    expect(read.ok && read.request.signal?.aborted).toBe(true);
  });
});

describe("fetch sendResponse", () => {
  it("drops the body of a HEAD response but keeps its Content-Length (RFC 9110 §9.3.2)", async () => {
    const response = sendResponse(json(200, { a: 1 }), "HEAD");
    expect(response.headers.get("content-length")).toBe("7");
    expect(response.body).toBeNull();
  });

  it("keeps a Content-Length the handler set", () => {
    const response = sendResponse({ status: 200, headers: { "content-length": "3" }, body: "abc" });
    expect(response.headers.get("content-length")).toBe("3");
  });

  it("sends an array value as repeated fields", () => {
    const response = sendResponse({ status: 200, headers: { "set-cookie": ["a=1", "b=2"] }, body: null });
    expect(response.headers.getSetCookie()).toStrictEqual(["a=1", "b=2"]);
  });

  // Regression: node:http sends every key of the header object as field lines of its own; the Fetch adapter set each
  // key in turn, so a second spelling of a name (`{ ...session, "set-cookie": csrf }`) replaced the first one's value.
  it("keeps the values of a name given twice in different cases, as node:http sends both (RFC 9110 §5.3)", () => {
    const headers = { "Set-Cookie": "a=1", "set-cookie": "b=2", Vary: "Origin", vary: "Accept" };
    const response = sendResponse({ status: 200, headers, body: "ok" });
    expect(response.headers.getSetCookie()).toStrictEqual(["a=1", "b=2"]);
    expect(response.headers.get("vary")).toBe("Origin, Accept");
  });

  // Regression: node:http sends a number as its digits, the Fetch adapter threw (a number is not iterable): a 500.
  it("sends a numeric header value from plain JavaScript as its digits, as node:http does", () => {
    const headers = { "x-count": 5, "x-list": [1, "b"] } as never;
    const response = sendResponse({ status: 200, headers, body: "ok" });
    expect(response.headers.get("x-count")).toBe("5");
    expect(response.headers.get("x-list")).toBe("1, b");
    expect(() => sendResponse({ status: 200, headers: { "x-none": undefined } as never, body: "ok" })).toThrow(
      /x-none/,
    );
  });

  it("never encodes the string body of a response that carries no content (RFC 9110 §6.4.1)", () => {
    const encode = vi.spyOn(TextEncoder.prototype, "encode");
    try {
      for (const status of [204, 205, 304]) {
        const response = sendResponse({ status, headers: { etag: '"v1"' }, body: "x".repeat(1024) });
        expect(response.body).toBeNull();
      }
      expect(encode).not.toHaveBeenCalled();
    } finally {
      encode.mockRestore();
    }
  });

  it("still refuses a Content-Length the handler set beside no body", () => {
    expect(() => sendResponse({ status: 200, headers: { "content-length": "5" }, body: null })).toThrow(RangeError);
    expect(sendResponse({ status: 200, headers: { "content-length": "5" }, body: null }, "HEAD").status).toBe(200);
  });
});

describe("absolute-form targets the node adapter refuses for their authority (RFC 9112 §3.2.2, RFC 3986 §3.2)", () => {
  // The node adapter answers these 400 bad_request_target (test/node/request.test.ts); a Fetch runtime's URL parser
  // refuses them before any Request exists, so neither adapter routes them by their path.
  it.each(["http://[::1/orders", "https://x:99999/orders", "http://%zz/orders", "http://[1:2:3:4:5:6:7:8:9]/orders"])(
    "no Fetch Request can carry %s",
    (url) => {
      expect(() => new Request(url)).toThrow(TypeError);
    },
  );
});

describe("a target with a userinfo (RFC 9110 §4.2.4: a recipient SHOULD treat one as an error)", () => {
  it("no Fetch Request can carry one (Fetch: the Request constructor refuses credentials)", () => {
    expect(() => new Request("http://user:pass@h.test/orders")).toThrow(TypeError);
  });

  // A runtime that builds its Request another way (from an absolute-form target as received) could hand one over.
  it("readRequest refuses one it is handed anyway: 400 bad_request_target, as the node adapter does", async () => {
    const request = new Request("http://h.test/orders");
    Object.defineProperty(request, "url", { value: "http://user:pass@h.test/orders" });
    const read = await readRequest(request);
    expect(read.ok || { status: read.problem.status, code: read.problem.code }).toStrictEqual({
      status: 400,
      code: "bad_request_target",
    });
  });
});

describe("a Content-Length repeated or malformed (RFC 9110 §8.6; RFC 9112 §6.3 (5))", () => {
  const posted = (values: string[]) =>
    new Request("http://h.test/hook", {
      method: "POST",
      body: "hello",
      headers: values.map((value): [string, string] => ["content-length", value]),
    });

  // Fetch joins repeated fields into one list; node's parser refuses each of these requests with a 400.
  it.each([
    ["regression: two differing values were ignored and the body served", ["5", "6"]],
    ["one list of differing values", ["5, 6"]],
    ["a value that is not digits", ["five"]],
    ["an empty list member", ["5,"]],
  ])("%s: 400 malformed_request, the body unread", async (_, values) => {
    const request = posted(values);
    const read = await readRequest(request);
    expect(read.ok || { status: read.problem.status, code: read.problem.code }).toStrictEqual({
      status: 400,
      code: "malformed_request",
    });
    expect(HTTP_PROBLEM_CODES).toContain("malformed_request");
  });

  it("the adapter answers it without calling the handler", async () => {
    const handler = vi.fn(() => json(200, {}));
    const response = await adapt(handler)(posted(["5", "6"]));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "malformed_request" });
    expect(handler).not.toHaveBeenCalled();
  });

  it.each([
    ["the same value twice", ["5", "5"]],
    ["one list of the same value", ["5, 5"]],
  ])("%s counts as that one value (RFC 9110 §8.6 allows it)", async (_, values) => {
    const read = await readRequest(posted(values));
    expect(read.ok && new TextDecoder().decode(read.request.body)).toBe("hello");
    const over = await readRequest(posted(values), { bodyLimit: 4 });
    expect(over.ok || over.problem.code).toBe("body_too_large");
  });
});
