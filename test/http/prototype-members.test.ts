import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonText, safeJsonBody } from "../../src/http/body";
import { HTTP_PROBLEM_CODES } from "../../src/http/problem";
import { findPrototypeMember, mayHoldPrototypeMember, prototypeMemberOf } from "../../src/http/prototype-members";

const encoder = new TextEncoder();
const jsonRequest = (text: string, type = "application/json") => ({
  headers: { "content-type": type },
  body: encoder.encode(text),
});

/** A naive reference: every object of the value, recursively. */
function naive(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(naive);
  if (value === null || typeof value !== "object") return false;
  if (Object.hasOwn(value, "__proto__")) return true;
  const record = value as Record<string, unknown>;
  const ctor = Object.hasOwn(record, "constructor") ? record["constructor"] : undefined;
  if (ctor !== null && typeof ctor === "object" && Object.hasOwn(ctor, "prototype")) return true;
  return Object.keys(record).some((key) => naive(record[key]));
}

// Each character of a member name written as itself or as a \u escape, in either case of hex digit.
function escapeSome(name: string, picks: readonly number[]): string {
  return [...name]
    .map((char, i) => {
      const pick = picks[i % picks.length] ?? 0;
      if (pick === 0) return char;
      const hex = (char.codePointAt(0) as number).toString(16).padStart(4, "0");
      return `\\u${pick === 1 ? hex : hex.toUpperCase()}`;
    })
    .join("");
}

describe("regression: prototype poisoning, a body's own __proto__ became a prototype through Object.assign", () => {
  it("shows the hazard: JSON.parse keeps an own __proto__, and Object.assign sets a prototype from it", () => {
    const parsed = JSON.parse('{"__proto__":{"admin":true}}');
    const target: Record<string, unknown> = {};
    Object.assign(target, parsed);
    expect(target["admin"]).toBe(true);
  });

  describe("refused with 422 forbidden_member, naming the member with a JSON Pointer", () => {
    it.each([
      ['{"__proto__":{"admin":true}}', "/__proto__", "proto_key"],
      ['{"__proto__":1}', "/__proto__", "proto_key"],
      ['{"a":1,"__proto__":null}', "/__proto__", "proto_key"],
      ['[{"user":{"roles":[{"__proto__":{}}]}}]', "/0/user/roles/0/__proto__", "proto_key"],
      ['{"\\u005f_proto__":{"admin":true}}', "/__proto__", "proto_key"],
      ['{"\\u005F\\u005F\\u0070\\u0072\\u006F\\u0074\\u006F\\u005F\\u005F":{}}', "/__proto__", "proto_key"],
      ['{"constructor":{"prototype":{"admin":true}}}', "/constructor/prototype", "constructor_prototype"],
      ['{"a":[{"constructor":{"prototype":null}}]}', "/a/0/constructor/prototype", "constructor_prototype"],
      ['{"constructo\\u0072":{"prot\\u006Ftype":{}}}', "/constructor/prototype", "constructor_prototype"],
    ])("%s → %s (%s)", (text, pointer, fault) => {
      const read = parseJsonText(text);
      expect(read.ok).toBe(false);
      if (read.ok) return;
      expect(read.problem).toMatchObject({ status: 422, code: "forbidden_member" });
      expect(read.problem.extensions).toStrictEqual({
        errors: [{ pointer, in: "body", code: fault, message: expect.any(String) }],
      });
    });

    it("through every JSON body reader, a merge patch included", () => {
      for (const type of ["application/json", "application/merge-patch+json", "application/vnd.api+json"]) {
        const read = safeJsonBody(jsonRequest('{"a":{"__proto__":{"x":1}}}', type));
        expect(read.ok ? undefined : read.problem.code, type).toBe("forbidden_member");
      }
    });

    it("is a registered problem code", () => {
      expect(HTTP_PROBLEM_CODES).toContain("forbidden_member");
    });
  });

  describe("accepted", () => {
    it.each([
      ['{"name":"__proto__"}', { name: "__proto__" }],
      ['{"note":"\\"__proto__\\": {}"}', { note: '"__proto__": {}' }],
      ['{"constructor":"Ferrari"}', { constructor: "Ferrari" }],
      ['{"constructor":{"name":"Ferrari"}}', { constructor: { name: "Ferrari" } }],
      ['{"constructor":[{"prototype":1}]}', { constructor: [{ prototype: 1 }] }],
      ['{"prototype":{"constructor":1}}', { prototype: { constructor: 1 } }],
      ['{"__proto":1,"proto__":2,"__PROTO__":3}', { __proto: 1, proto__: 2, __PROTO__: 3 }],
    ])("%s", (text, value) => {
      const read = parseJsonText(text);
      expect(read.ok).toBe(true);
      // Compared as text: a value with an own `constructor` member defeats a strict equality's class check.
      if (read.ok) expect(JSON.stringify(read.value)).toBe(JSON.stringify(value));
    });

    it("when allowPrototypeKeys says so, as plain own members", () => {
      const read = parseJsonText('{"__proto__":{"admin":true},"constructor":{"prototype":1}}', {
        allowPrototypeKeys: true,
      });
      expect(read.ok).toBe(true);
      if (!read.ok) return;
      expect(Object.getPrototypeOf(read.value)).toBe(Object.prototype);
      expect(Object.keys(read.value as object)).toStrictEqual(["__proto__", "constructor"]);
    });
  });

  describe("the quick check before the walk", () => {
    it("finds no suspect in text without the names, so nothing is walked", () => {
      expect(mayHoldPrototypeMember('{"a":[1,2,{"b":"c"}],"proto":"x"}', false)).toBe(false);
      expect(mayHoldPrototypeMember('{"a":"\\u00e9","constructors":1}', true)).toBe(false);
      expect(mayHoldPrototypeMember('{"constructors":{"prototype":1},"x__proto__":2}', false)).toBe(false);
      expect(mayHoldPrototypeMember('{"\\u0063onstructors":1,"\\u005f_proto_":2}', true)).toBe(false);
    });

    it("walks nothing when the search finds no name: prototypeMemberOf answers from the text alone", () => {
      // The value is never looked at when the text cannot hold a refused member (the search is the gate).
      const poisoned = JSON.parse('{"__proto__":{}}');
      expect(prototypeMemberOf('{"a":1}', poisoned, false)).toBeUndefined();
      expect(prototypeMemberOf('{"__proto__":{}}', poisoned, false)).toStrictEqual({
        pointer: "/__proto__",
        fault: "proto_key",
      });
      expect(prototypeMemberOf('{"\\u005f_proto__":{}}', poisoned, true)).toStrictEqual({
        pointer: "/__proto__",
        fault: "proto_key",
      });
    });

    it("agrees with a naive walk of the parsed value, names escaped at random (fast-check)", () => {
      const name = fc
        .tuple(
          fc.constantFrom("__proto__", "constructor", "prototype", "a", "__proto", "Constructor"),
          fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 9 }),
        )
        .map(([plain, picks]) => escapeSome(plain, picks));
      const { json } = fc.letrec((tie) => ({
        json: fc.oneof(
          { depthSize: "small" },
          fc.constant("1"),
          fc.constant('"__proto__"'),
          tie("array"),
          tie("object"),
        ),
        array: fc.array(tie("json") as fc.Arbitrary<string>, { maxLength: 3 }).map((items) => `[${items.join(",")}]`),
        object: fc
          .array(fc.tuple(name, tie("json") as fc.Arbitrary<string>), { maxLength: 3 })
          .map((members) => `{${members.map(([key, value]) => `"${key}":${value}`).join(",")}}`),
      }));
      fc.assert(
        fc.property(json as fc.Arbitrary<string>, (text) => {
          const value = JSON.parse(text);
          const expected = naive(value);
          expect(findPrototypeMember(value) !== undefined).toBe(expected);
          // The quick check may say "maybe" where there is none, never "no" where there is one.
          if (expected) expect(mayHoldPrototypeMember(text, text.includes("\\u"))).toBe(true);
          // The one check the JSON body reader and the signed-payload reader share: search, then walk.
          expect(prototypeMemberOf(text, value, text.includes("\\u"))).toStrictEqual(findPrototypeMember(value));
          expect(prototypeMemberOf(text, value, true)).toStrictEqual(findPrototypeMember(value));
          // Names repeat at random here: that refusal (duplicate_member) is another test's.
          const read = parseJsonText(text, { allowDuplicateMembers: true });
          expect(read.ok ? undefined : read.problem.code).toBe(expected ? "forbidden_member" : undefined);
        }),
        { numRuns: 2_000 },
      );
    });
  });
});
