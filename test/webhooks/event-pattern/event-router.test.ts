import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isEventPattern } from "../../../src/webhooks/event-pattern/event-pattern";
import { EventRouter } from "../../../src/webhooks/event-pattern/event-router";

describe("EventRouter", () => {
  const router = new EventRouter<string>();
  for (const pattern of ["order.shipped", "order.*", "order.line.*", "*"]) router.add(pattern, pattern);

  it.each([
    ["order.shipped", "order.shipped"],
    ["order.created", "order.*"],
    ["order.line.added", "order.line.*"],
    ["order.line", "order.*"],
    ["order", "*"],
    ["orders.created", "*"],
    ["invoice.paid", "*"],
    ["", "*"],
  ])("routes %j to the most specific pattern %j", (type, expected) => {
    expect(router.match(type)).toBe(expected);
  });

  it("matches nothing when no pattern fits and there is no *", () => {
    const narrow = new EventRouter<number>();
    narrow.add("order.*", 1);
    expect(narrow.match("invoice.paid")).toBeUndefined();
    expect(narrow.match("order")).toBeUndefined();
  });

  it.each(["", ".", "order.", ".order", "order..x", "*.shipped", "order.*.x", "order*", "or der", "**"])(
    "refuses the malformed pattern %j",
    (pattern) => {
      expect(isEventPattern(pattern)).toBe(false);
      expect(() => new EventRouter().add(pattern, 1)).toThrow(TypeError);
    },
  );

  it("refuses a pattern registered twice", () => {
    const twice = new EventRouter<number>();
    twice.add("order.*", 1);
    twice.add("*", 1);
    expect(() => twice.add("order.*", 2)).toThrow(TypeError);
    expect(() => twice.add("*", 2)).toThrow(TypeError);
  });

  it("agrees with a naive reference: exact, then the longest matching prefix, then *", () => {
    const segment = fc.constantFrom("order", "line", "shipped", "a", "b");
    const type = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("."));
    const pattern = fc.oneof(
      type,
      type.map((t) => `${t}.*`),
      fc.constant("*"),
    );
    fc.assert(
      fc.property(fc.uniqueArray(pattern, { maxLength: 8 }), type, (patterns, t) => {
        const r = new EventRouter<string>();
        for (const p of patterns) r.add(p, p);
        const prefixes = patterns
          .filter((p) => p.endsWith(".*") && t.startsWith(p.slice(0, -1)))
          .sort((a, b) => b.length - a.length);
        const expected = patterns.includes(t) ? t : (prefixes[0] ?? (patterns.includes("*") ? "*" : undefined));
        expect(r.match(t)).toBe(expected);
      }),
    );
  });
});
