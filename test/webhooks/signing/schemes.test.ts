import { describe, expect, it } from "vitest";
import {
  generateSecret,
  generateSigningKeyPair,
  github,
  type SchemeSignInput,
  shopify,
  sign,
  signWith,
  slack,
  standardWebhooks,
  stripe,
  type VerifyResult,
  verify,
  type WebhookScheme,
} from "../../../src/webhooks/signing/index";

const NOW = 1_700_000_000;
const clock = () => NOW * 1000;
const body = JSON.stringify({ id: "evt_1", event_id: "Ev1", type: "ping" });

const codeOf = (result: VerifyResult<unknown>) => (result.ok ? "ok" : result.error.code);
const check = (
  scheme: WebhookScheme,
  headers: Record<string, string | undefined>,
  secrets: string | string[],
  raw = body,
) => codeOf(verify({ body: raw, headers, secrets, scheme, now: clock }));

describe("generateSecret", () => {
  it("is whsec_ + base64 of 32 random bytes by default, 24–64 on request", () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(Buffer.from(generateSecret(24).slice(6), "base64")).toHaveLength(24);
    expect(Buffer.from(generateSecret(64).slice(6), "base64")).toHaveLength(64);
    expect(generateSecret()).not.toBe(secret);
  });

  it.each([23, 65, 32.5, Number.NaN])("refuses %s bytes (Standard Webhooks allows 24–64)", (bytes) => {
    expect(() => generateSecret(bytes)).toThrow(RangeError);
  });

  it("makes Ed25519 pairs in whsk_/whpk_ form (32-byte seed and public key)", () => {
    const pair = generateSigningKeyPair();
    expect(pair.secretKey).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
    expect(pair.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
  });

  it("takes its randomness from an injected source (reproducible tests)", () => {
    const bytes = (size: number) => Uint8Array.from({ length: size }, (_, i) => i);
    expect(generateSecret(24, bytes)).toBe(`whsec_${Buffer.from(bytes(24)).toString("base64")}`);
    expect(() => generateSecret(32, () => new Uint8Array(8))).toThrow(TypeError);
  });

  it("derives the key pair from an injected 32-byte seed (RFC 8032 §7.1, TEST 1)", () => {
    const seed = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
    const pair = generateSigningKeyPair(() => seed);
    expect(pair.secretKey).toBe(`whsk_${seed.toString("base64")}`);
    expect(Buffer.from(pair.publicKey.slice(5), "base64").toString("hex")).toBe(
      "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    );
  });

  it("accepts the 64-byte libsodium secret key form (seed then public key) and refuses a mismatched one", () => {
    const pair = generateSigningKeyPair();
    const seed = Buffer.from(pair.secretKey.slice(5), "base64");
    const publicKey = Buffer.from(pair.publicKey.slice(5), "base64");
    const long = `whsk_${Buffer.concat([seed, publicKey]).toString("base64")}`;
    const signed = sign({ id: "msg_1", timestamp: NOW, body, secrets: long });
    expect(verify({ body, headers: signed, secrets: pair.publicKey, now: clock }).ok).toBe(true);
    const wrong = `whsk_${Buffer.concat([seed, Buffer.alloc(32)]).toString("base64")}`;
    expect(() => sign({ id: "msg_1", timestamp: NOW, body, secrets: wrong })).toThrow(TypeError);
  });
});

describe("sign (Standard Webhooks) misuse", () => {
  const secret = generateSecret();
  it.each<[string, Partial<SchemeSignInput>]>([
    ["an id with '.'", { id: "a.b" }],
    ["an empty id", { id: "" }],
    ["an id with a line break", { id: "a\r\nx-injected: 1" }],
    // Regression: HTTP strips the whitespace (the signature covered it) or refuses the character, so the delivery
    // could never be verified.
    ["an id with leading whitespace", { id: " msg_1" }],
    ["an id with trailing whitespace", { id: "msg_1\t" }],
    ["an id with a NUL", { id: "msg\u0000" }],
    ["an id with DEL", { id: "msg\u007f" }],
    ["an id with a character above U+00FF", { id: "msg_☕" }],
    // Regression: 11 HMAC secrets gave 11 v1 signatures, a header verify refuses (malformed_header) unverified.
    ["11 distinct HMAC secrets", { secrets: Array.from({ length: 11 }, () => generateSecret()) }],
    ["a fractional timestamp", { timestamp: 1.5 }],
    ["a negative timestamp", { timestamp: -1 }],
    ["no secret", { secrets: [] }],
    ["a public key", { secrets: generateSigningKeyPair().publicKey }],
    ["a secret that is not base64", { secrets: "whsec_???" }],
  ])("throws TypeError for %s", (_name, change) => {
    expect(() => signWith(standardWebhooks, { id: "msg_1", timestamp: NOW, body, secrets: secret, ...change })).toThrow(
      TypeError,
    );
  });

  it("signs ids with inner spaces and obs-text, which survive HTTP, and ten secrets of each kind", () => {
    for (const id of ["msg 1", "msg\t2", "msg_é"]) {
      const signed = sign({ id, timestamp: NOW, body, secrets: secret });
      expect(verify({ body, headers: signed, secrets: secret, now: clock }).ok).toBe(true);
    }
    const ten = Array.from({ length: 10 }, () => generateSecret());
    const pairs = Array.from({ length: 10 }, () => generateSigningKeyPair().secretKey);
    const signed = sign({ id: "msg_ten", timestamp: NOW, body, secrets: [...ten, ...pairs, ten[0] as string] });
    expect(verify({ body, headers: signed, secrets: ten[9] as string, now: clock }).ok).toBe(true);
  });
});

describe("stripe", () => {
  const secret = "whsec_stripe_example";
  const header = signWith(stripe, { timestamp: NOW, body, secrets: secret })["stripe-signature"]!;

  it("signs t=…,v1=<hex> and verifies it, taking the id from event.id", () => {
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(
      verify({ body, headers: { "stripe-signature": header }, secrets: secret, scheme: stripe, now: clock }),
    ).toMatchObject({
      ok: true,
      id: "evt_1",
      timestamp: NOW,
    });
  });

  it("accepts any of several v1 signatures and ignores v0 and unknown schemes", () => {
    const other = "v1=" + "0".repeat(64);
    expect(check(stripe, { "stripe-signature": `t=${NOW},${other},v0=abc,v9=x,${header.split(",")[1]}` }, secret)).toBe(
      "ok",
    );
  });

  it("signs one v1 per secret while the provider rolls the secret", () => {
    const both = signWith(stripe, { timestamp: NOW, body, secrets: [secret, "whsec_next"] })["stripe-signature"]!;
    expect(both.split(",").filter((part) => part.startsWith("v1="))).toHaveLength(2);
    expect(check(stripe, { "stripe-signature": both }, "whsec_next")).toBe("ok");
  });

  it.each([
    ["no header", {}, "missing_header"],
    ["no timestamp", { "stripe-signature": `v1=${"a".repeat(64)}` }, "malformed_header"],
    ["no v1 signature", { "stripe-signature": `t=${NOW},v0=${"a".repeat(64)}` }, "malformed_header"],
    ["a non-numeric timestamp", { "stripe-signature": `t=now,v1=${"a".repeat(64)}` }, "malformed_header"],
    ["an item without '='", { "stripe-signature": `t=${NOW},garbage` }, "malformed_header"],
    ["an old timestamp", { "stripe-signature": `t=${NOW - 301},v1=${"a".repeat(64)}` }, "timestamp_too_old"],
  ])("reports %s", (_name, headers, code) => {
    expect(check(stripe, headers, secret)).toBe(code);
  });

  it("refuses a Stripe API key given as the secret", () => {
    expect(check(stripe, { "stripe-signature": header }, "sk_test_123")).toBe("secret_invalid");
  });
});

describe("github", () => {
  const secret = "It's a Secret to Everybody";
  const signed = signWith(github, { id: "72d3162e-cc78-11e3-81ab-4c9367dc0958", body, secrets: secret });

  it("returns X-GitHub-Delivery as the id and no timestamp (GitHub signs none)", () => {
    expect(verify({ body, headers: signed, secrets: secret, scheme: github })).toMatchObject({
      ok: true,
      id: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      timestamp: undefined,
    });
  });

  it("keeps inner spaces of a literal secret but refuses surrounding whitespace", () => {
    expect(check(github, signed, secret)).toBe("ok");
    expect(check(github, signed, `${secret}\n`)).toBe("secret_invalid");
  });

  it("points at the legacy SHA-1 header when only that one came", () => {
    const result = verify({ body, headers: { "x-hub-signature": "sha1=abc" }, secrets: secret, scheme: github });
    expect(codeOf(result)).toBe("missing_header");
    expect(result.ok ? "" : result.error.message).toContain("SHA-1");
  });

  it.each([
    [
      "no sha256= prefix",
      { "x-hub-signature-256": "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17" },
    ],
    ["a sha1= value", { "x-hub-signature-256": "sha1=abc" }],
  ])("reports %s as malformed_header", (_name, headers) => {
    expect(check(github, headers, secret)).toBe("malformed_header");
  });

  it("does not accept upper-case hex (only the provider's exact form)", () => {
    const hex = signed["x-hub-signature-256"]!.slice("sha256=".length);
    const upper = { "x-hub-signature-256": `sha256=${hex.toUpperCase()}` };
    expect(check(github, upper, secret)).toBe("no_matching_signature");
  });

  it("signs with one secret only (GitHub sends one signature)", () => {
    expect(() => signWith(github, { body, secrets: [secret, "other"] })).toThrow(TypeError);
  });
});

describe("shopify", () => {
  const secret = "shpss_client_secret";
  const signed = signWith(shopify, { id: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043", body, secrets: secret });

  it("signs the base64 HMAC of the body and verifies it, with X-Shopify-Webhook-Id as id", () => {
    expect(signed["x-shopify-hmac-sha256"]).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(verify({ body, headers: signed, secrets: secret, scheme: shopify })).toMatchObject({
      ok: true,
      id: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
    });
  });

  it("reports a missing header and a wrong signature", () => {
    expect(check(shopify, {}, secret)).toBe("missing_header");
    expect(check(shopify, signed, "other")).toBe("no_matching_signature");
  });

  // Regression: an empty value was "1 signature received, none matched", blaming the body and the secret.
  it.each([
    ["an empty value", ""],
    ["a blank value", "  "],
    ["a value that is not base64", "sha256=abc"],
    ["a repeated field with an empty item", `${signed["x-shopify-hmac-sha256"]}, `],
  ])("reports %s as malformed_header, as the other schemes do", (_name, value) => {
    expect(check(shopify, { "x-shopify-hmac-sha256": value }, secret)).toBe("malformed_header");
  });

  // RFC 9110 §5.3: a repeated field is read as its values joined by ", ", as GitHub's and Stripe's parsers accept.
  it("accepts a repeated X-Shopify-Hmac-Sha256 field (joined by commas) when one of its signatures matches", () => {
    const valid = signed["x-shopify-hmac-sha256"] as string;
    const other = signWith(shopify, { body, secrets: "another_secret" })["x-shopify-hmac-sha256"] as string;
    const twice = { "x-shopify-hmac-sha256": [valid, valid] };
    expect(codeOf(verify({ body, headers: twice, secrets: secret, scheme: shopify }))).toBe("ok");
    expect(check(shopify, { "x-shopify-hmac-sha256": `${other}, ${valid}` }, secret)).toBe("ok");
    expect(check(shopify, { "x-shopify-hmac-sha256": ` ${valid} ,${other}` }, secret)).toBe("ok");
    expect(
      codeOf(
        verify({
          body,
          headers: new Headers([
            ["x-shopify-hmac-sha256", other],
            ["x-shopify-hmac-sha256", valid],
          ]),
          secrets: secret,
          scheme: shopify,
        }),
      ),
    ).toBe("ok");
    expect(check(shopify, { "x-shopify-hmac-sha256": `${other}, ${other}` }, secret)).toBe("no_matching_signature");
  });
});

describe("slack", () => {
  const secret = "8f742231b10e8888abcd99yyyzzz85a5";
  const signed = signWith(slack, { timestamp: NOW, body, secrets: secret });

  it("verifies an Events API delivery, taking event_id as the id", () => {
    expect(verify({ body, headers: signed, secrets: secret, scheme: slack, now: clock })).toMatchObject({
      ok: true,
      id: "Ev1",
      timestamp: NOW,
    });
  });

  it.each([
    ["no signature", { "x-slack-request-timestamp": String(NOW) }, "missing_header"],
    ["no timestamp", { "x-slack-signature": signed["x-slack-signature"] }, "missing_header"],
    ["a non-numeric timestamp", { ...signed, "x-slack-request-timestamp": "soon" }, "malformed_header"],
    ["a signature without v0=", { ...signed, "x-slack-signature": "v1=abc" }, "malformed_header"],
    [
      "a timestamp from the future",
      { ...signed, "x-slack-request-timestamp": String(NOW + 600) },
      "timestamp_in_future",
    ],
  ])("reports %s", (_name, headers, code) => {
    expect(check(slack, headers, secret)).toBe(code);
  });
});

describe("signWith", () => {
  it("throws TypeError for something that is not a scheme", () => {
    expect(() => signWith({} as WebhookScheme, { body, secrets: "x" })).toThrow(TypeError);
  });

  it("requires a timestamp for the timestamped schemes", () => {
    for (const scheme of [standardWebhooks, stripe, slack]) {
      expect(() => signWith(scheme, { id: "msg_1", body, secrets: "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldY" })).toThrow(
        TypeError,
      );
    }
  });
});
