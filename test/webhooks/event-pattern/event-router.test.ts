import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { isEventPattern } from "../../../src/webhooks/event-pattern/event-pattern";
import { EventRouter } from "../../../src/webhooks/event-pattern/event-router";

/** The router registered with `patterns` matches `type` as a naive reference does: exact, longest prefix, then `*`. */
function expectNaiveMatch(patterns: readonly string[], type: string): void {
  const r = new EventRouter<string>();
  for (const p of patterns) r.add(p, p);
  const prefixes = patterns
    .filter((p) => p.endsWith(".*") && type.startsWith(p.slice(0, -1)))
    .sort((a, b) => b.length - a.length);
  const expected = patterns.includes(type) ? type : (prefixes[0] ?? (patterns.includes("*") ? "*" : undefined));
  expect(r.match(type)).toBe(expected);
}

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
        expectNaiveMatch(patterns, t);
      }),
    );
  });

  it("agrees with the naive reference on types of any shape: empty segments, a trailing dot, stars, spaces", () => {
    const type = fc.stringMatching(/^[ab.* ]{0,8}$/);
    const word = fc.stringMatching(/^[ab]{1,2}$/);
    const name = fc.array(word, { minLength: 1, maxLength: 3 }).map((s) => s.join("."));
    const pattern = fc.oneof(
      name,
      name.map((t) => `${t}.*`),
      fc.constant("*"),
    );
    fc.assert(
      fc.property(fc.uniqueArray(pattern, { maxLength: 6 }), type, (patterns, t) => {
        expectNaiveMatch(patterns, t);
      }),
    );
  });

  // Regression: match looked up every prefix of the type, one per dot, each a new string: a type of 16 KB of dots (an
  // X-GitHub-Event header, which GitHub does not sign) cost 174 MB, one of 256 KB ran the process out of memory. The
  // work is now bounded by the patterns registered, whatever the type.
  it("looks up a bounded number of entries, however many dots the type has", () => {
    const r = new EventRouter<number>();
    r.add("order.*", 1);
    r.add("order.line.*", 2);
    r.add("order.created", 3);
    r.add("*", 4);
    const lookups = (type: string): number => {
      const get = vi.spyOn(Map.prototype, "get");
      const has = vi.spyOn(Map.prototype, "has");
      try {
        r.match(type);
        return get.mock.calls.length + has.mock.calls.length;
      } finally {
        get.mockRestore();
        has.mockRestore();
      }
    };
    const short = lookups("a.b.c");
    for (const type of ["a.".repeat(10_000), `order.line.${"x.".repeat(10_000)}`, ".".repeat(20_000)]) {
      expect(lookups(type)).toBeLessThanOrEqual(Math.max(short, 3));
    }
    expect(r.match(`order.line.${"x.".repeat(10_000)}`)).toBe(2);
    expect(r.match(`order.${"x.".repeat(10_000)}`)).toBe(1);
    expect(r.match("a.".repeat(10_000))).toBe(4);
  });
});
