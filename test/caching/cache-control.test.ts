import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CacheControl, formatCacheControl, parseCacheControl, parseDeltaSeconds } from "../../src/caching/index";
import { anyFieldArb, cacheControlArb } from "./arbitraries";
import { elementsWalked } from "./elements-walked";
import { expectCode } from "./expect-code";

describe("parseCacheControl (RFC 9111 §5.2)", () => {
  describe("request directives (§5.2.1)", () => {
    it.each<[string, CacheControl]>([
      ["max-age=5", { maxAge: 5 }],
      ["max-stale", { maxStale: true }],
      ["max-stale=10", { maxStale: 10 }],
      ["min-fresh=20", { minFresh: 20 }],
      ["no-cache", { noCache: true }],
      ["no-store", { noStore: true }],
      ["no-transform", { noTransform: true }],
      ["only-if-cached", { onlyIfCached: true }],
      ["stale-if-error=60", { staleIfError: 60 }],
    ])("%s", (value, expected) => {
      expect(parseCacheControl(value)).toEqual(expected);
    });
  });

  describe("response directives (§5.2.2, RFC 8246, RFC 5861)", () => {
    it.each<[string, CacheControl]>([
      ["max-age=60", { maxAge: 60 }],
      ["must-revalidate", { mustRevalidate: true }],
      ["must-understand, no-store", { mustUnderstand: true, noStore: true }],
      ["no-cache", { noCache: true }],
      ['no-cache="Set-Cookie, X-Foo"', { noCache: ["set-cookie", "x-foo"] }],
      ["no-cache=Set-Cookie", { noCache: ["set-cookie"] }],
      ["no-store", { noStore: true }],
      ["no-transform", { noTransform: true }],
      ["private", { private: true }],
      ['private="authorization"', { private: ["authorization"] }],
      ["proxy-revalidate", { proxyRevalidate: true }],
      ["public", { public: true }],
      ["s-maxage=300", { sMaxage: 300 }],
      ["immutable", { immutable: true }],
      ["stale-while-revalidate=30", { staleWhileRevalidate: 30 }],
      ["stale-if-error=600", { staleIfError: 600 }],
    ])("%s", (value, expected) => {
      expect(parseCacheControl(value)).toEqual(expected);
    });
  });

  describe("syntax", () => {
    it("names are case-insensitive and quoted arguments accepted (§5.2)", () => {
      expect(parseCacheControl('Max-Age="60", PUBLIC')).toEqual({ maxAge: 60, public: true });
    });

    it("skips empty list elements and OWS (§5.6.1)", () => {
      expect(parseCacheControl(" ,\tpublic ,, max-age=1 ,")).toEqual({ public: true, maxAge: 1 });
    });

    it("keeps unknown directives as extensions, unescaping quoted-pairs (§5.2.3)", () => {
      expect(parseCacheControl('community="UCI", x-flag, x-q="a\\"b"')).toEqual({
        extensions: { community: "UCI", "x-flag": true, "x-q": 'a"b' },
      });
    });

    it("does not let a directive named __proto__ or constructor reach the prototype", () => {
      const cc = parseCacheControl("__proto__=1, constructor, toString=2");
      const extensions = cc.extensions ?? {};
      expect(Object.keys(extensions)).toEqual(["__proto__", "constructor", "tostring"]);
      expect(Object.getOwnPropertyDescriptor(extensions, "__proto__")?.value).toBe("1");
      expect(Object.getPrototypeOf(cc)).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).constructor).toBe(Object);
    });

    it("skips a malformed unknown member up to the next comma", () => {
      expect(parseCacheControl('x="unterminated, public')).toEqual({ public: true });
      expect(parseCacheControl("x=, public")).toEqual({ public: true });
      expect(parseCacheControl("=5, public, @@, no-store")).toEqual({ public: true, noStore: true });
    });

    // RFC 9110 §5.6.4: a quoted-string is one value, its commas included; only an unterminated one cannot say where
    // it ends, and then the next comma does.
    it("regression: a comma inside a quoted string of a malformed member started a directive", () => {
      expect(parseCacheControl('private, x=1 y="a, public"')).toEqual({ private: true });
      expect(parseCacheControl('max-age=60 x="y, public", no-transform')).toEqual({ maxAge: 0, noTransform: true });
      expect(parseCacheControl('x=1 y="a\\", public", max-age=5')).toEqual({ maxAge: 5 });
      expect(parseCacheControl('x="\u0001, public", max-age=5')).toEqual({ maxAge: 5 });
      expect(parseCacheControl('"a, public", max-age=5')).toEqual({ maxAge: 5 });
      expect(parseCacheControl('x=1 y="oops, no-store')).toEqual({ noStore: true });
    });

    // §5.2: these directives take no argument; one sent anyway leaves a restricting directive restricting.
    it("a restricting flag with an argument still counts", () => {
      expect(parseCacheControl("no-store=1")).toEqual({ noStore: true });
      expect(parseCacheControl('must-revalidate="", no-transform=x')).toEqual({
        mustRevalidate: true,
        noTransform: true,
      });
    });

    // Regression: `public=x` counted as `public`, letting a shared cache store what it otherwise may not (§3.5: a
    // request with Authorization). A directive that only grants, sent with an argument none of them allows (§5.2),
    // grants nothing: the most restrictive reading (§4.2.1), whichever occurrence comes first.
    it.each<[string, CacheControl]>([
      ["public=x", {}],
      ['public="", max-age=60', { maxAge: 60 }],
      ["public=, max-age=60", { maxAge: 60 }],
      ["immutable=x", {}],
      ["max-age=60, immutable=1", { maxAge: 60 }],
      // §5.2.2.3: must-understand lets a cache that knows the status code ignore no-store.
      ["must-understand=1, no-store", { noStore: true }],
      ["public, public=x", {}],
      ["PUBLIC=x, public", {}],
      ["immutable, Immutable=1, immutable", {}],
    ])("a granting flag with an argument grants nothing: %s", (value, expected) => {
      expect(parseCacheControl(value)).toEqual(expected);
    });

    it("returns an empty object for an absent field", () => {
      expect(parseCacheControl(undefined)).toEqual({});
      expect(parseCacheControl("")).toEqual({});
    });
  });

  describe("invalid and duplicate values take the most restrictive reading (§4.2.1)", () => {
    it.each<[string, string, CacheControl]>([
      ["non-integer max-age is stale", "max-age=1.5", { maxAge: 0 }],
      ["negative max-age is stale", "max-age=-1", { maxAge: 0 }],
      ["empty max-age is stale", "max-age=", { maxAge: 0 }],
      ["max-age without argument is stale", "max-age", { maxAge: 0 }],
      ["a broken max-age member is stale", "max-age=6 0", { maxAge: 0 }],
      ["conflicting max-age is stale", "max-age=60, max-age=120", { maxAge: 0 }],
      ["repeated equal max-age is kept", "max-age=60, max-age=60", { maxAge: 60 }],
      // §5.2: directive names are case-insensitive, so these are duplicates too.
      ["conflicting max-age in two spellings is stale", "Max-Age=5, max-age=10", { maxAge: 0 }],
      ["repeated equal max-age in two spellings is kept", "MAX-AGE=5, max-age=5", { maxAge: 5 }],
      ["a valid max-age after an invalid one is still stale", "max-age=abc, max-age=60", { maxAge: 0 }],
      // §4.2.1 and §5.2: one bad member costs only itself; the other directives apply.
      [
        "an invalid max-age is stale and the other directives apply",
        "public, max-age=abc, no-transform",
        { public: true, maxAge: 0, noTransform: true },
      ],
      ["a malformed unknown member costs only itself", "max-age=60, x y, public", { maxAge: 60, public: true }],
      ["conflicting s-maxage is stale", "s-maxage=1, s-maxage=2", { sMaxage: 0 }],
      ["invalid stale-while-revalidate allows none", "stale-while-revalidate=soon", { staleWhileRevalidate: 0 }],
      ["duplicate stale-if-error takes the smaller", "stale-if-error=60, stale-if-error=10", { staleIfError: 10 }],
      ["duplicate min-fresh takes the larger", "min-fresh=5, min-fresh=50", { minFresh: 50 }],
      ["invalid min-fresh is dropped", "min-fresh=x", {}],
      ["duplicate max-stale takes the smaller", "max-stale=50, max-stale, max-stale=5", { maxStale: 5 }],
      ["invalid max-stale accepts no staleness", "max-stale=x", {}],
      ["unqualified no-cache wins over a list", 'no-cache="a", no-cache', { noCache: true }],
      ["qualified no-cache lists merge", 'no-cache="a", no-cache="b, A"', { noCache: ["a", "b"] }],
      ["a malformed private list is unqualified", 'private="a b"', { private: true }],
      ["an unterminated private list is unqualified", 'private="a', { private: true }],
      // Regression: an empty token argument was read as an empty list, so nothing was private.
      [
        "an empty private argument is unqualified (token = 1*tchar)",
        "private=, max-age=60",
        { private: true, maxAge: 60 },
      ],
      ["an empty no-cache argument is unqualified", "no-cache= , public", { noCache: true, public: true }],
      // Regression: `private=""` read as an empty list, so nothing was private. §5.2.2.7 and §5.2.2.4 qualify the
      // directive only "with one or more field names": a list naming none is the unqualified directive, as `private=`.
      ["an empty quoted private list is unqualified", 'private=""', { private: true }],
      ["a private list of empty elements is unqualified", 'private=" , ,"', { private: true }],
      ["an empty quoted no-cache list is unqualified", 'no-cache="", max-age=60', { noCache: true, maxAge: 60 }],
      ["an empty private list after a qualified one is unqualified", 'private="a", private=""', { private: true }],
      ["a private list trims OWS only (§5.6.3)", 'private=" a ,\tb\t"', { private: ["a", "b"] }],
      ["a private list name ending in NBSP is malformed", 'private="a\u00a0"', { private: true }],
      ["a no-cache list name after U+FEFF is malformed", 'no-cache="\ufeffa"', { noCache: true }],
      ["extensions keep the first occurrence", "x=1, x=2", { extensions: { x: "1" } }],
    ])("%s: %s", (_name, value, expected) => {
      expect(parseCacheControl(value)).toEqual(expected);
    });
  });

  it("never throws on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), anyFieldArb), (value) => typeof parseCacheControl(value) === "object"),
      { numRuns: 1000 },
    );
  });

  describe("field-name lists: work linear in the number of names (a Set copied per repeated no-cache was quadratic)", () => {
    const names = (count: number) => Array.from({ length: count }, (_, i) => `h${i}`);
    // 8 times the names (about 12 KB, then 100 KB) must walk at most about 8 times the elements.
    const SMALL = 1_750;
    const LARGE = 14_000;
    const oneList = (count: number) => `no-cache="${names(count).join(", ")}"`;
    const repeated = (directive: string, count: number) =>
      names(count)
        .map((n) => `${directive}="${n}"`)
        .join(", ");

    it("one no-cache list", () => {
      expect(oneList(LARGE).length).toBeGreaterThan(100_000);
      expect(parseCacheControl(`${oneList(LARGE)}, ${oneList(LARGE).toUpperCase()}`)).toEqual({
        noCache: names(LARGE),
      });
      const small = elementsWalked(() => parseCacheControl(oneList(SMALL)));
      expect(elementsWalked(() => parseCacheControl(oneList(LARGE)))).toBeLessThan(12 * small);
    });

    it.each(["no-cache", "private"])("a repeated %s", (directive) => {
      const key = directive === "private" ? "private" : "noCache";
      expect(parseCacheControl(`${repeated(directive, LARGE)}, ${repeated(directive, 10)}`)).toEqual({
        [key]: names(LARGE),
      });
      const small = elementsWalked(() => parseCacheControl(repeated(directive, SMALL)));
      expect(elementsWalked(() => parseCacheControl(repeated(directive, LARGE)))).toBeLessThan(12 * small);
    });
  });
});

describe("parseDeltaSeconds (§1.2.2)", () => {
  it.each([
    ["0", 0],
    ["007", 7],
    ["2147483647", 2_147_483_647],
    ["2147483648", 2_147_483_648],
    ["2147483649", 2_147_483_648],
    ["99999999999999999999999", 2_147_483_648],
  ])("%s → %d", (value, expected) => {
    expect(parseDeltaSeconds(value)).toBe(expected);
  });

  it.each([[""], ["-1"], ["1.0"], ["1e3"], [" 1"], ["0x10"]])("rejects %j", (value) => {
    expect(parseDeltaSeconds(value)).toBeUndefined();
  });
});

describe("formatCacheControl", () => {
  it("builds a response policy", () => {
    expect(formatCacheControl({ public: true, maxAge: 600, staleWhileRevalidate: 30, immutable: true })).toBe(
      "public, immutable, max-age=600, stale-while-revalidate=30",
    );
    expect(formatCacheControl({ private: ["Authorization"], noCache: ["set-cookie"], sMaxage: 0 })).toBe(
      'private="authorization", no-cache="set-cookie", s-maxage=0',
    );
  });

  it("builds a request policy", () => {
    expect(formatCacheControl({ maxStale: true, minFresh: 5, onlyIfCached: true, noCache: true })).toBe(
      "no-cache, max-stale, min-fresh=5, only-if-cached",
    );
  });

  it("quotes extension arguments only when they are not tokens", () => {
    expect(formatCacheControl({ extensions: { a: "tok", b: 'x "y"', c: true } })).toBe('a=tok, b="x \\"y\\"", c');
  });

  it("omits false flags", () => {
    expect(formatCacheControl({ public: false, noStore: false, maxAge: 1 })).toBe("max-age=1");
  });

  it.each<[string, CacheControl, string]>([
    ["negative delta", { maxAge: -1 }, "invalid_cache_control"],
    ["fractional delta", { sMaxage: 1.5 }, "invalid_cache_control"],
    ["NaN delta", { staleIfError: Number.NaN }, "invalid_cache_control"],
    ["extension named like a standard directive", { extensions: { "max-age": "1" } }, "invalid_cache_control"],
    ["extension name that is not a token", { extensions: { "a b": true } }, "invalid_cache_control"],
    ["argument with a control character", { extensions: { a: "\u0000" } }, "invalid_cache_control"],
    ["field name that is not a token", { noCache: ["a b"] }, "invalid_field_name"],
    // `private=""` would read back as the unqualified directive (RFC 9111 §5.2.2.7), not as "no field private".
    ["private list naming no field", { private: [] }, "invalid_cache_control"],
    ["no-cache list naming no field", { noCache: [] }, "invalid_cache_control"],
  ])("refuses a %s", (_name, directives, code) => {
    expectCode(() => formatCacheControl(directives), code as "invalid_cache_control");
  });

  it("parseCacheControl(formatCacheControl(x)) is x", () => {
    fc.assert(
      fc.property(cacheControlArb, (cc) => {
        expect(parseCacheControl(formatCacheControl(cc))).toEqual(cc);
      }),
      { numRuns: 1000 },
    );
  });
});
