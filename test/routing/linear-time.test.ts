/**
 * Matching work grows linearly with the path length, measured without a clock: while a match runs, the
 * String methods it calls (and decodeURIComponent and Map lookups) are wrapped to count the characters
 * they read or produce. The matcher touches the path only through these calls, and each step of its walk
 * makes at least one of them, so the count bounds its work up to a constant factor (docs/routing.md,
 * "Why matching is linear"). For each adversarial family the count per path character must not grow as
 * the path grows 16-fold; a quadratic control shows that the measure catches superlinear work.
 */
import { describe, expect, it } from "vitest";
import { compileMatcher, type MatchOptions, type MatchResult } from "../../src/routing/index";

type Counted = [target: object, name: string, cost: (self: unknown, args: unknown[], result: unknown) => number];

const length = (value: unknown) => (typeof value === "string" ? value.length : 0);
const scanned = (self: unknown, args: unknown[], result: unknown) => {
  const from = Math.max(0, Number(args[1] ?? 0));
  const end = result === -1 ? length(self) : (result as number) + length(args[0]);
  return Math.max(1, end - from);
};
const COUNTED: Counted[] = [
  [String.prototype, "charCodeAt", () => 1],
  [String.prototype, "codePointAt", () => 1],
  [String.prototype, "indexOf", scanned],
  [String.prototype, "lastIndexOf", (self) => length(self)],
  [String.prototype, "includes", (self) => length(self)],
  [String.prototype, "startsWith", (_, args) => Math.max(1, length(args[0]))],
  [String.prototype, "endsWith", (_, args) => Math.max(1, length(args[0]))],
  [String.prototype, "slice", (_, __, result) => Math.max(1, length(result))],
  [String.prototype, "substring", (_, __, result) => Math.max(1, length(result))],
  [String.prototype, "toLowerCase", (self) => Math.max(1, length(self))],
  [String.prototype, "replace", (self) => Math.max(1, length(self))],
  [String.prototype, "split", (self) => Math.max(1, length(self))],
  [globalThis, "decodeURIComponent", (_, args) => Math.max(1, length(args[0]))],
  // A string key is hashed once per string: count its characters.
  [Map.prototype, "get", (_, args) => 1 + length(args[0])],
  [Map.prototype, "has", (_, args) => 1 + length(args[0])],
];

/** The characters `fn` reads or produces through the counted functions. */
function work(fn: () => void): number {
  let total = 0;
  const saved = COUNTED.map(([target, name]) => (target as Record<string, unknown>)[name]);
  COUNTED.forEach(([target, name, cost], i) => {
    const original = saved[i] as (...args: unknown[]) => unknown;
    (target as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      total += cost(this, args, result);
      return result;
    };
  });
  try {
    fn();
  } finally {
    COUNTED.forEach(([target, name], i) => {
      (target as Record<string, unknown>)[name] = saved[i];
    });
  }
  return total;
}

const SIZES = [1_000, 2_000, 4_000, 8_000, 16_000];

/** Work per path character at each size, for paths built by `pathOf(n)` (about n characters). */
function perCharacter(match: (path: string) => unknown, pathOf: (n: number) => string): number[] {
  return SIZES.map((n) => {
    const path = pathOf(n);
    match(path); // builds the automaton states this path needs (bounded by the table, not the path)
    return work(() => match(path)) / path.length;
  });
}

/** Linear: the work per character never grows (5 % slack for the fixed cost shrinking unevenly). */
function expectLinear(ratios: number[]): void {
  const first = ratios[0] as number;
  expect(first).toBeGreaterThan(0);
  for (const ratio of ratios) expect(ratio).toBeLessThanOrEqual(first * 1.05);
}

interface Family {
  name: string;
  routes: string[];
  options?: MatchOptions;
  path: (n: number) => string;
  expected: MatchResult<string>["kind"];
  /** The matcher has to read the whole path (so the count must be at least its length). */
  readsAll: boolean;
}

const repeat = (unit: string, n: number) => unit.repeat(Math.max(1, Math.floor(n / unit.length)));

const families: Family[] = [
  {
    name: "many short segments: parameters everywhere, near-misses, a wildcard at the end",
    routes: [
      "/{a}/{b}/{c}/x",
      "/a/a/a/a/*",
      "/a/{b}/a/{d}/{e}/z",
      `/${Array.from({ length: 100 }, (_, i) => `{p${i}}`).join("/")}/end`,
    ],
    path: (n) => `/${repeat("a/", n)}y`,
    expected: "found",
    readsAll: true,
  },
  {
    name: "a hundred long segments against a hundred parameters, missing at the last",
    routes: [`/${Array.from({ length: 100 }, (_, i) => `{p${i}}`).join("/")}/end`, "/{a}/{b}/x"],
    path: (n) => `/${Array.from({ length: 100 }, () => repeat("a", n / 100)).join("/")}/ending`,
    expected: "not_found",
    readsAll: true,
  },
  {
    name: "one long parameter segment between literals",
    routes: ["/users/{id}/orders", "/users/{id}", "/users/new/orders"],
    path: (n) => `/users/${repeat("u", n)}/orders`,
    expected: "bad_path", // longer than maxParamLength: still read and measured
    readsAll: true,
  },
  {
    name: "a composite segment full of near-misses of its literal",
    routes: ["/repos/{base}...{head}", "/files/{name}.json", "/repos/{id}"],
    path: (n) => `/repos/${repeat("..a", n)}...b`,
    expected: "bad_path",
    readsAll: true,
  },
  {
    name: "a long literal near-miss",
    routes: [`/${"a".repeat(5_000)}b/{id}`, "/{x}/{id}"],
    path: (n) => `/${repeat("a", n)}/1`,
    expected: "bad_path",
    readsAll: true,
  },
  {
    name: "hashed literals (many sharing a first character) and long near-miss segments",
    routes: Array.from({ length: 12 }, (_, i) => `/item${i}/{id}/item${i}`),
    path: (n) => `/item1/${repeat("x", n / 2)}/${repeat("item1", n / 2)}`,
    expected: "not_found",
    readsAll: true,
  },
  {
    name: "a wildcard taking a long percent-encoded rest",
    routes: ["/static/*", "/static/{a}/{b}"],
    path: (n) => `/static/${repeat("%41/", n)}`,
    expected: "found",
    readsAll: true,
  },
  {
    name: "case folding, duplicate and trailing slashes normalized",
    routes: ["/users/{id}/orders/{order}", "/Users/new"],
    options: { caseSensitive: false, duplicateSlashes: "ignore", trailingSlash: "ignore" },
    path: (n) => `/${repeat("/", n / 2)}USERS/${repeat("x", n / 2)}//orders/7/`,
    expected: "bad_path",
    readsAll: true,
  },
];

describe("matching work is linear in the path length (counted, not timed)", () => {
  it.each(families)("$name", (family) => {
    const matcher = compileMatcher(
      family.routes.map((template) => ({ method: "GET", template, route: template })),
      { maxParamLength: 100, ...family.options },
    );
    const match = (path: string) => matcher.match("GET", path);
    for (const n of SIZES) expect(match(family.path(n)).kind).toBe(family.expected);
    const ratios = perCharacter(match, family.path);
    expectLinear(ratios);
    if (family.readsAll) for (const ratio of ratios) expect(ratio).toBeGreaterThanOrEqual(1);
  });

  it("the measure catches superlinear work (a quadratic control fails the same check)", () => {
    // Re-reads the path from the start at every "/", as a backtracking matcher might.
    const quadratic = (path: string) => {
      let found = 0;
      for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) found += path.slice(0, i).length;
      return found;
    };
    const ratios = perCharacter(quadratic, (n) => `/${repeat("a/", n)}`);
    expect(ratios.at(-1) as number).toBeGreaterThan((ratios[0] as number) * 4);
    expect(() => expectLinear(ratios)).toThrow();
  });

  it("counts the matcher's own reads (the hooks see the hot path)", () => {
    const matcher = compileMatcher([{ method: "GET", template: "/users/{id}", route: 1 }]);
    const long = `/users/${"1".repeat(50)}`;
    matcher.match("GET", "/users/1");
    matcher.match("GET", long);
    const shortWork = work(() => matcher.match("GET", "/users/1"));
    const longWork = work(() => matcher.match("GET", long));
    expect(shortWork).toBeGreaterThan(0);
    expect(longWork).toBeGreaterThan(shortWork + 40);
  });
});
