import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { badRequestTarget, bodyTooLarge } from "../../src/http/adapter-options";
import { safeFormBody, safeJsonBody } from "../../src/http/body";
import {
  HTTP_PROBLEM_CODES,
  HttpProblem,
  internalErrorResponse,
  isHttpProblem,
  PROBLEM_CONTENT_TYPE,
  problem,
  reasonPhrase,
} from "../../src/http/problem";
import { validationProblem } from "../../src/http/validation";

const body = (response: { body?: unknown }) => JSON.parse(String(response.body)) as Record<string, unknown>;

describe("problem details (RFC 9457)", () => {
  it("serialises the standard members (§3.1) and the code", () => {
    const p = new HttpProblem({
      status: 404,
      code: "user_not_found",
      detail: "No user u_1.",
      type: "https://example.com/problems/not-found",
      instance: "/users/u_1",
    });
    expect(p.toJSON()).toStrictEqual({
      type: "https://example.com/problems/not-found",
      title: "Not Found",
      status: 404,
      detail: "No user u_1.",
      instance: "/users/u_1",
      code: "user_not_found",
    });
  });

  it("defaults type to about:blank and title to the reason phrase (§4.2.1)", () => {
    expect(new HttpProblem({ status: 429, code: "slow_down" }).toJSON()).toStrictEqual({
      type: "about:blank",
      title: "Too Many Requests",
      status: 429,
      code: "slow_down",
    });
  });

  it("puts extension members beside the standard ones (§3.2)", () => {
    const p = new HttpProblem({ status: 403, code: "no_credit", extensions: { balance: 30, accounts: ["/a/1"] } });
    expect(p.toJSON()).toMatchObject({ balance: 30, accounts: ["/a/1"], status: 403 });
  });

  it("never lets an extension member override or fill in a standard one", () => {
    const p = new HttpProblem({
      status: 400,
      code: "real",
      extensions: { status: 200, type: "x", title: "x", code: "fake", detail: "injected", instance: "/x", ok: 1 },
    });
    expect(p.toJSON()).toStrictEqual({ type: "about:blank", title: "Bad Request", status: 400, code: "real", ok: 1 });
  });

  it("keeps an extension named __proto__ as plain data", () => {
    const extensions = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const doc = new HttpProblem({ status: 400, code: "x", extensions }).toJSON();
    expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(JSON.parse(JSON.stringify(doc)), "__proto__")?.value).toStrictEqual({
      polluted: true,
    });
  });

  it("renders as application/problem+json with its headers, and content-type cannot be overridden (§3)", () => {
    const response = new HttpProblem({
      status: 405,
      code: "method_not_allowed",
      headers: { allow: "GET", "content-type": "text/html" },
    }).toResponse();
    expect(response.status).toBe(405);
    expect(response.headers).toStrictEqual({ allow: "GET", "content-type": PROBLEM_CONTENT_TYPE });
    expect(body(response)).toMatchObject({ status: 405, code: "method_not_allowed" });
  });

  it("sends one Content-Type when its headers name it in another case", () => {
    const response = new HttpProblem({
      status: 415,
      code: "unsupported_media_type",
      headers: { "Content-Type": "text/html", Accept: "application/json" },
    }).toResponse();
    expect(response.headers).toStrictEqual({ Accept: "application/json", "content-type": PROBLEM_CONTENT_TYPE });
  });

  it.each([200, 399, 600, 404.5, Number.NaN])("refuses status %s with a TypeError", (status) => {
    expect(() => new HttpProblem({ status, code: "x" })).toThrow(TypeError);
  });

  it("keeps the cause for logs and never serialises it", () => {
    const cause = new Error("secret");
    const p = new HttpProblem({ status: 502, code: "upstream", cause });
    expect(p.cause).toBe(cause);
    expect(JSON.stringify(p.toJSON())).not.toContain("secret");
  });

  it("is recognised across copies of the package by name and shape", () => {
    const foreign = Object.assign(new Error("x"), {
      name: "HttpProblem",
      toResponse: () => problem({ status: 400, code: "x" }),
    });
    expect(isHttpProblem(foreign)).toBe(true);
    expect(isHttpProblem(new HttpProblem({ status: 400, code: "x" }))).toBe(true);
    expect(isHttpProblem(new Error("x"))).toBe(false);
    expect(isHttpProblem({ name: "HttpProblem" })).toBe(false);
  });

  it("has a generic 500 with no implementation details (§5)", () => {
    const response = internalErrorResponse();
    expect(response.status).toBe(500);
    expect(Object.keys(body(response)).sort()).toStrictEqual(["code", "detail", "status", "title", "type"]);
  });

  // Every code of RFC 9110 §15 (the registry of §18.3) and RFC 6585, with its phrase as the RFC spells it.
  const RFC_REASON_PHRASES: readonly (readonly [number, string])[] = [
    [100, "Continue"],
    [101, "Switching Protocols"],
    [200, "OK"],
    [201, "Created"],
    [202, "Accepted"],
    [203, "Non-Authoritative Information"],
    [204, "No Content"],
    [205, "Reset Content"],
    [206, "Partial Content"],
    [300, "Multiple Choices"],
    [301, "Moved Permanently"],
    [302, "Found"],
    [303, "See Other"],
    [304, "Not Modified"],
    [305, "Use Proxy"],
    [307, "Temporary Redirect"],
    [308, "Permanent Redirect"],
    [400, "Bad Request"],
    [401, "Unauthorized"],
    [402, "Payment Required"],
    [403, "Forbidden"],
    [404, "Not Found"],
    [405, "Method Not Allowed"],
    [406, "Not Acceptable"],
    [407, "Proxy Authentication Required"],
    [408, "Request Timeout"],
    [409, "Conflict"],
    [410, "Gone"],
    [411, "Length Required"],
    [412, "Precondition Failed"],
    [413, "Content Too Large"],
    [414, "URI Too Long"],
    [415, "Unsupported Media Type"],
    [416, "Range Not Satisfiable"],
    [417, "Expectation Failed"],
    [421, "Misdirected Request"],
    [422, "Unprocessable Content"],
    [426, "Upgrade Required"],
    [500, "Internal Server Error"],
    [501, "Not Implemented"],
    [502, "Bad Gateway"],
    [503, "Service Unavailable"],
    [504, "Gateway Timeout"],
    [505, "HTTP Version Not Supported"],
    // RFC 6585 §3–6
    [428, "Precondition Required"],
    [429, "Too Many Requests"],
    [431, "Request Header Fields Too Large"],
    [511, "Network Authentication Required"],
  ];

  // Regression: 402, 407, 411, 414, 416, 421 and 426 were missing, so their problems were titled "Client Error".
  it.each(RFC_REASON_PHRASES)(
    "names status %i %j, and titles an about:blank problem so (RFC 9457 §4.2.1)",
    (status, phrase) => {
      expect(reasonPhrase(status)).toBe(phrase);
      if (status >= 400) expect(new HttpProblem({ status, code: "x" }).title).toBe(phrase);
    },
  );

  it.each([
    [306, "Status"],
    [418, "Client Error"],
    [599, "Server Error"],
  ])("gives the unused or unregistered status %i the generic phrase %j (§15.4.7, §15.5.19)", (status, phrase) => {
    expect(reasonPhrase(status)).toBe(phrase);
  });

  it.each([
    [413, "Content Too Large"],
    [422, "Unprocessable Content"],
    [417, "Expectation Failed"],
    [505, "HTTP Version Not Supported"],
    [418, "Client Error"],
    [599, "Server Error"],
  ])("names status %i %j (RFC 9110 §15)", (status, phrase) => {
    expect(reasonPhrase(status)).toBe(phrase);
  });
});

describe("HTTP_PROBLEM_CODES: the codes of rest-webhooks/http and the adapters (STYLE §7)", () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  const produced = [
    bodyTooLarge(1).code,
    badRequestTarget("x").code,
    body(internalErrorResponse()).code,
    validationProblem(z.object({ a: z.string() }).safeParse({}).error as z.ZodError).code,
    ...[
      safeJsonBody({ headers: {}, body: new Uint8Array(0) }),
      safeJsonBody({ headers: { "content-type": "text/plain" }, body: bytes("{}") }),
      safeJsonBody({ headers: { "content-type": "application/json" }, body: bytes("{oops") }),
      safeFormBody({ headers: { "content-type": "application/x-www-form-urlencoded" }, body: new Uint8Array([0xff]) }),
    ].map((result) => (result.ok ? "read" : result.problem.code)),
  ];

  it("lists every code the body readers, validation and adapter helpers produce", () => {
    expect(produced).toStrictEqual([
      "body_too_large",
      "bad_request_target",
      "internal_error",
      "validation_failed",
      "body_required",
      "unsupported_media_type",
      "malformed_json",
      "malformed_form",
    ]);
    for (const code of produced) expect(HTTP_PROBLEM_CODES).toContain(code);
  });

  it("has no duplicates", () => {
    expect(new Set(HTTP_PROBLEM_CODES).size).toBe(HTTP_PROBLEM_CODES.length);
  });

  it("regression: each has a row in docs/http.md's table of codes (malformed_request, headers_too_large and request_timeout had none)", () => {
    const docs = readFileSync(fileURLToPath(new URL("../../docs/http.md", import.meta.url)), "utf8");
    const rows = new Set([...docs.matchAll(/^\| `([a-z_]+)` \| \d{3}/gm)].map((match) => match[1]));
    expect(HTTP_PROBLEM_CODES.filter((code) => !rows.has(code))).toStrictEqual([]);
  });
});
