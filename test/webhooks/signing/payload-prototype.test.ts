import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { generateSecret, sign, type VerifyResult, verify } from "../../../src/webhooks/signing/index";

const NOW = 1_700_000_000;
const clock = () => NOW * 1000;
const secret = generateSecret();
const encoder = new TextEncoder();

function verified(body: string, options: { parse?: "json" | "form"; bytes?: boolean; schema?: z.ZodType } = {}) {
  const headers = sign({ id: "msg_p", timestamp: NOW, body, secrets: secret });
  const given = options.bytes === true ? encoder.encode(body) : body;
  const { parse = "json", schema } = options;
  return verify({
    body: given,
    headers,
    secrets: secret,
    now: clock,
    parse,
    ...(schema === undefined ? {} : { schema }),
  });
}

// The refused member, as the cause names it: a forbidden_member problem with the JSON Pointer and the fault.
function refusal(result: VerifyResult<unknown>) {
  if (result.ok) return "ok";
  const cause = result.error.cause as { code?: string; extensions?: { errors?: unknown[] } } | undefined;
  return { code: result.error.code, cause: cause?.code, errors: cause?.extensions?.errors };
}
// RFC 6901 §3: "~" and "/" in a member name are written "~0" and "~1" in a pointer.
const token = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");
const refused = (pointer: string, code = "proto_key") => ({
  code: "payload_invalid",
  cause: "forbidden_member",
  errors: [expect.objectContaining({ pointer, in: "body", code })],
});

describe("regression: a signed payload's own __proto__ reached the handler (prototype poisoning)", () => {
  describe("parse: json", () => {
    it.each([
      ["an own __proto__", '{"__proto__":{"admin":true}}', "/__proto__", "proto_key"],
      ["one nested in an array", '{"data":[{"id":1},{"__proto__":{"admin":true}}]}', "/data/1/__proto__", "proto_key"],
      ["one escaped, \\u005f_proto__", '{"\\u005f_proto__":{"admin":true}}', "/__proto__", "proto_key"],
      ["one escaped whole", '{"a":{"\\u005F\\u005F\\u0070roto\\u005f\\u005f":1}}', "/a/__proto__", "proto_key"],
      [
        "a constructor.prototype",
        '{"constructor":{"prototype":{"admin":true}}}',
        "/constructor/prototype",
        "constructor_prototype",
      ],
      [
        "an escaped constructor",
        '{"x":{"\\u0063onstructor":{"prototype":{}}}}',
        "/x/constructor/prototype",
        "constructor_prototype",
      ],
      ["a pointer token to escape", '{"a/b~c":{"__proto__":null}}', "/a~1b~0c/__proto__", "proto_key"],
    ])("refuses %s as payload_invalid, naming it with a JSON Pointer", (_, body, pointer, code) => {
      const expected = refused(pointer, code);
      expect(refusal(verified(body))).toStrictEqual(expected);
      expect(refusal(verified(body, { bytes: true }))).toStrictEqual(expected);
    });

    it("refuses it before the schema, which would leave __proto__ out of its output", () => {
      const schema = z.looseObject({ type: z.string() });
      expect(refusal(verified('{"type":"a","__proto__":{"admin":true}}', { schema }))).toStrictEqual(
        refused("/__proto__"),
      );
    });

    it.each([
      ["__proto__ as a value", '{"a":"__proto__"}'],
      ["constructor as a name with a string", '{"constructor":"x"}'],
      ["a constructor without prototype", '{"constructor":{"name":"x"}}'],
      ["a prototype member elsewhere", '{"prototype":{"a":1}}'],
      ["names that only contain them", '{"__proto__x":1,"my constructor":{"prototype":1}}'],
    ])("accepts %s", (_, body) => {
      expect(verified(body)).toMatchObject({ ok: true, payload: JSON.parse(body) });
    });

    it("leaves the byte order mark as it was: ignored, as string and as bytes", () => {
      const body = '\uFEFF{"__proto__":{}}';
      expect(refusal(verified(body))).toStrictEqual(refused("/__proto__"));
      expect(refusal(verified(body, { bytes: true }))).toStrictEqual(refused("/__proto__"));
    });
  });

  describe("parse: form", () => {
    it.each([
      ["a plain name", "__proto__=x"],
      ["a percent-encoded name", "%5F%5Fproto%5F%5F=x"],
      ["one after others", "a=1&__proto__=x"],
      ["a repeated name", "__proto__=x&__proto__=y"],
      ["a name with no value", "__proto__"],
    ])("refuses a field named __proto__, %s, as payload_invalid at /__proto__", (_, body) => {
      expect(refusal(verified(body, { parse: "form" }))).toStrictEqual(refused("/__proto__"));
    });

    it("refuses __proto__[] too: read as the list __proto__, as the router's form reader reads it", () => {
      expect(refusal(verified("__proto__%5B%5D=y", { parse: "form" }))).toStrictEqual(refused("/__proto__"));
      expect(refusal(verified("a=1&__proto__[]=y", { parse: "form" }))).toStrictEqual(refused("/__proto__"));
    });

    it("accepts constructor and __proto__ as a value; copied, the record sets no prototype", () => {
      const result = verified("constructor=x&a=__proto__", { parse: "form" });
      expect(result).toMatchObject({ ok: true, payload: { constructor: "x", a: "__proto__" } });
      const target: Record<string, unknown> = {};
      Object.assign(target, result.ok ? result.payload : {});
      expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    });
  });

  describe("property: an object with an injected __proto__ member at any depth is refused, without it verifies", () => {
    const name = fc.string({ maxLength: 6 }).filter((key) => key !== "__proto__" && key !== "constructor");
    const clean = (value: unknown) => !/__proto__|constructor/.test(JSON.stringify(value));
    const base = fc.dictionary(name, fc.jsonValue({ maxDepth: 2 })).filter(clean);

    it("holds for plain and escaped names, as text and as bytes", () => {
      fc.assert(
        fc.property(
          base,
          fc.array(name, { maxLength: 4 }),
          fc.jsonValue({ maxDepth: 1 }).filter(clean),
          fc.boolean(),
          fc.boolean(),
          (object, path, poison, escaped, bytes) => {
            // Walk the path, making each member on it an object, and give the last one an own __proto__.
            const root = structuredClone(object) as Record<string, unknown>;
            let node = root;
            for (const key of path) {
              const next = node[key];
              const child: Record<string, unknown> =
                next !== null && typeof next === "object" && !Array.isArray(next)
                  ? (next as Record<string, unknown>)
                  : {};
              node[key] = child;
              node = child;
            }
            const without = JSON.stringify(root);
            Object.defineProperty(node, "__proto__", { value: poison, enumerable: true, configurable: true });
            const plain = JSON.stringify(root);
            const poisoned = escaped ? plain.replace('"__proto__":', '"\\u005f_proto__":') : plain;
            const pointer = `${path.map((key) => `/${token(key)}`).join("")}/__proto__`;
            expect(refusal(verified(poisoned, { bytes }))).toStrictEqual(refused(pointer));
            expect(verified(without, { bytes })).toStrictEqual(expect.objectContaining({ ok: true }));
            expect(verified(without, { bytes })).toMatchObject({ payload: JSON.parse(without) });
          },
        ),
        { numRuns: 200 },
      );
    });
  });
});
