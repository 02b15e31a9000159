import { isIPv4, isIPv6 } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isAuthority, isHostValue, splitAbsoluteTarget } from "../../src/http/request-target";

// RFC 3986 Appendix B's regular expression, for the parts a server reads of an absolute-form target.
function reference(url: string): { authority: string; host: string | undefined; originForm: string } | undefined {
  const m = /^[^:]*?:\/\/([^/?#]*)([^?#]*)(\?[^#]*)?/.exec(url);
  if (m === null || !url.includes("://")) return undefined;
  const authority = m[1] ?? "";
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  return { authority, host: host === "" ? undefined : host, originForm: `${m[2] || "/"}${m[3] ?? ""}` };
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
    expect(splitAbsoluteTarget(url)).toEqual({ ...reference(url), host, originForm });
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

describe('isAuthority and isHostValue (RFC 3986 §3.2; RFC 9110 §7.2: Host = uri-host [ ":" port ])', () => {
  it.each([
    "shop.example",
    "shop.example:8443",
    "127.0.0.1:3000",
    // RFC 3986 §3.2.2: not an IPv4address (an octet over 255), so a reg-name, which any digits and dots are.
    "999.1.1.1",
    "256.256.256.256:80",
    "a_b.local",
    "xn--r8jz45g.jp",
    "ex%41mple",
    "!$&'()*+,;=",
    "",
    "x:",
    ":80",
    "x:65535",
    "[::1]",
    "[::1]:3000",
    "[2001:db8::7]",
    "[::ffff:192.0.2.1]:80",
    "[1:2:3:4:5:6:7:8]",
    "[v7.a:b]",
  ])("a Host may be %j", (value) => {
    expect(isHostValue(value)).toBe(true);
    expect(isAuthority(value)).toBe(true);
  });

  it.each([
    ["a, b", "two Host lines joined by node:http"],
    [", ", "two empty Host lines joined"],
    ["a b", "a space"],
    ["a/b", "a path"],
    ["[::1", "an unclosed IP-literal"],
    ["::1", "an IPv6 address outside brackets"],
    ["x:99999", "a port above 65535"],
    ["x:8o", "a port with a letter"],
    ["x:y:z", "two colons outside brackets"],
    ["%zz", "a malformed percent-encoding"],
    ["例え.jp", "a host not in ASCII (an IDN goes as its A-label)"],
    ["[1:2:3:4:5:6:7:8:9]", "nine IPv6 pieces"],
    ["[1::2::3]", "two elisions"],
    ["[1:2:3:4:5:6:7::8]", "eight pieces and an elision"],
    ["[12345::]", "a piece of five hex digits"],
    ["[1.2.3.4::]", "an IPv4 part before the elision"],
    ["[::01.2.3.4]", "an IPv4 octet with a leading zero"],
    ["[fe80::1%25en0]", "a zone identifier (RFC 6874, not RFC 3986)"],
    ["[]", "an empty IP-literal"],
  ])("a Host may not be %j: %s", (value) => {
    expect(isHostValue(value)).toBe(false);
    expect(isAuthority(value)).toBe(false);
  });

  it.each([
    ["user:pw@shop.example:8080", true],
    ["@shop.example", true],
    // A URL parser takes it too (as a%40b@c): the userinfo is not checked here (the adapters refuse any).
    ["a@b@c", true],
    ["user@[::1", false],
    ["user@x:99999", false],
  ])("an authority with a userinfo, %j: %s", (authority, valid) => {
    expect(isAuthority(authority)).toBe(valid);
    // Never a Host: RFC 9110 §7.2 has no userinfo there.
    expect(isHostValue(authority)).toBe(false);
  });

  it("takes an IP-literal exactly when node:net takes the IPv6 address in it", () => {
    const address = fc.string({ unit: fc.constantFrom("0", "1", "f", "ffff", ":", "::", ".", "255", "256", "01") });
    fc.assert(
      fc.property(address, (text) => {
        expect(isHostValue(`[${text}]`)).toBe(isIPv6(text) || /^v[\dA-Fa-f]+\./i.test(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it("takes a dotted last part of an IP-literal exactly when node:net takes it as an IPv4 address", () => {
    const octet = fc.oneof(fc.nat({ max: 300 }).map(String), fc.constantFrom("00", "01", "010", ""));
    fc.assert(
      fc.property(fc.array(octet, { minLength: 2, maxLength: 5 }), (octets) => {
        const v4 = octets.join(".");
        expect(isHostValue(`[::ffff:${v4}]`)).toBe(isIPv4(v4));
      }),
    );
  });

  it("takes every port of up to 5 digits exactly when it names a TCP port, zero-padded or not", () => {
    for (let port = 0; port < 100_000; port++) {
      for (const text of [String(port), String(port).padStart(5, "0")]) {
        if (isHostValue(`127.0.0.1:${text}`) !== port <= 65_535) throw new Error(`port ${text}`);
      }
    }
  });

  it("takes a port exactly when it is digits naming a TCP port (0..65535)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat({ max: 200_000 }).map(String), fc.stringMatching(/^[\d a-z]{0,6}$/)), (port) => {
        expect(isHostValue(`shop.example:${port}`)).toBe(/^\d*$/.test(port) && (port === "" || Number(port) <= 65_535));
      }),
    );
  });
});
