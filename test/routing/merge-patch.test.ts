import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergePatch } from "../../src/routing/index";

describe("mergePatch (RFC 7396)", () => {
  it("merges documents 100,000 deep without exhausting the stack (issue 16)", () => {
    const depth = 100_000;
    let patch: Record<string, unknown> = { leaf: 1 };
    let target: Record<string, unknown> = { leaf: 0, keep: true };
    for (let i = 0; i < depth; i++) {
      patch = { a: patch };
      target = { a: target };
    }
    const merged = mergePatch(target, patch) as Record<string, unknown>;
    let node = merged;
    for (let i = 0; i < depth; i++) node = node.a as Record<string, unknown>;
    expect(node).toStrictEqual({ leaf: 1, keep: true });
    // Deep arrays are copied, not shared.
    let list: unknown = [];
    for (let i = 0; i < depth; i++) list = [list];
    const copied = mergePatch({}, { list }) as { list: unknown };
    // (Compared by identity only: a deep comparison of 100,000 levels would itself overflow the stack.)
    expect(copied.list === list).toBe(false);
    expect(Array.isArray(copied.list) && Array.isArray(copied.list[0])).toBe(true);
  });

  it("keeps member order: existing members in place, new ones after, in patch order", () => {
    expect(
      Object.keys(mergePatch({ b: 1, a: { x: 1 }, c: 3 }, { d: 4, a: { y: 2 }, c: null }) as object),
    ).toStrictEqual(["b", "a", "d"]);
  });

  // RFC 7396 Appendix A, every example.
  it.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])("Appendix A: %j + %j = %j", (target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });

  it("never mutates its inputs and shares no part of them", () => {
    const target = { a: { b: 1 }, list: [{ x: 1 }] };
    const patch = { a: { c: 2 }, d: { e: [1] } };
    const before = structuredClone({ target, patch });
    const result = mergePatch(target, patch) as { a: object; d: { e: number[] }; list: object[] };
    expect({ target, patch }).toEqual(before);
    expect(result.a).not.toBe(target.a);
    expect(result.list[0]).not.toBe(target.list[0]);
    expect(result.d.e).not.toBe(patch.d.e);
  });

  it("keeps __proto__ as plain data and never pollutes a prototype", () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}');
    const result = mergePatch({}, patch) as Record<string, unknown>;
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.hasOwn(result, "__proto__")).toBe(true);
    expect((result as { polluted?: unknown }).polluted).toBeUndefined();
    // Patching an inherited name merges into nothing, not into Object.prototype.constructor.
    expect(JSON.stringify(mergePatch({}, { constructor: { a: 1 } }))).toBe('{"constructor":{"a":1}}');
  });

  const json = fc.jsonValue({ maxDepth: 4 });

  it("property: applying a patch twice equals applying it once (idempotent)", () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const once = mergePatch(target, patch);
        expect(mergePatch(once, patch)).toEqual(once);
      }),
      { numRuns: 500 },
    );
  });

  it("property: the result never contains a null the patch set on an object member", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json), fc.dictionary(fc.string(), fc.constant(null)), (target, patch) => {
        const result = mergePatch(target, patch) as Record<string, unknown>;
        for (const key of Object.keys(patch)) expect(Object.hasOwn(result, key)).toBe(false);
      }),
    );
  });
});
