/** fast-check arbitraries for the caching grammar (RFC 9110 §8.8.3, RFC 9111 §5.2). */
import fc from "fast-check";
import { CACHE_CONTROL_DIRECTIVES } from "../../src/caching/cache-control";
import type { CacheControl, EntityTag, EntityTagList } from "../../src/caching/index";

const ETAGC: string[] = ["!"];
for (let c = 0x23; c <= 0x7e; c++) ETAGC.push(String.fromCharCode(c));
for (let c = 0x80; c <= 0xff; c++) ETAGC.push(String.fromCharCode(c));

/** etagc (§8.8.3), obs-text included. */
export const etagcChar = fc.constantFrom(...ETAGC);

export const entityTagArb: fc.Arbitrary<EntityTag> = fc.record({
  weak: fc.boolean(),
  tag: fc.string({ unit: etagcChar, maxLength: 12 }),
});

export const entityTagListArb: fc.Arbitrary<EntityTagList> = fc.oneof(
  { weight: 1, arbitrary: fc.constant("*" as const) },
  { weight: 6, arbitrary: fc.array(entityTagArb, { maxLength: 5 }) },
);

/** OWS, possibly empty (§5.6.3). */
export const owsArb = fc.string({ unit: fc.constantFrom(" ", "\t"), maxLength: 2 });

const TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz".split("");
export const lowerTokenArb = fc.string({ unit: fc.constantFrom(...TCHARS), minLength: 1, maxLength: 10 });

const KNOWN: ReadonlySet<string> = new Set(CACHE_CONTROL_DIRECTIVES);

// quoted-string content: HTAB / SP / VCHAR / obs-text (§5.6.4).
const QUOTABLE: string[] = ["\t"];
for (let c = 0x20; c <= 0x7e; c++) QUOTABLE.push(String.fromCharCode(c));
const argumentArb = fc.string({ unit: fc.constantFrom(...QUOTABLE), maxLength: 10 });

const deltaArb = fc.integer({ min: 0, max: 2 ** 31 });
// At least one: a list naming none parses as the unqualified directive (RFC 9111 §5.2.2.7).
const namesArb = fc.uniqueArray(lowerTokenArb, { minLength: 1, maxLength: 3 });

/** Canonical Cache-Control values: what `parseCacheControl` returns for a well-formed field. */
export const cacheControlArb: fc.Arbitrary<CacheControl> = fc
  .record(
    {
      maxAge: deltaArb,
      sMaxage: deltaArb,
      maxStale: fc.oneof(deltaArb, fc.constant(true as const)),
      minFresh: deltaArb,
      noCache: fc.oneof(fc.constant(true as const), namesArb),
      noStore: fc.constant(true),
      noTransform: fc.constant(true),
      onlyIfCached: fc.constant(true),
      mustRevalidate: fc.constant(true),
      mustUnderstand: fc.constant(true),
      private: fc.oneof(fc.constant(true as const), namesArb),
      proxyRevalidate: fc.constant(true),
      public: fc.constant(true),
      immutable: fc.constant(true),
      staleWhileRevalidate: deltaArb,
      staleIfError: deltaArb,
      extensions: fc.dictionary(
        lowerTokenArb.filter((name) => !KNOWN.has(name)),
        fc.oneof(fc.constant(true as const), argumentArb),
        { minKeys: 1, maxKeys: 3 },
      ),
    },
    { requiredKeys: [] },
  )
  .map((cc) => cc as CacheControl);

/** Any UTF-16 code unit from controls through Latin-1 and beyond: cheaper than fast-check's "binary" unit. */
export const anyFieldArb = fc.string({
  unit: fc.integer({ min: 0, max: 0x17f }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
