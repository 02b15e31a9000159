import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonText, safeJsonBody } from "../../src/http/body";
import { findDuplicateMember } from "../../src/http/duplicate-members";
import { HTTP_PROBLEM_CODES } from "../../src/http/problem";

const encoder = new TextEncoder();

describe("regression: a JSON body with a member name twice was read as its last value (RFC 7493 §2.3)", () => {
  it.each([
    ['{"role":"user","role":"admin"}', "/role"],
    ['{"a":{"b":1,"c":2,"b":3}}', "/a/b"],
    ['[1,{"x":[{"k":1,"k":2}]}]', "/1/x/0/k"],
    ['{"a":1,"\\u0061":2}', "/a"],
    ['{"a/b":1,"a\\/b":2}', "/a~1b"],
    ['{"__x":1, "__x" :2}', "/__x"],
  ])("%s → 422 duplicate_member at %s", (text, pointer) => {
    const read = parseJsonText(text);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.problem).toMatchObject({ status: 422, code: "duplicate_member" });
    expect(read.problem.extensions).toStrictEqual({
      errors: [{ pointer, in: "body", code: "duplicate_member", message: expect.any(String) }],
    });
  });

  it("through the body readers, and is a registered code", () => {
    const read = safeJsonBody({
      headers: { "content-type": "application/json" },
      body: encoder.encode('{"a":1,"a":1}'),
    });
    expect(read.ok ? undefined : read.problem.code).toBe("duplicate_member");
    expect(HTTP_PROBLEM_CODES).toContain("duplicate_member");
  });

  it.each([['{"a":{"a":{"a":1}}}'], ['[{"a":1},{"a":2}]'], ['{"a":"b:c","b":"\\"a\\":1"}'], ['{"A":1,"a":2}']])(
    "accepts the same name in different objects, or in strings: %s",
    (text) => {
      expect(parseJsonText(text).ok).toBe(true);
    },
  );

  it("accepts duplicates, last one winning, when allowDuplicateMembers says so", () => {
    expect(parseJsonText('{"a":1,"a":2}', { allowDuplicateMembers: true })).toStrictEqual({
      ok: true,
      value: { a: 2 },
    });
  });

  it("agrees with the generated documents' own member lists (fast-check)", () => {
    // Names as written in the text, and as decoded: "\u0061" is "a".
    const name = fc.constantFrom(["a", "a"], ["b", "b"], ["\\u0061", "a"], ["a:", "a:"], ["", ""]);
    type Node = { text: string; duplicate: boolean };
    const { json } = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: "small" },
        fc.constant<Node>({ text: '"a:b"', duplicate: false }),
        tie("array"),
        tie("object"),
      ),
      array: fc.array(tie("json") as fc.Arbitrary<Node>, { maxLength: 3 }).map(
        (items): Node => ({
          text: `[${items.map((i) => i.text).join(",")}]`,
          duplicate: items.some((i) => i.duplicate),
        }),
      ),
      object: fc.array(fc.tuple(name, tie("json") as fc.Arbitrary<Node>), { maxLength: 3 }).map(
        (members): Node => ({
          text: `{${members.map(([[written], value]) => `"${written}" : ${value.text}`).join(" ,")}}`,
          duplicate:
            new Set(members.map(([[, decoded]]) => decoded)).size < members.length ||
            members.some(([, value]) => value.duplicate),
        }),
      ),
    }));
    fc.assert(
      fc.property(json as fc.Arbitrary<Node>, (node) => {
        expect(findDuplicateMember(node.text) !== undefined).toBe(node.duplicate);
        const read = parseJsonText(node.text);
        expect(read.ok ? undefined : read.problem.code).toBe(node.duplicate ? "duplicate_member" : undefined);
      }),
      { numRuns: 2_000 },
    );
  });
});
