import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitAbsoluteTarget } from "../../src/http/request-target";

// RFC 3986 Appendix B's regular expression, for the parts a server reads of an absolute-form target.
function reference(url: string): { host: string | undefined; originForm: string } | undefined {
  const m = /^[^:]*?:\/\/([^/?#]*)([^?#]*)(\?[^#]*)?/.exec(url);
  if (m === null || !url.includes("://")) return undefined;
  const authority = m[1] ?? "";
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  return { host: host === "" ? undefined : host, originForm: `${m[2] || "/"}${m[3] ?? ""}` };
}

describe("splitAbsoluteTarget (RFC 9112 §3.2.2)", () => {
  it.each([
    ["http://shop.example/users?limit=2#top", "shop.example", "/users?limit=2"],
    ["http://shop.example", "shop.example", "/"],
    ["http://shop.example?x=1", "shop.example", "/?x=1"],
    ["http://shop.example#f?x", "shop.example", "/"],
    ["http://shop.example/a#f?x", "shop.example", "/a"],
    ["http://shop.example?q=/a/b", "shop.example", "/?q=/a/b"],
    ["http://user:pw@shop.example:8080/a", "shop.example:8080", "/a"],
    ["http:///a", undefined, "/a"],
  ])("%s: host %s, origin-form %s", (url, host, originForm) => {
    expect(splitAbsoluteTarget(url)).toEqual({ host, originForm });
  });

  it("is undefined without a scheme://", () => {
    expect(splitAbsoluteTarget("/users")).toBeUndefined();
    expect(splitAbsoluteTarget("shop.example:443")).toBeUndefined();
  });

  it("agrees with RFC 3986's reference expression", () => {
    const part = fc.string({ unit: fc.constantFrom("a", "/", "?", "#", "@", ":", "%") });
    fc.assert(
      fc.property(part, part, (authority, rest) => {
        const url = `https://${authority}${rest}`;
        expect(splitAbsoluteTarget(url)).toEqual(reference(url));
      }),
    );
  });
});
