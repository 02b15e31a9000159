/**
 * The `// result` of every one-line @example in src/caching, as written there: a wrong example (parseVary's
 * once showed one name for two) fails here. Update both together.
 */
import { describe, expect, it } from "vitest";
import { parseDeltaSeconds } from "../../src/caching/cache-control-parse";
import {
  etagFromTime,
  etagFromVersion,
  evaluateIfRange,
  formatCacheControl,
  formatEntityTag,
  formatEntityTagList,
  formatHttpDate,
  formatLastModified,
  isFresh,
  mergeVary,
  notModifiedHeaders,
  parseCacheControl,
  parseEntityTag,
  parseEntityTagList,
  parseHttpDate,
  parseVary,
  settledLastModified,
  strongCompare,
  weakCompare,
} from "../../src/caching/index";

describe("the @example results in src/caching's JSDoc", () => {
  it.each<[string, () => unknown, unknown]>([
    [
      "formatCacheControl",
      () => formatCacheControl({ public: true, maxAge: 600, staleWhileRevalidate: 30 }),
      "public, max-age=600, stale-while-revalidate=30",
    ],
    ["parseDeltaSeconds", () => parseDeltaSeconds("99999999999"), 2147483648],
    ["parseCacheControl", () => parseCacheControl("public, max-age=60"), { public: true, maxAge: 60 }],
    ["parseEntityTag", () => parseEntityTag('W/"v2"'), { weak: true, tag: "v2" }],
    ["formatEntityTag", () => formatEntityTag({ weak: false, tag: "abc" }), '"abc"'],
    [
      "parseEntityTagList",
      () => parseEntityTagList('"a", W/"b"'),
      [
        { weak: false, tag: "a" },
        { weak: true, tag: "b" },
      ],
    ],
    [
      "formatEntityTagList",
      () =>
        formatEntityTagList([
          { weak: false, tag: "a" },
          { weak: true, tag: "b" },
        ]),
      '"a", W/"b"',
    ],
    ["strongCompare", () => [strongCompare('"1"', '"1"'), strongCompare('W/"1"', '"1"')], [true, false]],
    ["weakCompare", () => weakCompare('W/"1"', '"1"'), true],
    ["etagFromVersion", () => etagFromVersion(42), 'W/"42"'],
    ["etagFromTime", () => etagFromTime(new Date("2024-01-01T00:00:00Z")), 'W/"lqu5m2o0"'],
    ["parseHttpDate", () => parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777000],
    ["formatHttpDate", () => formatHttpDate(784111777000), "Sun, 06 Nov 1994 08:49:37 GMT"],
    [
      "evaluateIfRange",
      () => evaluateIfRange({ method: "GET", headers: { range: "bytes=0-9", "if-range": '"a"' } }, { etag: '"a"' }),
      "range",
    ],
    [
      "formatLastModified",
      () => formatLastModified(new Date("2030-01-01"), Date.parse("2024-05-01T00:00:00Z")),
      "Wed, 01 May 2024 00:00:00 GMT",
    ],
    [
      "settledLastModified (not settled)",
      () => settledLastModified(Date.parse("2024-05-01T00:00:00.300Z"), Date.parse("2024-05-01T00:00:00.900Z")),
      undefined,
    ],
    [
      "settledLastModified (settled)",
      () => settledLastModified(Date.parse("2024-05-01T00:00:00.300Z"), Date.parse("2024-05-01T00:00:01Z")),
      "Wed, 01 May 2024 00:00:00 GMT",
    ],
    [
      "notModifiedHeaders",
      () => notModifiedHeaders({ etag: '"a"', "content-type": "text/plain", vary: "accept" }),
      { etag: '"a"', vary: "accept" },
    ],
    ["isFresh", () => isFresh({ "if-none-match": '"a"' }, { etag: '"a"' }), true],
    ["parseVary", () => parseVary("Accept-Encoding, accept"), ["accept-encoding", "accept"]],
    ["mergeVary", () => mergeVary("Accept", "accept-encoding", "Accept"), "accept, accept-encoding"],
  ])("%s", (_name, example, result) => {
    expect(example()).toStrictEqual(result);
  });
});
