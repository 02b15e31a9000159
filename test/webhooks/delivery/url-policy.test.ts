import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseIp } from "../../../src/http/ip-address";
import { createRouter } from "../../../src/routing/index";
import { type AddressClass, classifyAddress } from "../../../src/webhooks/delivery/address-class";
import { createEndpointAdmin } from "../../../src/webhooks/delivery/endpoint-admin";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import {
  checkEndpointUrl,
  checkResolvedAddresses,
  checkResolvedEndpointUrl,
  compileUrlPolicy,
  type HostResolver,
} from "../../../src/webhooks/delivery/url-policy";
import { registerEndpoint } from "./register-endpoint";

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

  // RFC 9110 §4.2.4: userinfo is deprecated in http(s) URIs; any part of it is refused, even for an allowed host.
  it("refuses credentials and non-URLs", () => {
    expect(checkEndpointUrl("https://u:p@example.com/")).toMatchObject({ ok: false, code: "invalid_url" });
    expect(checkEndpointUrl("https://u@example.com/")).toMatchObject({ ok: false, code: "invalid_url" });
    expect(checkEndpointUrl("https://:p@example.com/")).toMatchObject({ ok: false, code: "invalid_url" });
    const local = compileUrlPolicy({ allow: ["localhost", "127.0.0.1"] });
    expect(checkEndpointUrl("https://u:p@localhost/", local)).toMatchObject({ ok: false, code: "invalid_url" });
    expect(checkEndpointUrl("https://u@127.0.0.1/", local)).toMatchObject({ ok: false, code: "invalid_url" });
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

// A provider's own public surface: public addresses and names it must never POST to, and the ports it delivers to.
const PROVIDER_RANGE = "93.184.216.0/24";
const PROVIDER_ADDRESS = "93.184.216.34";
const CUSTOMER_ADDRESS = "151.101.1.69";
const DENY = ["api.provider.example", PROVIDER_RANGE, "metadata.google.internal", "2606:2800:220::/48"];

// No real DNS: names resolve to what the table says.
function table(entries: Record<string, string[]>, calls: string[] = []): HostResolver {
  return async (hostname) => {
    calls.push(hostname);
    const addresses = entries[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

describe("deny: public destinations the provider refuses (SSRF against its own surface)", () => {
  const resolve = table({
    "api.provider.example": [PROVIDER_ADDRESS],
    "alias.attacker.example": [CUSTOMER_ADDRESS, PROVIDER_ADDRESS],
    "hooks.customer.example": [CUSTOMER_ADDRESS],
    "v6.attacker.example": ["2606:2800:220:1::1"],
  });

  // Regression: with only `allow`, a URL on the provider's own public API host was accepted, and every delivery
  // to it was a POST from the provider's workers to its own admin API.
  it("refuses the provider's own public API host, which the policy could not refuse before", async () => {
    const url = "https://api.provider.example/admin/users";
    expect((await checkResolvedEndpointUrl(url, resolve)).ok).toBe(true);
    expect(await checkResolvedEndpointUrl(url, resolve, { deny: DENY })).toMatchObject({
      ok: false,
      code: "forbidden_address",
      addressClass: "denied",
    });
  });

  it.each([
    "https://api.provider.example/admin",
    "https://API.Provider.Example./admin", // RFC 1034 §3.1: the same name, fully qualified
    "https://metadata.google.internal/computeMetadata/v1/",
    `https://${PROVIDER_ADDRESS}/admin`,
    "https://93.184.216.1:8443/",
    "https://[2606:2800:220:1::1]/",
    `https://[::ffff:${PROVIDER_ADDRESS}]/`, // IPv4-mapped spelling of a denied IPv4 address
  ])("refuses %s by its host alone, without DNS", (url) => {
    expect(checkEndpointUrl(url, { deny: DENY })).toMatchObject({
      ok: false,
      code: "forbidden_address",
      addressClass: "denied",
    });
  });

  it("refuses a name that resolves to a denied address (any of its addresses), naming the class, not the address", async () => {
    const checked = await checkResolvedEndpointUrl("https://alias.attacker.example/", resolve, { deny: DENY });
    expect(checked).toMatchObject({ ok: false, code: "forbidden_address", addressClass: "denied" });
    expect(checked.ok ? "" : checked.detail).not.toContain(PROVIDER_ADDRESS);
    expect(await checkResolvedEndpointUrl("https://v6.attacker.example/", resolve, { deny: DENY })).toMatchObject({
      addressClass: "denied",
    });
  });

  it("refuses a denied address in its NAT64 spelling (64:ff9b::/96 reaches the IPv4 address it embeds)", () => {
    expect(
      checkResolvedAddresses("nat64.example", [{ address: "64:ff9b::5db8:d822", family: 6 }], { deny: DENY }),
    ).toMatchObject({ code: "forbidden_address", addressClass: "denied" });
    expect(
      checkResolvedAddresses("nat64.example", [{ address: "64:ff9b::9765:145", family: 6 }], { deny: DENY }),
    ).toBeUndefined();
  });

  // Regression: only the IPv4-mapped, -translated and NAT64 spellings of a denied IPv4 address were denied. The 6to4
  // and Teredo ones were refused only as "reserved", so an `allow` covering them (or an allow-listed name resolving to
  // one, to which only `deny` applies) reached the denied address.
  describe("6to4 and Teredo spellings of a denied IPv4 address", () => {
    // 93.184.216.34 is 5db8:d822; Teredo carries the client's address with every bit flipped: a247:27dd.
    const denied = [
      "2002:5db8:d822::1", // RFC 3056 §2: 2002:V4ADDR::/48
      "2002:5db8:d822:ffff:1:2:3:4", // any address of the site's /48
      "2001:0:4136:e378:8000:63bf:a247:27dd", // RFC 4380 §4: 2001:0000::/32, the client's IPv4 XOR 0xffffffff last
    ];
    // 151.101.1.69 (9765:0145; flipped 689a:feba), and a Teredo server address that is the denied one: the packets go
    // to the client's address, not to the server's (RFC 4380 §5.4).
    const reached = [
      "2002:9765:145::1",
      "2001:0:4136:e378:8000:63bf:689a:feba",
      "2001:0:5db8:d822:8000:63bf:689a:feba",
    ];
    const policy = compileUrlPolicy({ allow: ["2002::/16", "2001::/32", "tunnel.example"], deny: DENY });

    it.each(denied)("refuses %s as denied, though allow holds it", (address) => {
      expect(checkEndpointUrl(`https://[${address}]/`, policy)).toMatchObject({
        ok: false,
        code: "forbidden_address",
        addressClass: "denied",
      });
      expect(checkEndpointUrl(`https://[${address}]/`, { deny: DENY })).toMatchObject({ addressClass: "denied" });
      expect(checkResolvedAddresses("tunnel.example", [{ address, family: 6 }], policy)).toMatchObject({
        addressClass: "denied",
      });
    });

    it.each(reached)("accepts %s, which reaches an address deny does not hold, when allow holds it", (address) => {
      expect(checkEndpointUrl(`https://[${address}]/`, policy).ok).toBe(true);
      expect(checkResolvedAddresses("tunnel.example", [{ address, family: 6 }], policy)).toBeUndefined();
    });

    it("denies the whole spelling of a denied IPv4 range, and only that", () => {
      const range = compileUrlPolicy({ allow: ["2002::/16", "2001::/32"], deny: ["10.0.0.0/8"] });
      const teredo = (v4: number) => {
        const flipped = (~v4 >>> 0).toString(16).padStart(8, "0");
        return `2001:0:4136:e378:8000:63bf:${flipped.slice(0, 4)}:${flipped.slice(4)}`;
      };
      fc.assert(
        fc.property(
          // Half inside 10.0.0.0/8, where a uniform draw would seldom land.
          fc.oneof(fc.integer({ min: 0x0a000000, max: 0x0affffff }), fc.integer({ min: 0, max: 0xffffffff })),
          (v4) => {
            const hex = v4.toString(16).padStart(8, "0");
            const inTen = v4 >>> 24 === 10;
            for (const spelling of [`2002:${hex.slice(0, 4)}:${hex.slice(4)}::1`, teredo(v4)]) {
              const refusal = checkResolvedAddresses("h", [{ address: spelling, family: 6 }], range);
              expect(
                refusal !== undefined && "addressClass" in refusal && refusal.addressClass === "denied",
                spelling,
              ).toBe(inTen);
            }
          },
        ),
      );
    });
  });

  it("accepts what it does not name: host names are exact, ranges are ranges", async () => {
    const policy = compileUrlPolicy({ deny: DENY });
    expect((await checkResolvedEndpointUrl("https://hooks.customer.example/in", resolve, policy)).ok).toBe(true);
    expect(checkEndpointUrl("https://status.api.provider.example/", policy).ok).toBe(true);
    expect(checkEndpointUrl("https://93.184.217.1/", policy).ok).toBe(true);
  });

  it("wins over allow: an address, a range or a name both lists hold is refused", async () => {
    const policy = compileUrlPolicy({
      allowHttp: true,
      allow: ["10.0.0.0/8", "dev.internal", "api.provider.example", PROVIDER_ADDRESS],
      deny: ["10.1.0.0/16", "api.provider.example", PROVIDER_RANGE],
    });
    expect(checkEndpointUrl("http://10.2.0.5/", policy).ok).toBe(true);
    expect(checkEndpointUrl("http://10.1.0.5/", policy)).toMatchObject({ addressClass: "denied" });
    expect(checkEndpointUrl(`https://${PROVIDER_ADDRESS}/`, policy)).toMatchObject({ addressClass: "denied" });
    expect(checkEndpointUrl("https://api.provider.example/", policy)).toMatchObject({ addressClass: "denied" });
    // An allow-listed name is resolved when `deny` holds addresses: it may point into a denied range.
    const dev = (address: string) => table({ "dev.internal": [address] });
    expect((await checkResolvedEndpointUrl("http://dev.internal/", dev("10.2.0.5"), policy)).ok).toBe(true);
    expect(await checkResolvedEndpointUrl("http://dev.internal/", dev("10.1.0.5"), policy)).toMatchObject({
      code: "forbidden_address",
      addressClass: "denied",
    });
  });

  it("does not resolve an allow-listed name when deny holds no address", async () => {
    const calls: string[] = [];
    const policy = { allowHttp: true, allow: ["dev.internal"], deny: ["api.provider.example"] };
    expect((await checkResolvedEndpointUrl("http://dev.internal:3000/", table({}, calls), policy)).ok).toBe(true);
    expect(calls).toEqual([]);
  });

  it("the endpoint admin refuses a denied destination on create and on a URL change, with resolve: false too", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const admin = createEndpointAdmin({ endpoints, queue, resolve, urlPolicy: { deny: DENY } });
    const input = (url: string) => ({ url, enabled_events: ["*"] });
    // Denied by what the name resolves to: told as a name that does not resolve (no oracle of the provider's DNS).
    expect(await admin.create(input("https://alias.attacker.example/in"))).toMatchObject({
      ok: false,
      code: "unresolvable_host",
    });
    const created = await admin.create(input("https://hooks.customer.example/in"));
    if (!created.ok) throw new Error("create failed");
    expect(await admin.update(created.value.id, { url: "https://api.provider.example/admin" })).toMatchObject({
      code: "forbidden_address",
      addressClass: "denied",
    });
    const offline = createEndpointAdmin({ endpoints, queue, resolve: false, urlPolicy: { deny: DENY } });
    expect(await offline.create(input("https://metadata.google.internal/"))).toMatchObject({ addressClass: "denied" });
  });
});

describe("ports: the destination ports deliveries may use", () => {
  it.each([
    "https://hooks.example.com:8080/in",
    "https://hooks.example.com:1/in",
    "https://hooks.example.com:65535/in",
  ])("every port is accepted by default (%s)", (url) => {
    expect(checkEndpointUrl(url).ok).toBe(true);
  });

  it.each([
    ["https://hooks.example.com/in", true], // RFC 9110 §4.2.2: https without a port is 443
    ["https://hooks.example.com:443/in", true],
    ["https://hooks.example.com:8443/in", true],
    ["https://hooks.example.com:8080/in", false],
    ["https://hooks.example.com:80/in", false],
    ["http://127.0.0.1/in", false], // RFC 9110 §4.2.1: http without a port is 80, even for an allowed address
    ["http://127.0.0.1:8443/in", true],
  ])("with ports [443, 8443], %s is %s", (url, accepted) => {
    const policy = compileUrlPolicy({ allowHttp: true, allow: ["127.0.0.1"], ports: [443, 8443] });
    const checked = checkEndpointUrl(url, policy);
    expect(checked.ok).toBe(accepted);
    if (!accepted) expect(checked).toMatchObject({ ok: false, code: "invalid_url" });
  });

  it("is checked before DNS: a refused port resolves nothing", async () => {
    const calls: string[] = [];
    const checked = await checkResolvedEndpointUrl("https://hooks.example:8080/", table({}, calls), { ports: [443] });
    expect(checked).toMatchObject({ ok: false, code: "invalid_url" });
    expect(calls).toEqual([]);
  });

  it("the endpoint API answers 422 invalid_url pointing at /url, and forbidden_address for a denied host", async () => {
    const endpoints = createMemoryEndpointStore();
    const handler = declareEndpointApi(createRouter(), {
      endpoints,
      queue: createMemoryDeliveryQueue({ endpoints }),
      apiKeys: ["sk_test_key"],
      resolve: table({ "hooks.example": [CUSTOMER_ADDRESS], "alias.example": [PROVIDER_ADDRESS] }),
      urlPolicy: { deny: DENY, ports: [443] },
    }).handler();
    for (const [url, code] of [
      ["https://hooks.example:8080/in", "invalid_url"],
      ["https://alias.example/in", "unresolvable_host"],
      ["https://api.provider.example/admin", "forbidden_address"],
    ] as const) {
      const res = await registerEndpoint(handler, url);
      expect(res.status, url).toBe(422);
      expect(JSON.parse(String(res.body))).toMatchObject({ code, errors: [{ pointer: "/url", code }] });
      expect(String(res.body)).not.toContain(PROVIDER_ADDRESS);
    }
  });
});

describe("deny and ports: entries are checked when the policy is compiled", () => {
  it.each([
    "10.0.0.0/",
    "10.0.0.0/33",
    "fd00::/129",
    "example.com/8",
    "host.test:8443",
    "user@evil.test",
    "https://api.provider.example",
    "",
  ])("refuses the deny entry %j, naming it (a typo must not leave a hole)", (entry) => {
    expect(() => compileUrlPolicy({ deny: [entry] })).toThrow(TypeError);
    expect(() => compileUrlPolicy({ deny: [entry] })).toThrow(/UrlPolicy\.deny/);
    if (entry !== "") expect(() => compileUrlPolicy({ deny: [entry] })).toThrow(entry);
  });

  it("reads deny entries as allow entries are read", () => {
    const policy = compileUrlPolicy({ deny: ["0x7f.1", "10.0.0.0/08", "Bücher.Example.", "::1"] });
    expect(policy.deniedRanges.map((range) => range.bits)).toEqual([32, 8, 128]);
    expect([...policy.deniedHosts]).toEqual(["xn--bcher-kva.example"]);
  });

  it.each([[0], [65_536], [-443], [443.5], [Number.NaN], [Number.POSITIVE_INFINITY], ["443"], [null]])(
    "refuses the port %j",
    (port) => {
      expect(() => compileUrlPolicy({ ports: [port as number] })).toThrow(TypeError);
      expect(() => compileUrlPolicy({ ports: [port as number] })).toThrow(/UrlPolicy\.ports/);
    },
  );

  it("refuses an empty ports list (it would refuse every URL) and lists that are not arrays", () => {
    expect(() => compileUrlPolicy({ ports: [] })).toThrow(TypeError);
    expect(() => compileUrlPolicy({ ports: 443 as unknown as number[] })).toThrow(TypeError);
    // Regression: a bare string was read one character at a time ("1", "0", …), each a host of its own.
    expect(() => compileUrlPolicy({ deny: "10.0.0.0/8" as unknown as string[] })).toThrow(TypeError);
    expect(() => compileUrlPolicy({ allow: "127.0.0.1" as unknown as string[] })).toThrow(TypeError);
    expect([...(compileUrlPolicy({ ports: [1, 443, 65_535] }).ports ?? [])]).toEqual([1, 443, 65_535]);
  });
});

// An address of the family of `network` whose first `bits` bits are those of `network` and the rest those of `rest`.
function inside(network: Uint8Array, bits: number, rest: Uint8Array): string {
  const out = Uint8Array.from(rest);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    const mask = (0xff << (8 - keep)) & 0xff;
    out[i] = ((network[i] as number) & mask) | ((rest[i] as number) & ~mask & 0xff);
  }
  if (out.length === 4) return out.join(".");
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push((((out[i] as number) << 8) | (out[i + 1] as number)).toString(16));
  return words.join(":");
}

describe("deny: laws", () => {
  const family = fc.oneof(
    fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 }), fc.ipV4()),
    fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 128 }), fc.ipV6()),
  );

  it("any address inside a denied range is refused, whatever allow says, at registration and after DNS", () => {
    fc.assert(
      fc.property(family, fc.boolean(), ([network, bits, other], nameAllowed) => {
        const address = inside(parseIp(network) as Uint8Array, bits, parseIp(other) as Uint8Array);
        const policy = compileUrlPolicy({
          allow: ["0.0.0.0/0", "::/0", address, "any.example"],
          deny: [`${network}/${bits}`],
        });
        const host = address.includes(":") ? `[${address}]` : address;
        expect(checkEndpointUrl(`https://${host}/`, policy)).toMatchObject({ ok: false, addressClass: "denied" });
        const name = nameAllowed ? "any.example" : "other.example";
        const family = address.includes(":") ? 6 : 4;
        expect(checkResolvedAddresses(name, [{ address, family }], policy)).toMatchObject({
          code: "forbidden_address",
          addressClass: "denied",
        });
      }),
    );
  });

  it("an IPv4 address denied is denied in its IPv4-mapped and NAT64 spellings too", () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const policy = compileUrlPolicy({ allow: ["::/0"], deny: [v4] });
        for (const address of [`::ffff:${v4}`, `::ffff:0:${v4}`, `64:ff9b::${v4}`]) {
          expect(checkResolvedAddresses("x.example", [{ address, family: 6 }], policy)).toMatchObject({
            addressClass: "denied",
          });
        }
      }),
    );
  });

  it("an empty deny list changes nothing: the decision is the one without it", () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (address) => {
        const host = address.includes(":") ? `[${address}]` : address;
        const without = checkEndpointUrl(`https://${host}/`, { allow: ["10.0.0.0/8"] });
        const withEmpty = checkEndpointUrl(`https://${host}/`, { allow: ["10.0.0.0/8"], deny: [] });
        expect(withEmpty.ok).toBe(without.ok);
      }),
    );
  });
});

describe("ports: laws", () => {
  it("a URL is accepted exactly when its effective port is listed", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 65_535 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 65_535 }), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        (port, ports, written) => {
          const url = written || port !== 443 ? `https://hooks.example.com:${port}/in` : "https://hooks.example.com/in";
          const checked = checkEndpointUrl(url, { ports });
          expect(checked.ok).toBe(ports.includes(port));
          if (!checked.ok) expect(checked.code).toBe("invalid_url");
        },
      ),
    );
  });
});
