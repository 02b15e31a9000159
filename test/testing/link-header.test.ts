/**
 * The Link field as the idempotency law's page counter reads it (RFC 8288 §3): quoted-strings with escapes, `rel`
 * as a space-separated list of case-insensitive relation types, several links in one field and across repeated
 * fields.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatQuotedString } from "../../src/http/quoted-string";
import { isToken } from "../../src/http/token";
import { nextLink, parseLinkHeader } from "../../src/testing/link-header";

describe("nextLink()", () => {
  const cases: [string, string, string | undefined][] = [
    // Regression: the parameters were cut at the first comma, so rel="next" after a quoted comma was missed.
    ["a comma inside a quoted title", '</p2>; title="next page, please"; rel="next"', "/p2"],
    ["an escaped quote and comma", '</p2>; title="say \\"hi\\", then"; rel=next', "/p2"],
    ["a semicolon and rel= inside a quoted title", '</p2>; title="x; rel=next"; rel="prev"', undefined],
    ["several relation types", '</p2>; rel="prev next"', "/p2"],
    ["relation types separated by several spaces", '</p2>; rel="prev   next"', "/p2"],
    ["an upper-case parameter name and relation type", "</p2>; REL=NEXT", "/p2"],
    ["a mixed-case quoted relation type", '</p2>; rel="Next"', "/p2"],
    ["BWS around =", "</p2> ; rel = next", "/p2"],
    ["several links, next not first", '</p1>; rel="prev", </p3>; rel="next", </p9>; rel="last"', "/p3"],
    ["a comma inside the target", "</things?ids=1,2>; rel=next", "/things?ids=1,2"],
    ["a second rel ignored (RFC 8288 §3.3)", '</p2>; rel="prev"; rel="next"', undefined],
    ["empty list elements", " , </p1>; rel=prev ,, </p2>; rel=next, ", "/p2"],
    ["an element that is no link, skipped", 'junk "a, b", </p2>; rel=next', "/p2"],
    ["next as a substring only", '</p2>; rel="nextpage prev-next"', undefined],
    ["no rel", '</p2>; title="next"', undefined],
    ["an unclosed quoted-string, which swallows the rest", '</p2>; title="open, </p3>; rel=next', undefined],
    ["an empty field", "", undefined],
  ];
  for (const [what, field, next] of cases) {
    it(`${what}: ${field}`, () => {
      expect(nextLink(field)).toBe(next);
    });
  }

  it("reads repeated Link field lines as one list (RFC 9110 §5.3)", () => {
    const headers = new Headers();
    headers.append("link", '</p1>; rel="prev"; title="a, b"');
    headers.append("link", '</p3>; rel="next"');
    expect(nextLink(headers.get("link"))).toBe("/p3");
  });

  it("is undefined without a Link field", () => {
    expect(nextLink(null)).toBeUndefined();
  });
});

describe("parseLinkHeader() reads back what RFC 8288 §3 lets a server write", () => {
  // A naive model of a link: its target, its parameters (rel among them), and how it is written.
  const relationType = fc.constantFrom("next", "prev", "last", "Next", "NEXT", "first", "https://rel.test/a,b;c");
  const param = fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,5}$/).filter((name) => name !== "rel"),
    // Printable ASCII, quotes, backslashes, commas and semicolons included.
    value: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 10 }),
  });
  const link = fc.record({
    target: fc.stringMatching(/^\/[a-z0-9,;=&?/]{0,10}$/),
    params: fc.array(param, { maxLength: 3 }),
    rel: fc.option(fc.array(relationType, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    relAt: fc.nat(),
    spaces: fc.constantFrom("", " ", "  ", "\t"),
  });
  type Link = typeof link extends fc.Arbitrary<infer T> ? T : never;

  const format = (l: Link): string => {
    const params = l.params.map((p) => `${p.name}=${isToken(p.value) ? p.value : formatQuotedString(p.value)}`);
    if (l.rel !== undefined) {
      const rel = l.rel.join(" ");
      params.splice(l.relAt % (params.length + 1), 0, `rel=${isToken(rel) ? rel : formatQuotedString(rel)}`);
    }
    return [`<${l.target}>`, ...params].join(`${l.spaces};${l.spaces}`);
  };

  it("finds every link, its target and its relation types, in one field or several", () => {
    fc.assert(
      fc.property(fc.array(link, { maxLength: 4 }), fc.nat(), (links, cut) => {
        const values = links.map(format);
        const headers = new Headers();
        const at = cut % (values.length + 1);
        // Repeated field lines: Headers.get joins them with ", ", as RFC 9110 §5.3 allows.
        for (const line of [values.slice(0, at), values.slice(at)]) {
          if (line.length > 0) headers.append("link", line.join(","));
        }
        const field = headers.get("link") ?? "";
        const expected = links.map((l) => ({ target: l.target, rel: (l.rel ?? []).map((t) => t.toLowerCase()) }));
        expect(parseLinkHeader(field)).toEqual(expected);
        expect(nextLink(field)).toBe(expected.find((l) => l.rel.includes("next"))?.target);
      }),
      { numRuns: 500 },
    );
  });
});
