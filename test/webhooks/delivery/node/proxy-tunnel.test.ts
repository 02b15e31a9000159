import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_TUNNEL_HEAD_BYTES,
  parseEgressProxy,
  readTunnelAnswer,
  tunnelAuthority,
  tunnelRequest,
} from "../../../../src/webhooks/delivery/node/proxy-tunnel";

describe("parseEgressProxy", () => {
  it("reads scheme, host, port and credentials, with the scheme's default port", () => {
    expect(parseEgressProxy("http://proxy.internal:3128", "proxy")).toEqual({
      protocol: "http:",
      host: "proxy.internal",
      port: 3128,
      authorization: undefined,
      label: "proxy.internal:3128",
    });
    expect(parseEgressProxy(new URL("https://proxy.internal"), "proxy")).toMatchObject({
      protocol: "https:",
      port: 443,
    });
    expect(parseEgressProxy("http://[fd00::1]", "proxy")).toMatchObject({
      host: "fd00::1",
      port: 80,
      label: "[fd00::1]:80",
    });
  });

  it("turns the URL's user and password, percent-decoded, into Basic credentials (RFC 7617)", () => {
    const proxy = parseEgressProxy("http://us%40er:p%3Ass%C3%A9@proxy:8080", "proxy");
    expect(proxy.authorization).toBe(`Basic ${Buffer.from("us@er:p:ssé").toString("base64")}`);
    expect(proxy.label).toBe("proxy:8080"); // what messages say: never the credentials
    expect(parseEgressProxy("http://user@proxy", "proxy").authorization).toBe(
      `Basic ${Buffer.from("user:").toString("base64")}`,
    );
  });

  it.each([
    ["not a URL", "must be a URL"],
    ["socks5://proxy:1080", "http:// or https://"],
    ["http://proxy:3128/path", "not a path or query"],
    ["http://proxy:3128/?x=1", "not a path or query"],
    // Regression: a URIError ("URI malformed"), naming neither the option nor the fault.
    ["http://user:%zz@proxy:3128", "not percent-encoded UTF-8"],
    ["http://us%E0%A4%A:pass@proxy:3128", "not percent-encoded UTF-8"],
  ])("refuses %s, naming the option", (url, message) => {
    expect(() => parseEgressProxy(url, "createDispatcher: proxy")).toThrow(TypeError);
    expect(() => parseEgressProxy(url, "createDispatcher: proxy")).toThrow(message);
    expect(() => parseEgressProxy(url, "createDispatcher: proxy")).toThrow("createDispatcher: proxy");
  });
});

describe("tunnelRequest", () => {
  it("asks for an address in authority form, IPv6 in brackets (RFC 9110 §9.3.6)", () => {
    expect(tunnelAuthority("93.184.215.14", 443)).toBe("93.184.215.14:443");
    expect(tunnelAuthority("2606:2800:21f:cb07:6820:80da:af6b:8b2c", 443)).toBe(
      "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443",
    );
    const proxy = parseEgressProxy("http://a:b@proxy:3128", "proxy");
    expect(tunnelRequest("10.1.2.3:8443", proxy)).toBe(
      `CONNECT 10.1.2.3:8443 HTTP/1.1\r\nHost: 10.1.2.3:8443\r\nProxy-Authorization: Basic ${Buffer.from("a:b").toString("base64")}\r\n\r\n`,
    );
    expect(tunnelRequest("10.1.2.3:443", parseEgressProxy("http://proxy", "proxy"))).toBe(
      "CONNECT 10.1.2.3:443 HTTP/1.1\r\nHost: 10.1.2.3:443\r\n\r\n",
    );
  });
});

describe("readTunnelAnswer", () => {
  const bytes = (text: string) => Buffer.from(text, "latin1");

  it("opens on any 2xx, and tells where the tunnel's own bytes start", () => {
    const head = "HTTP/1.1 200 Connection established\r\nProxy-Agent: test\r\n\r\n";
    expect(readTunnelAnswer(bytes(head))).toEqual({ kind: "open", headBytes: head.length });
    expect(readTunnelAnswer(bytes(`${head}\x16\x03\x01`))).toEqual({ kind: "open", headBytes: head.length });
    expect(readTunnelAnswer(bytes("HTTP/1.0 204\r\n\r\n"))).toEqual({ kind: "open", headBytes: 16 });
  });

  it("refuses on any other status, with its reason", () => {
    expect(readTunnelAnswer(bytes("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"))).toEqual({
      kind: "refused",
      status: 407,
      reason: "Proxy Authentication Required",
    });
    expect(readTunnelAnswer(bytes("HTTP/1.1 502 \r\n\r\n"))).toMatchObject({ kind: "refused", status: 502 });
    expect(readTunnelAnswer(bytes("HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n"))).toMatchObject({ status: 302 });
  });

  it("is malformed without a status line, or past the head's cap without its end", () => {
    expect(readTunnelAnswer(bytes("SSH-2.0-OpenSSH\r\n\r\n"))).toEqual({ kind: "malformed" });
    expect(readTunnelAnswer(bytes("HTTP/2 200\r\n\r\n"))).toEqual({ kind: "malformed" });
    expect(readTunnelAnswer(Buffer.alloc(MAX_TUNNEL_HEAD_BYTES, 0x61))).toEqual({ kind: "incomplete" });
    expect(readTunnelAnswer(Buffer.alloc(MAX_TUNNEL_HEAD_BYTES + 1, 0x61))).toEqual({ kind: "malformed" });
  });

  it("waits for the whole head, however the answer is cut into chunks", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("HTTP/1.1 200 OK\r\nVia: p\r\n\r\n", "HTTP/1.1 403 Forbidden\r\n\r\n"),
        fc.uint8Array({ maxLength: 8 }),
        fc.nat(),
        (head, tunnel, cut) => {
          const whole = Buffer.concat([bytes(head), tunnel]);
          const at = cut % head.length; // strictly inside the head
          expect(readTunnelAnswer(whole.subarray(0, at))).toEqual({ kind: "incomplete" });
          const answer = readTunnelAnswer(whole);
          expect(answer.kind).toBe(head.includes(" 200 ") ? "open" : "refused");
          if (answer.kind === "open") expect(whole.subarray(answer.headBytes)).toEqual(Buffer.from(tunnel));
        },
      ),
    );
  });
});
