/**
 * Interop with jshttp `fresh`: on generated requests both decide "304 or not". Wherever they differ, the
 * difference must be explained by the documented classes below, each naming the RFC rule that makes ours
 * right. A class explains a difference by its exact rule, not by a loose symptom: it rewrites the inputs
 * so that the rule it names no longer separates the two readings (e.g. entity tags written in the part of
 * the grammar that `fresh`'s string comparison reads correctly). A disagreement is explained when, with
 * every class's rewriting applied, `fresh` and ours agree; the classes whose rewriting was needed are the
 * ones that made ours differ, and a failure prints their RFC sections, or the inputs when none applies.
 */
import fc from "fast-check";
import fresh from "fresh";
import { describe, expect, it } from "vitest";
import { formatHttpDate, isFresh, parseEntityTag, parseEntityTagList, parseHttpDate } from "../../src/caching/index";
import type { RequestHeaders } from "../../src/http/message";

type Headers = Record<string, string>;

interface Case {
  req: Headers;
  res: Headers;
}

interface DifferenceClass {
  name: string;
  section: string;
  /**
   * `preserving`: the rewriting keeps the RFC meaning of the inputs (ours must answer the same), and only
   * removes a way `fresh` reads them differently. Otherwise it removes what `fresh` does not evaluate.
   */
  preserving: boolean;
  rewrite: (c: Case) => Case;
}

// fresh's own test for request no-cache.
const FRESH_NO_CACHE = /(?:^|,)\s*?no-cache\s*?(?:,|$)/;

function without(headers: Headers, ...names: string[]): Headers {
  const out = { ...headers };
  for (const name of names) delete out[name];
  return out;
}

/** List members split on the commas outside quoted text (§5.6.1), trimmed of OWS. */
function members(field: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i <= field.length; i++) {
    const c = field[i];
    if (c === '"') quoted = !quoted;
    if (i === field.length || (c === "," && !quoted)) {
      out.push(field.slice(start, i).replace(/^[ \t]+|[ \t]+$/g, ""));
      start = i + 1;
    }
  }
  return out;
}

/**
 * Entity tags rewritten into plain tokens that raw string comparison reads as §8.8.3 does: each distinct
 * opaque-tag becomes `"tN"`, separators become ", "; a member that is no entity-tag matches nothing
 * (§13.1.1, §13.1.2 with §8.8.3), so it is dropped, and a list left with no tag becomes one tag nothing
 * has; an invalid response ETag is no validator, so it is removed.
 */
function canonicalTags({ req, res }: Case): Case {
  const names = new Map<string, string>();
  const canonical = (tag: { weak: boolean; tag: string }) => {
    if (!names.has(tag.tag)) names.set(tag.tag, `t${names.size}`);
    return `${tag.weak ? "W/" : ""}"${names.get(tag.tag)}"`;
  };
  const outRes = without(res, "etag");
  const current = res.etag === undefined ? undefined : parseEntityTag(res.etag);
  if (current !== undefined) outRes.etag = canonical(current);
  const outReq = { ...req };
  for (const field of ["if-none-match", "if-match"]) {
    const value = req[field];
    if (value === undefined) continue;
    if (parseEntityTagList(value) === "*") {
      outReq[field] = "*";
      continue;
    }
    const tags = members(value).flatMap((m) => {
      const tag = m === "" ? undefined : parseEntityTag(m);
      return tag === undefined ? [] : [canonical(tag)];
    });
    // An empty list stays empty: how an empty field counts is the rule of another class.
    const empty = members(value).every((m) => m === "");
    outReq[field] = tags.length > 0 ? tags.join(", ") : empty ? "" : '"unmatched"';
  }
  return { req: outReq, res: outRes };
}

/** HTTP-dates rewritten into IMF-fixdate, and anything that is no HTTP-date removed (§5.6.7). */
function canonicalDates({ req, res }: Case): Case {
  const date = (headers: Headers, names: string[]) => {
    const out = { ...headers };
    for (const n of names) {
      const value = out[n];
      if (value === undefined) continue;
      const parsed = parseHttpDate(value);
      if (parsed === undefined) delete out[n];
      else out[n] = formatHttpDate(parsed);
    }
    return out;
  };
  return { req: date(req, ["if-modified-since", "if-unmodified-since"]), res: date(res, ["last-modified"]) };
}

/** The documented differences, each with the rewriting that takes its rule out of play. */
const DIFFERENCES: DifferenceClass[] = [
  {
    name: "request Cache-Control: no-cache does not stop an origin from answering 304",
    section:
      "RFC 9111 §5.2.1.4 (no-cache asks caches to validate with the origin) and RFC 9110 §13.2.2 (the origin evaluates the preconditions)",
    preserving: true,
    rewrite: ({ req, res }) => ({
      req:
        req["cache-control"] !== undefined && FRESH_NO_CACHE.test(req["cache-control"])
          ? without(req, "cache-control")
          : req,
      res,
    }),
  },
  {
    name: "If-Match and If-Unmodified-Since are evaluated first: their failure is a 412, not a 304",
    section: "RFC 9110 §13.2.2 steps 1-2",
    preserving: false,
    rewrite: ({ req, res }) => ({ req: without(req, "if-match", "if-unmodified-since"), res }),
  },
  {
    name: "an empty If-None-Match is still present, so If-Modified-Since is ignored",
    section:
      "RFC 9110 §13.1.3 (ignore If-Modified-Since when the request contains If-None-Match) and §5.6.1 (empty lists)",
    preserving: true,
    rewrite: ({ req, res }) => ({
      req: req["if-none-match"] === undefined ? req : without(req, "if-modified-since"),
      res,
    }),
  },
  {
    name: "entity tags are parsed by their grammar, not compared as raw strings",
    section:
      "RFC 9110 §8.8.3 (entity-tag; etagc includes ','; an invalid ETag is no validator), §5.6.1 (OWS includes HTAB), §13.1.2 (\"*\" alone)",
    preserving: true,
    rewrite: canonicalTags,
  },
  {
    name: "only the three HTTP-date forms are dates; anything else is ignored",
    section: "RFC 9110 §5.6.7 (HTTP-date) and §13.1.3 (ignore an invalid If-Modified-Since)",
    preserving: true,
    rewrite: canonicalDates,
  },
];

const ours = ({ req, res }: Case) => isFresh(req as RequestHeaders, res);
const theirs = ({ req, res }: Case) => fresh(req, res);
const applyAll = (c: Case, skip?: DifferenceClass) =>
  DIFFERENCES.reduce((acc, d) => (d === skip ? acc : d.rewrite(acc)), c);
const describeCase = (c: Case) => `request ${JSON.stringify(c.req)}, response ${JSON.stringify(c.res)}`;
const describeClass = (d: DifferenceClass) => `"${d.name}" (${d.section})`;

/**
 * The classes that made ours differ from `fresh` on `c`: those whose rewriting is needed for agreement
 * (or, when several each suffice alone, those that do). Throws, printing the inputs, when none explains it.
 */
function explain(c: Case): DifferenceClass[] {
  if (ours(applyAll(c)) !== theirs(applyAll(c))) {
    throw new Error(
      `ours says ${ours(c) ? "304" : "no 304"}, fresh ${theirs(c) ? "304" : "no 304"}, and no documented class explains it: ${describeCase(c)}`,
    );
  }
  const needed = DIFFERENCES.filter((d) => ours(applyAll(c, d)) !== theirs(applyAll(c, d)));
  if (needed.length > 0) return needed;
  return DIFFERENCES.filter((d) => ours(d.rewrite(c)) === theirs(d.rewrite(c)));
}

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
  it("agrees, or differs only by a documented class, whose RFC section a failure names", () => {
    const hits = new Map<DifferenceClass, number>();
    let agreements = 0;
    fc.assert(
      fc.property(requestArb, responseArb, (req, res) => {
        const c = { req, res };
        // A class's rewriting that claims to keep the RFC meaning must not change our answer.
        for (const d of DIFFERENCES) {
          if (d.preserving && ours(d.rewrite(c)) !== ours(c)) {
            throw new Error(`${describeClass(d)} changed our answer, so it is no explanation: ${describeCase(c)}`);
          }
        }
        if (ours(c) === theirs(c)) {
          agreements++;
          return;
        }
        for (const d of explain(c)) hits.set(d, (hits.get(d) ?? 0) + 1);
      }),
      { numRuns: 4000 },
    );
    expect(agreements).toBeGreaterThan(2000);
    // Every documented class is a real, observed difference, not dead code.
    for (const d of DIFFERENCES) expect(hits.get(d) ?? 0, `never observed: ${describeClass(d)}`).toBeGreaterThan(0);
  });

  it.each<[string, Case, string[]]>([
    [
      "a no-cache request",
      { req: { "if-none-match": '"v2"', "cache-control": "no-cache" }, res: { etag: '"v2"' } },
      ["RFC 9111 §5.2.1.4"],
    ],
    [
      "a failing If-Match",
      { req: { "if-match": '"v1"', "if-none-match": '"v2"' }, res: { etag: '"v2"' } },
      ["§13.2.2 steps 1-2"],
    ],
    ["a comma inside a tag", { req: { "if-none-match": '"a,b"' }, res: { etag: '"a,b"' } }, ["§8.8.3"]],
    ["an unquoted response ETag", { req: { "if-none-match": "v2" }, res: { etag: "v2" } }, ["§8.8.3"]],
    ["an ISO date", { req: { "if-modified-since": "2024-05-02T00:00:00Z" }, res: { "last-modified": LM } }, ["§5.6.7"]],
    [
      "If-Modified-Since beside an empty If-None-Match",
      { req: { "if-none-match": "", "if-modified-since": LM }, res: { "last-modified": LM } },
      ["§13.1.3"],
    ],
  ])("names the rule behind %s", (_name, c, sections) => {
    expect(ours(c)).not.toBe(theirs(c));
    expect(explain(c).map((d) => d.section)).toEqual([expect.stringContaining(sections[0] as string)]);
  });

  it("does not blame the tag grammar for every invalid response ETag, only where the tags decide", () => {
    // Both answer by the dates here, whatever the ETag.
    const c = { req: { "if-modified-since": LM }, res: { etag: "v2", "last-modified": LM } };
    expect(ours(c)).toBe(theirs(c));
    const changed = { req: { "if-modified-since": LM, "if-match": '"v2"' }, res: { etag: "v2", "last-modified": LM } };
    expect(explain(changed).map((d) => d.section)).toEqual([expect.stringContaining("§13.2.2 steps 1-2")]);
  });

  it("prints the inputs when no class explains a difference", () => {
    // With the classes taken away, a real difference (a failing If-Match) is left unexplained.
    const c = { req: { "if-none-match": '"v2"' }, res: { etag: '"v2"' } };
    expect(ours(c)).toBe(true);
    const original = DIFFERENCES.splice(0, DIFFERENCES.length);
    try {
      expect(() => explain({ req: { ...c.req, "if-match": '"v1"' }, res: c.res })).toThrow(
        /no documented class explains it: request \{"if-none-match":"\\"v2\\"","if-match":"\\"v1\\""\}/,
      );
    } finally {
      DIFFERENCES.push(...original);
    }
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
