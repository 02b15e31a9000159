import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  jsonBody,
  parseForm,
  parseJsonText,
  parseQuery,
  safeFormBody,
  safeJsonBody,
  safeJsonOrFormBody,
} from "../../src/http/body";
import { HttpProblem } from "../../src/http/problem";

const encoder = new TextEncoder();
const req = (contentType: string | undefined, body: string | Uint8Array) => ({
  headers: contentType === undefined ? {} : { "content-type": contentType },
  body: typeof body === "string" ? encoder.encode(body) : body,
});
const failure = (result: { ok: boolean; problem?: HttpProblem }) => ({
  status: result.problem?.status,
  code: result.problem?.code,
});

describe("JSON bodies (RFC 8259)", () => {
  it.each([
    ["application/json", '{"a":1}', { a: 1 }],
    ["application/json; charset=utf-8", "[1,2]", [1, 2]],
    ["application/json; charset=UTF8", "true", true],
    ["application/merge-patch+json", '{"a":null}', { a: null }],
    ["Application/JSON", '"x"', "x"],
    ["application/json", "\ufeff{}", {}], // RFC 8259 §8.1: a BOM may be ignored
  ])("reads %s", (type, text, value) => {
    expect(safeJsonBody(req(type, text))).toStrictEqual({ ok: true, value });
  });

  it.each<[string, string | undefined, string | Uint8Array, number, string]>([
    ["an empty body", "application/json", "", 400, "body_required"],
    ["malformed JSON", "application/json", '{"a":', 400, "malformed_json"],
    ["bytes that are not UTF-8", "application/json", new Uint8Array([0x22, 0xff, 0x22]), 400, "malformed_json"],
    ["a text Content-Type", "text/plain", "{}", 415, "unsupported_media_type"],
    ["no Content-Type", undefined, "{}", 415, "unsupported_media_type"],
    ["an unparseable Content-Type", "json", "{}", 415, "unsupported_media_type"],
    // RFC 9110 §8.3.1: NBSP is not OWS, so this is no media type (String.prototype.trim once read application/json).
    ["a Content-Type followed by NBSP", "application/json\u00a0", "{}", 415, "unsupported_media_type"],
    [
      "a charset other than UTF-8 (RFC 8259 §8.1)",
      "application/json; charset=latin1",
      "{}",
      415,
      "unsupported_media_type",
    ],
    ["form data", "application/x-www-form-urlencoded", "a=1", 415, "unsupported_media_type"],
  ])("refuses %s", (_name, type, body, status, code) => {
    expect(failure(safeJsonBody(req(type, body)))).toStrictEqual({ status, code });
  });

  it("names what it accepts in a 415 (RFC 9110 §15.5.16, Accept-Post)", () => {
    const result = safeJsonBody(req("text/plain", "{}"));
    expect(!result.ok && result.problem.headers["accept-post"]).toBe("application/json");
  });

  it("regression: parseJsonText ignores a leading BOM, as the body readers do (RFC 8259 §8.1)", () => {
    // Text read with a decoder that keeps the BOM (node:fs "utf8", TextDecoder ignoreBOM) was a 400 malformed_json.
    expect(parseJsonText('\ufeff{"a":1}')).toStrictEqual({ ok: true, value: { a: 1 } });
    expect(safeJsonBody(req("application/json", new Uint8Array([0xef, 0xbb, 0xbf, 0x31])))).toStrictEqual({
      ok: true,
      value: 1,
    });
    // Only one: a second U+FEFF is no BOM but a character outside JSON's grammar.
    expect(failure(parseJsonText('\ufeff\ufeff{"a":1}'))).toStrictEqual({ status: 400, code: "malformed_json" });
  });

  it("jsonBody throws the HttpProblem", () => {
    expect(() => jsonBody(req("application/json", "nope"))).toThrow(HttpProblem);
    expect(jsonBody(req("application/json", "1"))).toBe(1);
  });

  it("never throws on arbitrary bytes", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40 }),
        fc.constantFrom("application/json", "text/plain"),
        (bytes, type) => {
          safeJsonBody(req(type, bytes));
        },
      ),
    );
  });
});

describe("form bodies (WHATWG URL §5.1)", () => {
  it("keeps repeated names and `name[]` as arrays (Stripe-style enabled_events[])", () => {
    expect(
      parseForm("url=https%3A%2F%2Fx.test&enabled_events[]=a&enabled_events[]=b&one[]=z&r=1&r=2&s=+a%20b"),
    ).toStrictEqual(
      Object.assign(Object.create(null), {
        url: "https://x.test",
        enabled_events: ["a", "b"],
        one: ["z"],
        r: ["1", "2"],
        s: " a b",
      }),
    );
  });

  it("keeps __proto__ as a plain field", () => {
    const form = parseForm("__proto__=x&constructor=y");
    expect(Object.getOwnPropertyDescriptor(form, "__proto__")?.value).toBe("x");
    expect(form.constructor).toBe("y");
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  describe("regression: a field named __proto__ reached a handler that Object.assign-ed the form", () => {
    const form = (body: string) => req("application/x-www-form-urlencoded", body);
    const message = "A member is named __proto__, which copied into an object sets its prototype.";

    it("shows the harm: assigned, the parsed field sets the target's prototype", () => {
      const target = {};
      Object.assign(target, parseForm("__proto__[]=a"));
      expect(Object.getPrototypeOf(target)).toStrictEqual(["a"]);
    });

    it.each([
      ["a plain name", "__proto__=x"],
      ["list syntax", "a=1&__proto__[]=x&__proto__[]=y"],
      ["a repeated name", "__proto__=x&__proto__=y"],
      ["a percent-encoded name", "%5F%5Fproto%5F%5F=x"],
      ["percent-encoded list brackets", "__proto__%5B%5D=x"],
      ["a name with no value", "__proto__"],
    ])("refuses %s with 422 forbidden_member at /__proto__, as a JSON body's", (_name, body) => {
      for (const read of [safeFormBody(form(body)), safeJsonOrFormBody(form(body))]) {
        expect(failure(read)).toStrictEqual({ status: 422, code: "forbidden_member" });
        expect(read.ok ? undefined : read.problem.extensions).toStrictEqual({
          errors: [{ pointer: "/__proto__", in: "body", code: "proto_key", message }],
        });
      }
      expect(failure(safeJsonBody(req("application/json", '{"__proto__":"x"}')))).toStrictEqual(
        failure(safeFormBody(form(body))),
      );
    });

    it("keeps it as a plain own field with allowPrototypeKeys, the JSON opt-out", () => {
      for (const read of [
        safeFormBody(form("__proto__[]=x"), { allowPrototypeKeys: true }),
        safeJsonOrFormBody(form("__proto__[]=x"), { allowPrototypeKeys: true }),
      ]) {
        expect(read.ok && Object.getOwnPropertyDescriptor(read.value, "__proto__")?.value).toStrictEqual(["x"]);
      }
    });

    it.each([
      ["constructor, whose value is text and never holds a prototype", "constructor=x&constructor[]=prototype"],
      ["bracketed names, which the reader does not nest", "a[__proto__]=x&constructor[prototype]=y"],
      ["__proto__ as a value", "a=__proto__"],
      ["names that only contain it", "__proto__x=1&x__proto__=2&__proto=3"],
    ])("accepts %s", (_name, body) => {
      expect(safeFormBody(form(body)).ok).toBe(true);
    });
  });

  it("reads a form body", () => {
    expect(safeFormBody(req("application/x-www-form-urlencoded; charset=utf-8", "a=1&a=2"))).toMatchObject({
      ok: true,
      value: { a: ["1", "2"] },
    });
  });

  it.each<[string, string | undefined, string | Uint8Array, number, string]>([
    ["an empty body", "application/x-www-form-urlencoded", "", 400, "body_required"],
    [
      "bytes that are not UTF-8",
      "application/x-www-form-urlencoded",
      new Uint8Array([0x61, 0x3d, 0xff]),
      400,
      "malformed_form",
    ],
    ["JSON", "application/json", "{}", 415, "unsupported_media_type"],
    ["no Content-Type", undefined, "a=1", 415, "unsupported_media_type"],
  ])("refuses %s", (_name, type, body, status, code) => {
    expect(failure(safeFormBody(req(type, body)))).toStrictEqual({ status, code });
  });

  describe("regression: a percent-escape of bytes that are not UTF-8 was read as U+FFFD, losing the bytes", () => {
    it.each([
      ["a Latin-1 é in a value", "name=caf%E9", "name"],
      ["a lone continuation byte in a name", "%80=1", "%80"],
      ["a truncated sequence before the next field", "a=ok&b=%C3&c=1", "b"],
      ["an overlong encoding", "a=%C0%AF", "a"],
      ["an encoded surrogate (CESU-8)", "a=%ED%A0%80", "a"],
    ])("refuses %s with 400 malformed_form naming the field", (_name, body, field) => {
      const read = safeFormBody(req("application/x-www-form-urlencoded", body));
      expect(failure(read)).toStrictEqual({ status: 400, code: "malformed_form" });
      expect(read.ok ? undefined : read.problem.extensions).toStrictEqual({ field });
    });

    it.each([
      ["percent-encoded UTF-8", "name=caf%C3%A9&emoji=%F0%9F%98%80", { name: "café", emoji: "😀" }],
      ["U+FFFD sent on purpose", "a=%EF%BF%BD", { a: "\uFFFD" }],
      ["a malformed escape, kept as written (WHATWG URL §5.1)", "a=100%&b=%zz", { a: "100%", b: "%zz" }],
      ["raw UTF-8 next to escapes", "é=%C3%A9", { é: "é" }],
    ])("still reads %s", (_name, body, value) => {
      expect(safeFormBody(req("application/x-www-form-urlencoded", body))).toMatchObject({ ok: true, value });
    });

    it("agrees with a strict decoder on any escapes", () => {
      const strict = new TextDecoder("utf-8", { fatal: true });
      fc.assert(
        fc.property(fc.uint8Array({ minLength: 1, maxLength: 8 }), (bytes) => {
          const body = `a=${[...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")}`;
          let valid = true;
          try {
            valid = !strict.decode(bytes).includes("\u0000");
          } catch {
            valid = false;
          }
          const read = safeFormBody(req("application/x-www-form-urlencoded", body));
          expect(read.ok).toBe(valid);
        }),
      );
    });
  });
});

describe("JSON or form bodies", () => {
  it("picks the reader by Content-Type", () => {
    expect(safeJsonOrFormBody(req("application/json", '{"a":1}'))).toStrictEqual({ ok: true, value: { a: 1 } });
    expect(safeJsonOrFormBody(req("application/x-www-form-urlencoded", "a=1"))).toMatchObject({
      ok: true,
      value: { a: "1" },
    });
    expect(failure(safeJsonOrFormBody(req("text/csv", "a,b")))).toStrictEqual({
      status: 415,
      code: "unsupported_media_type",
    });
    expect(failure(safeJsonOrFormBody(req(undefined, "")))).toStrictEqual({ status: 400, code: "body_required" });
  });

  it("regression: lists both media types in Accept-Post and Accept-Patch as the fields' grammar says (comma-separated)", () => {
    const result = safeJsonOrFormBody(req("text/csv", "a,b"));
    const headers = !result.ok ? result.problem.headers : {};
    expect(headers["accept-post"]).toBe("application/json, application/x-www-form-urlencoded");
    expect(headers["accept-patch"]).toBe("application/json, application/x-www-form-urlencoded");
    expect(!result.ok && result.problem.detail).toContain("send application/json or application/x-www-form-urlencoded");
  });

  it.each<[string | undefined, Record<string, string>]>([
    ["POST", { "accept-post": "application/json" }],
    ["PATCH", { "accept-patch": "application/json" }],
    ["PUT", {}],
    [undefined, { "accept-post": "application/json", "accept-patch": "application/json" }],
  ])(
    "regression: a %s's 415 names what it takes in its own method's field only (a PUT's said Accept-Patch)",
    (method, fields) => {
      const result = safeJsonBody({ ...req("text/plain", "x"), ...(method === undefined ? {} : { method }) });
      const headers = !result.ok ? result.problem.headers : {};
      expect({ "accept-post": headers["accept-post"], "accept-patch": headers["accept-patch"] }).toStrictEqual({
        "accept-post": fields["accept-post"],
        "accept-patch": fields["accept-patch"],
      });
    },
  );
});

describe("content codings (RFC 9110 §8.4, §15.5.16)", () => {
  const coded = (encoding: string, type: string, body: string) => ({
    headers: { "content-type": type, "content-encoding": encoding },
    body: encoder.encode(body),
  });

  it.each<[string, string]>([
    ["gzip", "gzip"],
    ["br in capitals", "BR"],
    ["identity then gzip", "identity, gzip"],
    ["an unknown coding", "x-custom"],
    ["two field lines, joined", "identity, deflate"],
  ])("refuses a body labelled %s with 415 unsupported_content_coding, naming identity", (_name, encoding) => {
    // Plain JSON under the label: the label, not whether the bytes parse, says what the body is.
    for (const result of [
      safeJsonBody(coded(encoding, "application/json", "{}")),
      safeFormBody(coded(encoding, "application/x-www-form-urlencoded", "a=1")),
      safeJsonOrFormBody(coded(encoding, "application/json", "{}")),
    ]) {
      expect(failure(result)).toStrictEqual({ status: 415, code: "unsupported_content_coding" });
      expect(result.ok ? undefined : result.problem.headers["accept-encoding"]).toBe("identity");
    }
  });

  it.each([
    ["identity", "identity"],
    ["IDENTITY with empty elements", " , IDENTITY ,"],
    ["an empty field", ""],
  ])("reads a body labelled %s as uncoded", (_name, encoding) => {
    expect(safeJsonBody(coded(encoding, "application/json", '{"a":1}'))).toStrictEqual({ ok: true, value: { a: 1 } });
    expect(safeFormBody(coded(encoding, "application/x-www-form-urlencoded", "a=1"))).toMatchObject({ ok: true });
  });
});

describe("query strings", () => {
  it("decodes with repeated names as arrays, with or without the leading ?", () => {
    expect({ ...parseQuery("?a=1&a=2&b=%C3%A9&c") }).toStrictEqual({ a: ["1", "2"], b: "é", c: "" });
    expect({ ...parseQuery("") }).toStrictEqual({});
  });
});
