import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { removeDotSegments } from "../../src/http/dot-segments";

// The WHATWG URL parser, as a Fetch runtime builds `request.url`: the reference the node adapter must agree with.
const whatwg = (path: string) => new URL(`http://h${path}`).pathname;

describe("removeDotSegments (RFC 3986 §5.2.4, WHATWG URL path state)", () => {
  it.each([
    ["/files/../../etc/passwd", "/etc/passwd"],
    ["/files/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd"],
    ["/items/%2E%2E", "/"],
    ["/a/../b", "/b"],
    ["/a/./b", "/a/b"],
    ["/a/.", "/a/"],
    ["/a/..", "/"],
    ["/..", "/"],
    ["/.", "/"],
    ["/a/.%2E/b", "/b"],
    ["/a/%2e./b", "/b"],
    ["/a//../b", "/a/b"],
    ["/a/..b/.c/c./%2e%2f", "/a/..b/.c/c./%2e%2f"],
    ["/.well-known/x", "/.well-known/x"],
    ["/a%20b/c%2Fd", "/a%20b/c%2Fd"],
    ["/", "/"],
    ["*", "*"],
  ])("%s → %s", (path, expected) => {
    expect(removeDotSegments(path)).toBe(expected);
    if (path.startsWith("/")) expect(whatwg(path)).toBe(expected);
  });

  it("returns an ordinary path itself, without copying", () => {
    const path = "/users/u_1/orders";
    expect(removeDotSegments(path)).toBe(path);
  });

  it("agrees with the WHATWG URL parser on paths of dots, slashes and percent-encoded dots and slashes", () => {
    // Only characters the URL parser leaves as they are, so dot handling is the one thing that can differ.
    const path = fc
      .array(fc.constantFrom("a", "/", ".", "%2e", "%2E", "%2f", "%2F", "%20"), { maxLength: 16 })
      .map((parts) => `/${parts.join("")}`);
    fc.assert(
      fc.property(path, (p) => {
        expect(removeDotSegments(p)).toBe(whatwg(p));
      }),
      { numRuns: 2_000 },
    );
  });
});
