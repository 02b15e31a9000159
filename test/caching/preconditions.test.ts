import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  evaluatePreconditions,
  isFresh,
  notModifiedHeaders,
  parseEntityTagList,
  parseHttpDate,
  strongCompare,
  type Validators,
  weakCompare,
} from "../../src/caching/index";
import type { RequestHeaders } from "../../src/http/message";
import { anyFieldArb } from "./arbitraries";
import { expectCode } from "./expect-code";
import { CASES, CURRENT, describeResult, ETAG, LAST_MODIFIED, NOW } from "./precondition-cases";

describe("evaluatePreconditions: RFC 9110 §13.2.2 decision order", () => {
  for (const [group, cases] of Object.entries(CASES)) {
    describe(group, () => {
      it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
        const current = c.current === null ? undefined : (c.current ?? CURRENT);
        const result = evaluatePreconditions({ method: c.method, headers: c.headers }, current, {
          requirePrecondition: c.requirePrecondition,
          now: NOW,
        });
        expect(describeResult(result)).toBe(c.expected);
      });
    });
  }
});

describe("the 304 header fields (§15.4.5)", () => {
  const responseHeaders = {
    etag: ETAG,
    "cache-control": "max-age=60",
    "content-location": "/docs/1.json",
    date: "Wed, 01 May 2024 13:00:00 GMT",
    expires: "Wed, 01 May 2024 13:01:00 GMT",
    vary: "accept",
    "last-modified": LAST_MODIFIED,
    "content-type": "application/json",
    "content-length": "42",
    "content-encoding": "gzip",
    "set-cookie": ["a=1", "b=2"],
  };

  it("carries ETag, Cache-Control, Content-Location, Date, Expires and Vary, drops body metadata", () => {
    const result = evaluatePreconditions({ method: "GET", headers: { "if-none-match": ETAG } }, CURRENT, {
      responseHeaders,
    });
    expect(result).toEqual({
      kind: "not-modified",
      headers: {
        etag: ETAG,
        "cache-control": "max-age=60",
        "content-location": "/docs/1.json",
        date: "Wed, 01 May 2024 13:00:00 GMT",
        expires: "Wed, 01 May 2024 13:01:00 GMT",
        vary: "accept",
        "set-cookie": ["a=1", "b=2"],
      },
    });
  });

  it("keeps Last-Modified when there is no ETag", () => {
    const { etag: _, ...withoutEtag } = responseHeaders;
    expect(notModifiedHeaders(withoutEtag)["last-modified"]).toBe(LAST_MODIFIED);
  });

  it("adds the validators when no response headers are given", () => {
    const withTag = evaluatePreconditions({ method: "GET", headers: { "if-none-match": ETAG } }, CURRENT);
    expect(withTag).toEqual({ kind: "not-modified", headers: { etag: ETAG } });
    const dateOnly = evaluatePreconditions(
      { method: "HEAD", headers: { "if-modified-since": LAST_MODIFIED } },
      { lastModified: new Date(LAST_MODIFIED) },
    );
    expect(dateOnly).toEqual({ kind: "not-modified", headers: { "last-modified": LAST_MODIFIED } });
  });

  it("drops Trailer, Accept-Ranges and Content-Disposition, which describe a body or its ranges", () => {
    // §6.6.2: a 304 has no content, so no trailer section; §14.3 and RFC 6266 §4 are about the 200's content.
    const headers = notModifiedHeaders({
      ETag: ETAG,
      Trailer: "Content-Digest",
      "Accept-Ranges": "bytes",
      "Content-Disposition": 'attachment; filename="a.txt"',
      "Access-Control-Allow-Origin": "*",
    });
    expect(headers).toEqual({ ETag: ETAG, "Access-Control-Allow-Origin": "*" });
  });

  it("reads response header names case-insensitively", () => {
    expect(notModifiedHeaders({ ETag: ETAG, "Last-Modified": LAST_MODIFIED, "Content-Type": "text/plain" })).toEqual({
      ETag: ETAG,
    });
  });

  it("accepts a parsed entity tag as the current validator", () => {
    const result = evaluatePreconditions(
      { method: "PUT", headers: { "if-match": '"v2"' } },
      { etag: { weak: false, tag: "v2" } },
    );
    expect(result.kind).toBe("proceed");
  });
});

// A naive transcription of §13.1-§13.2.2 on strictly parsed fields: the law is that the fast evaluator
// agrees with it on every well-formed input.
function reference(method: string, headers: RequestHeaders, current: Validators | undefined): string {
  if (["CONNECT", "OPTIONS", "TRACE"].includes(method)) return "proceed";
  const getOrHead = method === "GET" || method === "HEAD";
  const etag = typeof current?.etag === "string" ? current.etag : undefined;
  const modified =
    typeof current?.lastModified === "string" ? parseHttpDate(current.lastModified, { now: NOW }) : undefined;
  const ifMatch = headers["if-match"];
  if (ifMatch !== undefined) {
    const list = parseEntityTagList(ifMatch);
    const holds =
      list === "*"
        ? current !== undefined
        : current !== undefined && etag !== undefined && (list ?? []).some((t) => strongCompare(t, etag));
    if (!holds) return "failed:if-match";
  } else if (headers["if-unmodified-since"] !== undefined && modified !== undefined && current !== undefined) {
    const date = parseHttpDate(headers["if-unmodified-since"], { now: NOW });
    if (date !== undefined && !(modified <= date)) return "failed:if-unmodified-since";
  }
  const ifNoneMatch = headers["if-none-match"];
  if (ifNoneMatch !== undefined) {
    const list = parseEntityTagList(ifNoneMatch);
    const holds =
      list === "*"
        ? current === undefined
        : current === undefined || etag === undefined || !(list ?? []).some((t) => weakCompare(t, etag));
    if (!holds) return getOrHead ? "not-modified" : "failed:if-none-match";
  } else if (
    getOrHead &&
    headers["if-modified-since"] !== undefined &&
    modified !== undefined &&
    current !== undefined
  ) {
    const date = parseHttpDate(headers["if-modified-since"], { now: NOW });
    if (date !== undefined && modified <= date) return "not-modified";
  }
  return "proceed";
}

const tagArb = fc.constantFrom('"v1"', '"v2"', 'W/"v1"', 'W/"v2"', '"a,b"', '""');
const dateArb = fc.constantFrom(
  "Tue, 30 Apr 2024 12:00:00 GMT",
  LAST_MODIFIED,
  "Thu, 02 May 2024 12:00:00 GMT",
  "Wednesday, 01-May-24 12:00:00 GMT",
  "Wed May  1 12:00:01 2024",
);
const listArb = fc.oneof(
  fc.constant("*"),
  fc.array(tagArb, { maxLength: 3 }).map((tags) => tags.join(", ")),
);
const methodArb = fc.constantFrom("GET", "HEAD", "PUT", "PATCH", "DELETE", "POST", "OPTIONS");
const currentArb: fc.Arbitrary<Validators | undefined> = fc.option(
  fc.record({ etag: fc.option(tagArb, { nil: undefined }), lastModified: fc.option(dateArb, { nil: undefined }) }),
  { nil: undefined },
);
const wellFormedHeaders: fc.Arbitrary<RequestHeaders> = fc.record(
  {
    "if-match": listArb,
    "if-none-match": listArb,
    "if-modified-since": dateArb,
    "if-unmodified-since": dateArb,
  },
  { requiredKeys: [] },
);

const KINDS = new Set([
  "proceed",
  "not-modified",
  "precondition-failed",
  "precondition-required",
  "malformed-precondition",
]);

describe("evaluatePreconditions: laws", () => {
  it("agrees with a naive transcription of §13.2.2 on well-formed fields", () => {
    fc.assert(
      fc.property(methodArb, wellFormedHeaders, currentArb, (method, headers, current) => {
        const result = evaluatePreconditions({ method, headers }, current, { now: NOW });
        expect(describeResult(result)).toBe(reference(method, headers, current));
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws on arbitrary header strings", () => {
    const anyField = fc.oneof(fc.string(), anyFieldArb, listArb, dateArb);
    const anyHeaders: fc.Arbitrary<RequestHeaders> = fc.record(
      {
        "if-match": anyField,
        "if-none-match": anyField,
        "if-modified-since": anyField,
        "if-unmodified-since": anyField,
      },
      { requiredKeys: [] },
    );
    const anyCurrent = fc.option(
      fc.record({
        etag: fc.option(fc.oneof(fc.string(), tagArb), { nil: undefined }),
        lastModified: fc.option(fc.oneof(dateArb, fc.integer(), fc.date({ noInvalidDate: true })), {
          nil: undefined,
        }),
      }),
      { nil: undefined },
    );
    fc.assert(
      fc.property(
        fc.oneof(methodArb, fc.string()),
        anyHeaders,
        anyCurrent,
        fc.boolean(),
        (method, headers, current, requirePrecondition) => {
          const result = evaluatePreconditions({ method, headers }, current, { requirePrecondition });
          return KINDS.has(result.kind);
        },
      ),
      { numRuns: 1000 },
    );
  });

  // Regression: a bad `now` threw only when the request carried a date, so a client's header decided between a 500 and
  // an answer.
  it("refuses a now that is not a finite number whatever the request carries", () => {
    const dated = { "if-modified-since": "Wed, 01 May 2024 12:00:00 GMT" };
    for (const now of [Number.NaN, Number.POSITIVE_INFINITY]) {
      for (const headers of [{}, { "if-none-match": '"a"' }, dated]) {
        expect(() => evaluatePreconditions({ method: "GET", headers }, CURRENT, { now })).toThrow(
          /^evaluatePreconditions: now must be a finite number/,
        );
      }
    }
  });

  // Regression: a lastModified that is no time (an ISO 8601 text from JSON, an invalid Date) was read as no validator,
  // so If-Unmodified-Since was ignored and a write the client guarded went through.
  it("refuses a lastModified that is no time, whatever the request carries", () => {
    const guarded = { "if-unmodified-since": "Wed, 01 May 2024 12:00:00 GMT" };
    for (const lastModified of ["2024-05-01T12:00:00Z", "", "yesterday", new Date(Number.NaN), Number.NaN, 1e300]) {
      for (const [method, headers] of [
        ["PUT", guarded],
        ["PUT", {}],
        ["GET", { "if-modified-since": "Wed, 01 May 2024 12:00:00 GMT" }],
      ] as const) {
        expectCode(() => evaluatePreconditions({ method, headers }, { etag: ETAG, lastModified }), "invalid_date");
      }
    }
    expect(() => evaluatePreconditions({ method: "PUT", headers: guarded }, { lastModified: "2024-05-01" })).toThrow(
      /^evaluatePreconditions: lastModified "2024-05-01" is not an HTTP-date .*new Date\(text\)/,
    );
    // What the message says to do answers the guarded write as intended: modified after the client's copy, so 412.
    const iso = new Date("2024-05-01T12:00:05Z");
    expect(evaluatePreconditions({ method: "PUT", headers: guarded }, { lastModified: iso }).kind).toBe(
      "precondition-failed",
    );
  });

  // Regression: with requirePrecondition an unguarded write answered 428 before lastModified was looked at, and
  // OPTIONS returned before it too: whether a bad validator threw depended on the request.
  it("refuses a lastModified that is no time on the 428 path and for OPTIONS too", () => {
    const current = { lastModified: "2024-05-01T12:00:00Z" };
    expectCode(
      () => evaluatePreconditions({ method: "PUT", headers: {} }, current, { requirePrecondition: true }),
      "invalid_date",
    );
    expectCode(() => evaluatePreconditions({ method: "OPTIONS", headers: {} }, current), "invalid_date");
  });

  // Regression: an etag of the wrong type was read as a tag: 42 became the field value `"undefined"`, so
  // `If-Match: "undefined"` let a write through, and null threw a bare property-read TypeError.
  it("refuses an etag that is neither a field value nor { weak, tag }, naming it", () => {
    const guarded = { "if-match": '"undefined"' };
    for (const etag of [42, null, {}, { weak: false, tag: 5 }, { tag: "v2" }, ['"v2"'], true]) {
      for (const [method, headers] of [
        ["PUT", guarded],
        ["PUT", {}],
        ["GET", { "if-none-match": '"v2"' }],
      ] as const) {
        const current = { etag } as unknown as Validators;
        expectCode(() => evaluatePreconditions({ method, headers }, current), "invalid_entity_tag");
        expect(() => evaluatePreconditions({ method, headers }, current)).toThrow(/^evaluatePreconditions: etag /);
      }
    }
    // A string or parsed tag that is not a valid entity-tag stays "no validator" (fails closed: If-Match fails).
    expect(evaluatePreconditions({ method: "PUT", headers: guarded }, { etag: "undefined" }).kind).toBe(
      "precondition-failed",
    );
    expect(evaluatePreconditions({ method: "PUT", headers: guarded }, { etag: { weak: false, tag: "a b" } }).kind).toBe(
      "precondition-failed",
    );
  });

  // Regression: a validators lookup answering null (a database's "no row") was taken for an existing resource
  // without validators: If-Match: * let a write to a missing resource through.
  it("refuses a current that is neither validators nor undefined, naming it", () => {
    for (const current of [null, 42, "v2"]) {
      expect(() =>
        evaluatePreconditions({ method: "PUT", headers: { "if-match": "*" } }, current as unknown as Validators),
      ).toThrow(/^evaluatePreconditions: current must be /);
    }
  });

  it("isFresh is exactly the not-modified outcome of a GET", () => {
    fc.assert(
      fc.property(wellFormedHeaders, tagArb, dateArb, (headers, etag, lastModified) => {
        const result = evaluatePreconditions({ method: "GET", headers }, { etag, lastModified });
        expect(isFresh(headers, { etag, "last-modified": lastModified })).toBe(result.kind === "not-modified");
      }),
      { numRuns: 1000 },
    );
  });

  it("a 304 only ever answers GET or HEAD", () => {
    fc.assert(
      fc.property(methodArb, wellFormedHeaders, currentArb, (method, headers, current) => {
        const result = evaluatePreconditions({ method, headers }, current);
        if (result.kind === "not-modified") expect(["GET", "HEAD"]).toContain(method);
      }),
      { numRuns: 1000 },
    );
  });

  describe("a malformed list member ends at its first comma; the rest of the list still counts", () => {
    // Quotes, commas, W/ and OWS, which decide where a member ends, around the current tag "v2".
    const fieldArb = fc
      .array(fc.constantFrom('"v2"', 'W/"v2"', '"x', 'W/"x', '"', ",", ", ", " ", "\t", "x", "W/", '"a,b"', "v2"), {
        maxLength: 6,
      })
      .map((pieces) => pieces.join(""));
    // On GET: a write answers a malformed field with 400 instead (see the case matrix).
    const kinds = (field: string) => ({
      ifMatch: evaluatePreconditions({ method: "GET", headers: { "if-match": field } }, CURRENT).kind,
      ifNoneMatch: evaluatePreconditions({ method: "GET", headers: { "if-none-match": field } }, CURRENT).kind,
    });

    it("a member without a comma put before a list changes neither answer", () => {
      fc.assert(
        fc.property(
          fieldArb.filter((m) => !m.includes(",") && m.trim() !== "*"),
          fieldArb,
          (member, rest) => {
            const alone = kinds(member);
            const prefixed = kinds(`${member}, ${rest}`);
            const after = kinds(rest);
            // The prefixed field lists the current tag exactly when the member or the rest does.
            expect(prefixed.ifMatch === "proceed").toBe(alone.ifMatch === "proceed" || after.ifMatch === "proceed");
            expect(prefixed.ifNoneMatch === "not-modified").toBe(
              alone.ifNoneMatch === "not-modified" || after.ifNoneMatch === "not-modified",
            );
          },
        ),
        { numRuns: 3000 },
      );
    });

    it("If-Match and If-None-Match read a field the same way: a strong tag If-Match finds, If-None-Match finds", () => {
      fc.assert(
        fc.property(fieldArb, (field) => {
          const { ifMatch, ifNoneMatch } = kinds(field);
          if (ifMatch === "proceed") expect(ifNoneMatch).toBe("not-modified");
        }),
        { numRuns: 3000 },
      );
    });
  });
});
