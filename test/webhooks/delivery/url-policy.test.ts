import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseIp } from "../../../src/http/ip-address";
import { type AddressClass, classifyAddress } from "../../../src/webhooks/delivery/address-class";
import {
  checkEndpointUrl,
  checkResolvedEndpointUrl,
  compileUrlPolicy,
  type HostResolver,
} from "../../../src/webhooks/delivery/url-policy";

const CASES: readonly [string, AddressClass][] = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["::1", "loopback"],
  ["0.0.0.0", "unspecified"],
  ["::", "unspecified"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["169.254.169.254", "link_local"],
  ["fe80::1", "link_local"],
  ["fe80::1%eth0", "link_local"],
  ["100.64.0.1", "cgnat"],
  ["100.127.255.255", "cgnat"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["ff02::1", "multicast"],
  ["fc00::1", "unique_local"],
  ["fd12:3456:789a::1", "unique_local"],
  ["::ffff:127.0.0.1", "ipv4_mapped"],
  ["::ffff:8.8.8.8", "ipv4_mapped"],
  ["::ffff:7f00:1", "ipv4_mapped"],
  // Regression: the IPv4-translated form (SIIT) of 127.0.0.1 was classed public.
  ["::ffff:0:7f00:1", "ipv4_mapped"],
  ["::ffff:0:a00:1", "ipv4_mapped"],
  ["64:ff9b::7f00:1", "loopback"],
  ["64:ff9b::8.8.8.8", "public"],
  ["2002:7f00:1::", "reserved"],
  ["255.255.255.255", "reserved"],
  ["192.0.2.1", "reserved"],
  ["2001:db8::1", "reserved"],
  // Regression: special-purpose ranges newer than RFC 6890, and space IANA never allocated, were classed public.
  ["3fff::1", "reserved"], // RFC 9637 documentation
  ["3fff:fff:ffff::1", "reserved"],
  ["5f00::1", "reserved"], // RFC 9602 SRv6 SIDs
  ["100:0:0:1::1", "reserved"], // RFC 9780 dummy prefix
  ["1::1", "reserved"], // outside 2000::/3: reserved by IETF
  ["8000::1", "reserved"],
  ["4000::1", "reserved"],
  ["2000::1", "public"],
  ["3ffe:ffff::1", "public"],
  ["3fff:1000::1", "public"],
  ["8.8.8.8", "public"],
  ["1.1.1.1", "public"],
  ["172.32.0.1", "public"],
  ["100.128.0.1", "public"],
  ["2606:4700:4700::1111", "public"],
];

describe("classifyAddress (RFC 6890 special-purpose registries)", () => {
  it.each(CASES)("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each(["localhost", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1::2::3", ":1", "1:2:3:4:5:6:7:8:9", "g::1"])(
    "%s is not an IP literal",
    (text) => {
      expect(classifyAddress(text)).toBeUndefined();
    },
  );

  it("parses every IPv4 address and its mapped IPv6 form to the same bytes", () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const bytes = parseIp(v4) as Uint8Array;
        expect(bytes).toHaveLength(4);
        expect([...(parseIp(`::ffff:${v4}`) as Uint8Array).subarray(12)]).toEqual([...bytes]);
      }),
    );
  });

  it("parses every IPv6 address fast-check generates", () => {
    fc.assert(
      fc.property(fc.ipV6(), (v6) => {
        expect(parseIp(v6)).toHaveLength(16);
      }),
    );
  });
});

describe("checkEndpointUrl at registration", () => {
  it("accepts a public https URL", () => {
    const result = checkEndpointUrl("https://hooks.example.com/in");
    expect(result.ok).toBe(true);
  });

  it("refuses plain http by default", () => {
    expect(checkEndpointUrl("http://hooks.example.com/in")).toMatchObject({ ok: false, code: "insecure_scheme" });
  });

  it("says how to allow local URLs when it refuses one a developer meets on a laptop", () => {
    for (const url of ["http://127.0.0.1:4000/hooks", "https://127.0.0.1/hooks", "https://localhost/hooks"]) {
      const check = checkEndpointUrl(url);
      expect(check.ok ? "" : check.detail, url).toContain("allowHttp: true");
    }
  });

  it.each([
    ["https://127.0.0.1/x", "loopback"],
    ["https://[::1]/x", "loopback"],
    ["https://10.1.2.3/x", "private"],
    ["https://192.168.0.10:8443/x", "private"],
    ["https://169.254.169.254/latest/meta-data", "link_local"],
    ["https://[fe80::1]/x", "link_local"],
    ["https://100.64.1.1/x", "cgnat"],
    ["https://224.0.0.5/x", "multicast"],
    ["https://[ff05::2]/x", "multicast"],
    ["https://[fd00::5]/x", "unique_local"],
    ["https://[::ffff:10.0.0.1]/x", "ipv4_mapped"],
    ["https://0.0.0.0/x", "unspecified"],
    ["https://2130706433/x", "loopback"], // WHATWG URL canonicalises to 127.0.0.1
    ["https://0x7f.1/x", "loopback"],
    ["https://localhost/x", "loopback"],
    ["https://api.localhost/x", "loopback"],
    // RFC 1034 §3.1: a trailing dot names the same host (fully qualified).
    ["https://localhost./x", "loopback"],
    ["https://LOCALHOST./x", "loopback"],
    ["https://api.localhost./x", "loopback"],
    ["https://localhost../x", "loopback"],
    ["https://127.0.0.1./x", "loopback"],
    ["https://017700000001/x", "loopback"], // octal
    ["https://[fd00:ec2::254]/latest/meta-data", "unique_local"], // AWS metadata over IPv6
    ["https://[64:ff9b::169.254.169.254]/x", "link_local"], // NAT64 of the metadata address
    ["https://[::127.0.0.1]/x", "reserved"], // deprecated IPv4-compatible
    ["https://[2002:7f00:1::]/x", "reserved"], // 6to4 of 127.0.0.1
    ["https://[3fff::1]/x", "reserved"],
    ["https://[5f00::1]/x", "reserved"],
  ])("refuses %s (%s)", (url, addressClass) => {
    expect(checkEndpointUrl(url)).toMatchObject({ ok: false, code: "forbidden_address", addressClass });
  });

  it("refuses credentials and non-URLs", () => {
    expect(checkEndpointUrl("https://u:p@example.com/")).toMatchObject({ ok: false, code: "invalid_url" });
    expect(checkEndpointUrl("not a url")).toMatchObject({ ok: false, code: "invalid_url" });
    expect(checkEndpointUrl("ftp://example.com/")).toMatchObject({ ok: false, code: "insecure_scheme" });
  });

  // Regression: port 0 was accepted at registration, although no delivery can ever connect to it.
  it.each(["https://example.com:0/", "https://example.com:00/hooks", "https://127.0.0.1:0/"])(
    "refuses port 0 in %s as invalid_url, even for an allow-listed host",
    (url) => {
      const policy = compileUrlPolicy({ allow: ["127.0.0.1"] });
      expect(checkEndpointUrl(url, policy)).toMatchObject({ ok: false, code: "invalid_url" });
      expect(checkEndpointUrl("https://example.com:8443/", policy).ok).toBe(true);
    },
  );

  it("the allow-list admits local development targets", () => {
    const policy = compileUrlPolicy({ allowHttp: true, allow: ["127.0.0.0/8", "localhost", "fd00::/8"] });
    expect(checkEndpointUrl("http://127.0.0.1:3000/hooks", policy).ok).toBe(true);
    expect(checkEndpointUrl("http://localhost:3000/hooks", policy).ok).toBe(true);
    expect(checkEndpointUrl("http://localhost.:3000/hooks", policy).ok).toBe(true);
    expect(
      checkEndpointUrl("http://Localhost.:3000/hooks", compileUrlPolicy({ allowHttp: true, allow: ["localhost."] })).ok,
    ).toBe(true);
    expect(checkEndpointUrl("https://[fd00::1]/hooks", policy).ok).toBe(true);
    expect(checkEndpointUrl("http://10.0.0.1/hooks", policy)).toMatchObject({ ok: false, addressClass: "private" });
  });

  // Regression: a Unicode entry was kept as written and never matched, since a URL's host is punycode.
  it("compares a host name entry as URLs spell hosts: IDNA to punycode, lower case", async () => {
    const loopback: HostResolver = async () => [{ address: "127.0.0.1", family: 4 }];
    for (const entry of ["bücher.test", "BÜCHER.test", "xn--bcher-kva.test"]) {
      for (const url of ["https://bücher.test/", "https://xn--bcher-kva.test/"]) {
        expect((await checkResolvedEndpointUrl(url, loopback, { allow: [entry] })).ok, `${entry} ${url}`).toBe(true);
      }
    }
    expect(await checkResolvedEndpointUrl("https://other.test/", loopback, { allow: ["bücher.test"] })).toMatchObject({
      ok: false,
      code: "forbidden_address",
    });
  });

  it("reads an entry a URL reads as an address (0x7f.1) as that one address", () => {
    const policy = compileUrlPolicy({ allow: ["0x7f.1"] });
    expect(checkEndpointUrl("https://127.0.0.1/", policy).ok).toBe(true);
    expect(checkEndpointUrl("https://127.0.0.2/", policy)).toMatchObject({ ok: false, addressClass: "loopback" });
  });

  it.each([
    "exa mple.test",
    "user@evil.test",
    "host.test:8443",
    "host.test?x",
    "host.test#x",
    "a%2eb.test",
    "fd00::g",
    // Not "xn--": Node 24's URL parser takes it as a host, Node 20's does not; the entry follows the platform's URLs.
  ])(
    "refuses the allow-list entry %j, which no URL host can be (regression: it was kept and never matched)",
    (entry) => {
      expect(() => compileUrlPolicy({ allow: [entry] })).toThrow(TypeError);
    },
  );

  it("a malformed allow-list entry is a programmer error", () => {
    expect(() => compileUrlPolicy({ allow: ["10.0.0.0/33"] })).toThrow(TypeError);
    expect(() => compileUrlPolicy({ allow: ["example.com/8"] })).toThrow(TypeError);
  });

  // Number("") is 0: "10.0.0.0/" compiled to 10.0.0.0/0 and allowed every IPv4 address, metadata service included.
  it.each([
    "10.0.0.0/",
    "192.168.1.10/",
    "10.0.0.0/8/8",
    "10.0.0.0//8",
    "10.0.0.0/ 8",
    "10.0.0.0/+8",
    "10.0.0.0/8.0",
    "10.0.0.0/0x8",
    "10.0.0.0/1e1",
    "10.0.0.0/0008",
    "10.0.0.0/-0",
    "/8",
    "fd00::/",
    "fd00::/129",
    "fd00::/ 8",
    "fd00::/8/",
    "",
  ])(
    "refuses the allow-list entry %j, naming it, rather than read it wider (regression: an empty prefix opened every address)",
    (entry) => {
      expect(() => compileUrlPolicy({ allow: [entry] })).toThrow(TypeError);
      if (entry !== "") expect(() => compileUrlPolicy({ allow: [entry] })).toThrow(entry);
    },
  );

  it("refuses an allow-list entry that is not a string", () => {
    expect(() => compileUrlPolicy({ allow: [8 as unknown as string] })).toThrow(TypeError);
  });

  it.each([
    ["10.0.0.0/8", 8],
    ["10.0.0.0/08", 8],
    ["0.0.0.0/0", 0],
    ["127.0.0.1", 32],
    ["fd00::/8", 8],
    ["::1/128", 128],
    ["::1", 128],
  ])("reads %s as a prefix of %d bits", (entry, bits) => {
    expect(compileUrlPolicy({ allow: [entry] }).ranges.map((range) => range.bits)).toEqual([bits]);
  });
});
