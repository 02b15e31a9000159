/**
 * Interop with jshttp `fresh`: on generated requests both decide "304 or not"; wherever they differ, the
 * difference must fall in one of the documented classes below, each naming the RFC rule that makes ours right.
 */
import fc from "fast-check";
import fresh from "fresh";
import { describe, expect, it } from "vitest";
import {
  evaluatePreconditions,
  isFresh,
  parseEntityTag,
  parseEntityTagList,
  parseHttpDate,
} from "../../src/caching/index";
import type { RequestHeaders } from "../../src/http/message";

type Headers = Record<string, string>;

interface DifferenceClass {
  name: string;
  section: string;
  applies: (request: Headers, response: Headers) => boolean;
}

// fresh's own test for request no-cache.
const FRESH_NO_CACHE = /(?:^|,)\s*?no-cache\s*?(?:,|$)/;
const NOW = Date.parse("2024-06-01T00:00:00Z");

function dateDiffers(value: string | undefined): boolean {
  if (value === undefined || value === "") return false;
  const ours = parseHttpDate(value, { now: NOW });
  const platform = Date.parse(value);
  return Number.isNaN(platform) ? ours !== undefined : ours !== platform;
}

function tagListIrregular(value: string | undefined): boolean {
  if (value === undefined) return false;
  const list = parseEntityTagList(value);
  // fresh splits on every comma and trims only spaces, so commas inside tags and tabs read differently.
  return list === undefined || value.includes("\t") || (list !== "*" && list.some((tag) => tag.tag.includes(",")));
}

/** The documented differences. Order is irrelevant: a disagreement must satisfy at least one. */
const DIFFERENCES: DifferenceClass[] = [
  {
    name: "request Cache-Control: no-cache does not stop an origin from answering 304",
    section:
      "RFC 9111 §5.2.1.4 (no-cache asks caches to validate with the origin) and RFC 9110 §13.2.2 (the origin evaluates the preconditions)",
    applies: (req) =>
      req["cache-control"] !== undefined &&
      FRESH_NO_CACHE.test(req["cache-control"]) &&
      Boolean(req["if-none-match"] || req["if-modified-since"]),
  },
  {
    name: "If-Match and If-Unmodified-Since are evaluated first: their failure is a 412, not a 304",
    section: "RFC 9110 §13.2.2 steps 1-2",
    applies: (req, res) =>
      evaluatePreconditions(
        { method: "GET", headers: req },
        { etag: res.etag, lastModified: res["last-modified"] },
        { now: NOW },
      ).kind === "precondition-failed",
  },
  {
    name: "an empty If-None-Match is still present, so If-Modified-Since is ignored",
    section:
      "RFC 9110 §13.1.3 (ignore If-Modified-Since when the request contains If-None-Match) and §5.6.1 (empty lists)",
    applies: (req) => req["if-none-match"] === "" && req["if-modified-since"] !== undefined,
  },
  {
    name: "entity tags are parsed by their grammar, not compared as raw strings",
    section: "RFC 9110 §8.8.3 (entity-tag, etagc includes ','), §5.6.1 (OWS includes HTAB), §13.1.2 (\"*\" alone)",
    applies: (req, res) =>
      tagListIrregular(req["if-none-match"]) || (res.etag !== undefined && parseEntityTag(res.etag) === undefined),
  },
  {
    name: "only the three HTTP-date forms are dates; anything else is ignored",
    section: "RFC 9110 §5.6.7 (HTTP-date) and §13.1.3 (ignore an invalid If-Modified-Since)",
    applies: (req, res) => dateDiffers(req["if-modified-since"]) || dateDiffers(res["last-modified"]),
  },
];

const LM = "Wed, 01 May 2024 12:00:00 GMT";
const tagPool = ['"v2"', 'W/"v2"', '"v1"', '"a,b"', "v2", '"a b"', '""'];
const requestTagPool = [
  ...tagPool,
  "*",
  "",
  '"v1", "v2"',
  '"v1",W/"v2"',
  '"v1"\t,\t"v2"',
  '"a,b", "c"',
  '"v1", *',
  ' "v2" ',
  '"v1" "v2"',
];
const datePool = [
  LM,
  "Tue, 30 Apr 2024 12:00:00 GMT",
  "Thu, 02 May 2024 12:00:00 GMT",
  "Wednesday, 01-May-24 12:00:00 GMT",
  "Wed May  1 12:00:00 2024",
  "2024-05-01T12:00:00Z",
  "wed, 01 may 2024 12:00:00 gmt",
  "Wed, 1 May 2024 12:00:00 GMT",
  `${LM}, ${LM}`,
  "Thu, 30 Feb 2024 12:00:00 GMT",
  "yesterday",
  "",
];

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const requestArb = fc
  .record({
    "if-none-match": optional(fc.constantFrom(...requestTagPool)),
    "if-modified-since": optional(fc.constantFrom(...datePool)),
    "cache-control": optional(fc.constantFrom("no-cache", "max-age=0", "public, no-cache", "no-store")),
    "if-match": optional(fc.constantFrom('"v2"', '"v1"', "*")),
    "if-unmodified-since": optional(fc.constantFrom(LM, "Tue, 30 Apr 2024 12:00:00 GMT")),
  })
  .map(compact);
const responseArb = fc
  .record({ etag: optional(fc.constantFrom(...tagPool)), "last-modified": optional(fc.constantFrom(...datePool)) })
  .map(compact);

function compact(record: Record<string, string | undefined>): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(record)) if (value !== undefined) out[name] = value;
  return out;
}

describe("isFresh vs the fresh package", () => {
  it("agrees, or differs only in a documented class", () => {
    const hits = new Map<string, number>();
    let agreements = 0;
    fc.assert(
      fc.property(requestArb, responseArb, (req, res) => {
        const ours = isFresh(req as RequestHeaders, res);
        const theirs = fresh(req, res);
        if (ours === theirs) {
          agreements++;
          return true;
        }
        const classes = DIFFERENCES.filter((c) => c.applies(req, res));
        for (const c of classes) hits.set(c.name, (hits.get(c.name) ?? 0) + 1);
        return classes.length > 0;
      }),
      { numRuns: 4000 },
    );
    expect(agreements).toBeGreaterThan(2000);
    // Every documented class is a real, observed difference, not dead code.
    for (const c of DIFFERENCES) expect(hits.get(c.name) ?? 0, c.name).toBeGreaterThan(0);
  });

  it.each<[string, Headers, Headers, boolean, boolean]>([
    ["plain If-None-Match match", { "if-none-match": '"v2"' }, { etag: '"v2"' }, true, true],
    ["weak comparison", { "if-none-match": 'W/"v2"' }, { etag: '"v2"' }, true, true],
    ["If-Modified-Since equal", { "if-modified-since": LM }, { "last-modified": LM }, true, true],
    [
      "no-cache request revalidating",
      { "if-none-match": '"v2"', "cache-control": "no-cache" },
      { etag: '"v2"' },
      true,
      false,
    ],
    ["failing If-Match", { "if-match": '"v1"', "if-none-match": '"v2"' }, { etag: '"v2"' }, false, true],
    ["comma inside a tag", { "if-none-match": '"a,b"' }, { etag: '"a,b"' }, true, false],
    ["tab as OWS", { "if-none-match": '"v1",\t"v2"' }, { etag: '"v2"' }, true, false],
    ["unquoted tags are no tags", { "if-none-match": "v2" }, { etag: "v2" }, false, true],
    ["ISO date is no HTTP-date", { "if-modified-since": "2024-05-02T00:00:00Z" }, { "last-modified": LM }, false, true],
    ["empty If-None-Match", { "if-none-match": "", "if-modified-since": LM }, { "last-modified": LM }, false, true],
  ])("%s: ours %s, fresh %s", (_name, req, res, ours, theirs) => {
    expect(isFresh(req as RequestHeaders, res)).toBe(ours);
    expect(fresh(req, res)).toBe(theirs);
  });
});
