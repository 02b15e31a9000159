import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildDeliveryRequest,
  type RequestTarget,
  requestTarget,
  signedAsOf,
} from "../../../src/webhooks/delivery/delivery-request";
import type { EndpointSecret } from "../../../src/webhooks/delivery/endpoint";

const SECRET_A = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SECRET_B = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const delivery = { eventId: "evt_1", payload: '{"type":"order.created"}' };
const endpoint = (secrets: EndpointSecret[]) => ({ url: "https://example.com/hooks", secrets });

describe("signedAsOf", () => {
  const one = endpoint([{ secret: SECRET_A, expiresAt: null }]);

  it("holds within the signed second, and not across a second, nor backwards in time", () => {
    expect(signedAsOf(one, 1_700_000_000_000, 1_700_000_000_999)).toBe(true);
    expect(signedAsOf(one, 1_700_000_000_999, 1_700_000_001_000)).toBe(false);
    expect(signedAsOf(one, 1_700_000_000_500, 1_700_000_000_400)).toBe(false);
  });

  it("does not hold once a secret that signed has expired", () => {
    const rotating = endpoint([
      { secret: SECRET_A, expiresAt: 1_700_000_000_600 },
      { secret: SECRET_B, expiresAt: null },
    ]);
    expect(signedAsOf(rotating, 1_700_000_000_100, 1_700_000_000_599)).toBe(true);
    expect(signedAsOf(rotating, 1_700_000_000_100, 1_700_000_000_600)).toBe(false);
    // Expired before the signing: it signed neither time.
    expect(signedAsOf(rotating, 1_700_000_000_700, 1_700_000_000_800)).toBe(true);
  });

  it("law: when it holds, the request built then is the request built now", () => {
    const secret = fc.record({
      secret: fc.constantFrom(SECRET_A, SECRET_B),
      expiresAt: fc.option(fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }),
        fc.integer({ min: 0, max: 1_500 }),
        (secrets, builtAt, wait) => {
          const target = endpoint(secrets);
          const now = builtAt + wait;
          if (!signedAsOf(target, builtAt, now)) return;
          // Building may also refuse (every secret expired): then it refuses both times alike.
          const build = (at: number) => {
            try {
              return buildDeliveryRequest(delivery, target, at);
            } catch (error) {
              return String(error);
            }
          };
          expect(build(builtAt)).toEqual(build(now));
        },
      ),
    );
  });
});

describe("buildDeliveryRequest with the endpoint's headers", () => {
  it("adds them beside the delivery's own, which win over one stored by hand", () => {
    const target = {
      ...endpoint([{ secret: SECRET_A, expiresAt: null }]),
      headers: { "x-gateway-key": "k_1", "webhook-signature": "v1,forged", "content-type": "text/plain" },
    };
    const request = buildDeliveryRequest(delivery, target, 1_700_000_000_000);
    const plain = buildDeliveryRequest(delivery, endpoint([{ secret: SECRET_A, expiresAt: null }]), 1_700_000_000_000);
    expect(request.headers["x-gateway-key"]).toBe("k_1");
    expect(request.headers["webhook-signature"]).toBe(plain.headers["webhook-signature"]);
    expect(request.headers["content-type"]).toBe("application/json");
    expect({ ...request.headers, "x-gateway-key": undefined }).toEqual({
      ...plain.headers,
      "x-gateway-key": undefined,
    });
  });

  // Regression: a row stored by hand with `Webhook-Signature` (mixed case) was sent beside the delivery's own
  // `webhook-signature`: a forged second signature. RFC 9110 §5.1: field names ignore case.
  it("owned fields win whatever the case of one stored by hand; a reserved name stored so is not sent", () => {
    const plain = buildDeliveryRequest(delivery, endpoint([{ secret: SECRET_A, expiresAt: null }]), 1_700_000_000_000);
    const request = buildDeliveryRequest(
      delivery,
      {
        ...endpoint([{ secret: SECRET_A, expiresAt: null }]),
        headers: {
          "Webhook-Signature": "v1,forged",
          "CONTENT-TYPE": "text/plain",
          "User-Agent": "x",
          "Content-Encoding": "gzip",
          "X-Gateway-Key": "k_1",
        },
      },
      1_700_000_000_000,
    );
    expect(request.headers).toEqual({ ...plain.headers, "x-gateway-key": "k_1" });
  });

  // Regression: a value stored by hand with CR, LF or NUL (or past Latin-1) was sent as it was; undici refused the
  // whole request with a TypeError, on every attempt, which never counted one (the delivery looped for ever).
  it("does not send a stored value the HTTP client refuses (RFC 9110 §5.5); sends every other", () => {
    const sendable = { "x-tab": "a\tb", "x-latin": "caf\u00e9", "x-spaced": " k ", "x-empty": "" };
    const built = buildDeliveryRequest(
      delivery,
      {
        ...endpoint([{ secret: SECRET_A, expiresAt: null }]),
        headers: {
          ...sendable,
          "x-crlf": "k\r\nx-injected: 1",
          "x-nul": "a\u0000",
          "x-euro": "\u20ac",
          "x-del": "\u007f",
        },
      },
      1_700_000_000_000,
    );
    const plain = buildDeliveryRequest(delivery, endpoint([{ secret: SECRET_A, expiresAt: null }]), 1_700_000_000_000);
    expect(built.headers).toEqual({ ...plain.headers, ...sendable });
  });

  it("law: whatever the store holds, each owned field is sent once, with the delivery's value", () => {
    const owned = ["content-type", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature"];
    const anyCase = fc
      .tuple(
        fc.constantFrom(...owned, "traceparent", "x-key"),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
      )
      .map(([name, upper]) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));
    const plain = buildDeliveryRequest(delivery, endpoint([{ secret: SECRET_A, expiresAt: null }]), 1_700_000_000_000);
    fc.assert(
      fc.property(fc.dictionary(anyCase, fc.string()), (headers) => {
        const built = buildDeliveryRequest(
          delivery,
          { ...endpoint([{ secret: SECRET_A, expiresAt: null }]), headers },
          1_700_000_000_000,
        );
        for (const name of [...owned, "traceparent"]) {
          expect(Object.keys(built.headers).filter((key) => key.toLowerCase() === name)).toEqual(
            name in plain.headers ? [name] : [],
          );
          expect(built.headers[name]).toBe(plain.headers[name]);
        }
      }),
    );
  });
});

describe("requestTarget (url.scheme, server.address, server.port of an attempt span)", () => {
  const cases: [url: string, target: RequestTarget | undefined][] = [
    // RFC 9110 §4.2.1, §4.2.2: no port means the scheme's default; the path (a secret, Slack-style) is never kept.
    [
      "https://hooks.slack.example/services/T000/B000/XXXXsecret",
      { scheme: "https", host: "hooks.slack.example", port: 443 },
    ],
    ["http://127.0.0.1/hooks", { scheme: "http", host: "127.0.0.1", port: 80 }],
    ["https://receiver.example:8443/h?token=secret", { scheme: "https", host: "receiver.example", port: 8443 }],
    ["HTTPS://User:pw@Receiver.Example:443/h", { scheme: "https", host: "receiver.example", port: 443 }],
    // RFC 3986 §3.2.2: the brackets are the URI's, not the address's.
    ["https://[2606:4700::1111]:8080/h", { scheme: "https", host: "2606:4700::1111", port: 8080 }],
    ["not a url", undefined],
    ["ftp://files.example:21/h", undefined],
  ];
  for (const [url, target] of cases) {
    it(`${url} → ${JSON.stringify(target)}`, () => {
      expect(requestTarget(url)).toStrictEqual(target);
    });
  }
});
