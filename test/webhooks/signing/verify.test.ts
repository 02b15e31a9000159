import fc from "fast-check";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  generateSecret,
  generateSigningKeyPair,
  github,
  isWebhookVerificationError,
  secretFingerprint,
  sign,
  signWith,
  stripe,
  type VerificationErrorCode,
  type VerifyResult,
  verify,
  WebhookVerificationError,
} from "../../../src/webhooks/signing/index";
import { checkTimestamp } from "../../../src/webhooks/signing/tolerance";

const NOW = 1_700_000_000;
const clock = () => NOW * 1000;
const secret = generateSecret();
const event = { type: "invoice.paid", data: { id: "in_1", amount: 1200 } };
const body = JSON.stringify(event);
const headers = sign({ id: "msg_1", timestamp: NOW, body, secrets: secret });

function codeOf(result: VerifyResult<unknown>): VerificationErrorCode | "ok" {
  return result.ok ? "ok" : result.error.code;
}

describe("verify", () => {
  describe("success", () => {
    it("returns the parsed payload, id, timestamp and scheme", () => {
      expect(verify({ body, headers, secrets: secret, now: clock })).toEqual({
        ok: true,
        id: "msg_1",
        timestamp: NOW,
        payload: event,
        scheme: "standard-webhooks",
      });
    });

    it("types and validates the payload with a zod schema", () => {
      const Invoice = z.object({
        type: z.literal("invoice.paid"),
        data: z.object({ id: z.string(), amount: z.number() }),
      });
      const result = verify({ body, headers, secrets: secret, schema: Invoice, now: clock });
      expectTypeOf(result).toEqualTypeOf<VerifyResult<z.infer<typeof Invoice>>>();
      expect(result.ok && result.payload.data.amount).toBe(1200);
    });

    it("accepts a Fetch Headers object and a record keyed in any case", () => {
      expect(verify({ body, headers: new Headers(headers), secrets: secret, now: clock }).ok).toBe(true);
      const shouting = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
      expect(verify({ body, headers: shouting, secrets: secret, now: clock }).ok).toBe(true);
    });

    it("accepts bytes: Buffer, Uint8Array, ArrayBuffer and a DataView", () => {
      const bytes = new TextEncoder().encode(body);
      for (const raw of [Buffer.from(body), bytes, bytes.buffer, new DataView(bytes.buffer)]) {
        expect(verify({ body: raw as Uint8Array, headers, secrets: secret, now: clock }).ok).toBe(true);
      }
    });

    it("verifies a body that is not valid UTF-8 as bytes (the standardwebhooks package cannot)", () => {
      const bytes = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d]); // {"a":"\xff\xfe\xc3"}
      const signed = sign({ id: "msg_bin", timestamp: NOW, body: bytes, secrets: secret });
      const result = verify({ body: bytes, headers: signed, secrets: secret, now: clock });
      expect(result).toMatchObject({ ok: true, payload: { a: "\ufffd\ufffd\ufffd" } });
      // The same bytes decoded to text first are different bytes, and must not verify.
      const decoded = new TextDecoder().decode(bytes);
      expect(codeOf(verify({ body: decoded, headers: signed, secrets: secret, now: clock }))).toBe(
        "no_matching_signature",
      );
    });

    it("returns an empty body's payload as undefined", () => {
      const signed = sign({ id: "msg_empty", timestamp: NOW, body: "", secrets: secret });
      expect(verify({ body: "", headers: signed, secrets: secret, now: clock })).toMatchObject({
        ok: true,
        payload: undefined,
      });
    });

    it("reads the payload as a form or leaves it raw on request", () => {
      const form = "a=1&b=two%20words";
      const signed = sign({ id: "msg_form", timestamp: NOW, body: form, secrets: secret });
      expect(verify({ body: form, headers: signed, secrets: secret, parse: "form", now: clock })).toMatchObject({
        payload: { a: "1", b: "two words" },
      });
      expect(verify({ body: form, headers: signed, secrets: secret, parse: "none", now: clock })).toMatchObject({
        payload: form,
      });
    });
  });

  describe("timestamp tolerance", () => {
    const at = (offsetSeconds: number, toleranceSeconds?: number | { past: number; future: number }) =>
      codeOf(verify({ body, headers, secrets: secret, toleranceSeconds, now: () => (NOW + offsetSeconds) * 1000 }));

    it("defaults to five minutes both ways, inclusive", () => {
      expect(at(300)).toBe("ok");
      expect(at(301)).toBe("timestamp_too_old");
      expect(at(-300)).toBe("ok");
      expect(at(-301)).toBe("timestamp_in_future");
    });

    it("configures past and future apart", () => {
      expect(at(100, { past: 60, future: 600 })).toBe("timestamp_too_old");
      expect(at(-500, { past: 60, future: 600 })).toBe("ok");
      expect(at(-700, { past: 60, future: 600 })).toBe("timestamp_in_future");
    });

    it("checks the timestamp before the signature (a replay costs no HMAC)", () => {
      const result = verify({ body: "tampered", headers, secrets: secret, now: () => (NOW + 3600) * 1000 });
      expect(codeOf(result)).toBe("timestamp_too_old");
    });

    // Regression: both unit mistakes were "the clock is behind, check NTP", which sent the reader the wrong way.
    it("says which side used milliseconds for seconds, when that explains a timestamp in the future", () => {
      const message = (result: VerifyResult<unknown>) => (result.ok ? "" : result.error.message);
      const inMs = { ...headers, "webhook-timestamp": `${NOW}123` };
      const fromHeader = verify({ body, headers: inMs, secrets: secret, now: clock });
      expect(codeOf(fromHeader)).toBe("timestamp_in_future");
      expect(message(fromHeader)).toContain("milliseconds: the sender must send Unix seconds");
      const secondsClock = verify({ body, headers, secrets: secret, now: () => NOW });
      expect(codeOf(secondsClock)).toBe("timestamp_in_future");
      expect(message(secondsClock)).toContain("now() must return milliseconds");
      const skewed = verify({ body, headers, secrets: secret, now: () => (NOW - 400) * 1000 });
      expect(codeOf(skewed)).toBe("timestamp_in_future");
      expect(message(skewed)).toContain("check NTP");
      expect(message(skewed)).not.toContain("milliseconds");
    });

    it("is disabled by Infinity", () => {
      expect(at(10 * 365 * 86400, Number.POSITIVE_INFINITY)).toBe("ok");
    });

    // NaN compares false with everything: `now - ts > past` and `ts - now > future` were both false, so it passed.
    describe("a clock that reads NaN or an infinity disables nothing", () => {
      const readings = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
      const ancient = sign({ id: "msg_1970", timestamp: 1, body, secrets: secret });

      it.each(readings)("verify with now() = %s throws a TypeError naming now()", (reading) => {
        expect(() => verify({ body, headers: ancient, secrets: secret, now: () => reading })).toThrow(
          /^verify: now\(\) must be a finite number/,
        );
        expect(() => verify({ body, headers, secrets: secret, now: () => reading })).toThrow(TypeError);
      });

      it.each(readings)("the window check fails closed at %s, whatever the tolerance", (reading) => {
        for (const window of [
          { past: 300, future: 300 },
          { past: Number.POSITIVE_INFINITY, future: 0 },
          { past: 0, future: Number.POSITIVE_INFINITY },
        ]) {
          expect(checkTimestamp(NOW, reading, window, "standard-webhooks")?.code, String(window.past)).toMatch(
            /^timestamp_(too_old|in_future)$/,
          );
        }
      });

      it("schemes without a signed timestamp never read the clock", () => {
        const gh = signWith(github, { body, secrets: "gh_secret" });
        expect(codeOf(verify({ body, headers: gh, secrets: "gh_secret", scheme: github, now: () => Number.NaN }))).toBe(
          "ok",
        );
      });
    });
  });

  describe("body not raw", () => {
    it.each([
      ["a parsed object", event],
      ["undefined (no raw body captured)", undefined],
      ["null", null],
      ["a number", 42],
    ])("refuses %s with body_not_raw", (_name, value) => {
      const result = verify({ body: value as unknown as string, headers, secrets: secret, now: clock });
      expect(codeOf(result)).toBe("body_not_raw");
      expect(result.ok ? "" : result.error.message).toContain("express.raw");
    });
  });

  // A sender chooses both the body and Content-Length: neither may make its failure the consumer's 500 (body_not_raw).
  describe("a body that looks changed after receipt: no_matching_signature (400) with a hint", () => {
    const hinted = (result: VerifyResult<unknown>) => ({
      code: codeOf(result),
      status: result.ok ? 0 : result.error.status,
      hint: result.ok ? false : /Pass the exact bytes received/.test(result.error.message),
    });

    it('a stringified object: the consumer\'s String(object), or a sender posting "[object Object]"', () => {
      const result = verify({ body: String(event), headers, secrets: secret, now: clock });
      expect(hinted(result)).toEqual({ code: "no_matching_signature", status: 400, hint: true });
      expect(result.ok ? "" : result.error.message).toContain("[object Object]");
    });

    it("a re-serialised string, told by its length against Content-Length", () => {
      const pretty = JSON.stringify(event, null, 2);
      const signed = sign({ id: "msg_pretty", timestamp: NOW, body: pretty, secrets: secret });
      const received = { ...signed, "content-length": String(Buffer.byteLength(pretty)) };
      const reserialised = JSON.stringify(JSON.parse(pretty));
      expect(hinted(verify({ body: reserialised, headers: received, secrets: secret, now: clock }))).toEqual({
        code: "no_matching_signature",
        status: 400,
        hint: true,
      });
      expect(codeOf(verify({ body: pretty, headers: received, secrets: secret, now: clock }))).toBe("ok");
    });

    it("bytes that are not UTF-8, read with request.text(): the sender's doing, still a 400", () => {
      const bytes = Uint8Array.of(0x7b, 0xff, 0x7d);
      const received = { ...headers, "content-length": String(bytes.byteLength) };
      const text = new TextDecoder().decode(bytes);
      expect(hinted(verify({ body: text, headers: received, secrets: secret, now: clock }))).toEqual({
        code: "no_matching_signature",
        status: 400,
        hint: true,
      });
    });

    it("no hint when the body is as long as Content-Length says", () => {
      const received = { ...headers, "content-length": String(Buffer.byteLength("tampered")) };
      expect(hinted(verify({ body: "tampered", headers: received, secrets: secret, now: clock }))).toEqual({
        code: "no_matching_signature",
        status: 400,
        hint: false,
      });
    });
  });

  describe("no matching signature", () => {
    it("names the scheme, the secrets tried (by fingerprint, never the value) and the usual causes", () => {
      const [first, second] = [generateSecret(), generateSecret()];
      const result = verify({ body, headers, secrets: [first, second], now: clock });
      expect(codeOf(result)).toBe("no_matching_signature");
      const message = result.ok ? "" : result.error.message;
      expect(message).toContain("standard-webhooks");
      expect(message).toContain(secretFingerprint(first));
      expect(message).toContain(secretFingerprint(second));
      expect(message).not.toContain(first.slice(6));
      expect(message).toContain("raw");
      expect(message).toContain("#1 whsec_…");
    });

    // Regression: any `[a-z]{2,6}_` start was shown as a type prefix, so "hooks_2024" printed "hooks_", and its
    // fingerprint made the four characters left a trivial search.
    it("shows published type markers only, never the start of a literal secret", () => {
      const gh = signWith(github, { body, secrets: "the sender's" });
      for (const literal of ["hooks_2024", "secret_x"]) {
        const result = verify({ body, headers: gh, secrets: literal, scheme: github });
        const message = result.ok ? "" : result.error.message;
        expect(codeOf(result)).toBe("no_matching_signature");
        expect(message).toContain(`#1 … (fingerprint ${secretFingerprint(literal)})`);
        expect(message).not.toContain(literal.slice(0, literal.indexOf("_") + 1));
      }
      const invalid = verify({ body, headers: gh, secrets: "hooks_2024\n", scheme: github });
      expect(codeOf(invalid)).toBe("secret_invalid");
      expect(invalid.ok ? "" : invalid.error.message).not.toContain("hooks_");
    });
  });

  describe("secrets", () => {
    it.each([
      ["an empty list", []],
      ["an empty string", ""],
      ["undefined (unset environment variable)", undefined],
      ["null", null],
      ["an unset secret beside a set one", [secret, undefined]],
      ["a secret with a trailing newline", `${secret}\n`],
      ["a secret with inner whitespace", "whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw"],
      ["a secret that is not base64", "whsec_not-base64!"],
      ["a Stripe API key", "sk_live_abcdef"],
      ["a malformed Ed25519 public key", "whpk_AAAA"],
      ["one bad secret among good ones", [secret, " padded "]],
    ])("refuses %s with secret_invalid", (_name, value) => {
      const result = verify({ body, headers, secrets: value as string, now: clock });
      expect(codeOf(result)).toBe("secret_invalid");
    });

    it("verifies v1a signatures with the public key, and with the secret key", () => {
      const pair = generateSigningKeyPair();
      const signed = sign({ id: "msg_ed", timestamp: NOW, body, secrets: pair.secretKey });
      expect(signed["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
      expect(verify({ body, headers: signed, secrets: pair.publicKey, now: clock }).ok).toBe(true);
      expect(verify({ body, headers: signed, secrets: pair.secretKey, now: clock }).ok).toBe(true);
      const other = generateSigningKeyPair();
      expect(codeOf(verify({ body, headers: signed, secrets: other.publicKey, now: clock }))).toBe(
        "no_matching_signature",
      );
      // A v1a signature is never checked against an HMAC secret, nor v1 against an Ed25519 key.
      expect(codeOf(verify({ body, headers: signed, secrets: secret, now: clock }))).toBe("no_matching_signature");
      expect(codeOf(verify({ body, headers, secrets: pair.publicKey, now: clock }))).toBe("no_matching_signature");
    });

    // Regression: every v1a token was checked against every key, so one unauthenticated 15 KB header of bogus
    // tokens cost ~60 Ed25519 checks per key.
    it("checks a repeated signature once, and refuses more than 10 distinct signatures of one version", () => {
      const pair = generateSigningKeyPair();
      const signed = sign({ id: "msg_many", timestamp: NOW, body, secrets: pair.secretKey });
      const valid = signed["webhook-signature"];
      const bogus = (i: number) => `v1a,${String(i).padStart(2, "0")}${"A".repeat(83)}A==`;
      const bogusV1 = (i: number) => `v1,${String(i).padStart(2, "0")}${"A".repeat(41)}=`;
      const withSignature = (value: string) => ({ ...signed, "webhook-signature": value });
      const check = (value: string) =>
        codeOf(verify({ body, headers: withSignature(value), secrets: pair.publicKey, now: clock }));
      const range = (n: number) => Array.from({ length: n }, (_, i) => i);
      // 160 copies of one token are one signature.
      expect(check(Array(160).fill(bogus(0)).concat(valid).join(" "))).toBe("ok");
      expect(check(Array(160).fill(bogus(0)).join(" "))).toBe("no_matching_signature");
      // Ten of each version are accepted (a sender signs once per active secret), the eleventh is refused unverified.
      const v1a = range(9).map(bogus);
      const v1 = range(10).map(bogusV1);
      expect(check([...v1a, ...v1, valid].join(" "))).toBe("ok");
      expect(check([...v1a, bogus(9), valid].join(" "))).toBe("malformed_header");
      expect(check([...v1, bogusV1(10), valid].join(" "))).toBe("malformed_header");
    });

    it("signs with up to 10 distinct secrets of each kind and refuses the eleventh, as verifiers would", () => {
      const hmac = Array.from({ length: 11 }, () => generateSecret());
      const ed = Array.from({ length: 11 }, () => generateSigningKeyPair().secretKey);
      const tokens = (secrets: string[]) =>
        sign({ id: "msg_keys", timestamp: NOW, body, secrets })["webhook-signature"].split(" ");
      expect(tokens(hmac.slice(0, 10))).toHaveLength(10);
      // Ten of each kind: eleven and more signatures in all, none of one version past the limit.
      expect(tokens([...hmac.slice(0, 10), ...ed.slice(0, 10)])).toHaveLength(20);
      // A secret listed twice signs alike: eleven entries, ten distinct signatures.
      expect(new Set(tokens([...hmac.slice(0, 10), hmac[0] as string])).size).toBe(10);
      for (const secrets of [hmac, ed, [...ed.slice(0, 10), ...hmac]]) {
        expect(() => tokens(secrets)).toThrow(/at most 10 distinct secrets of each kind/);
      }
      const signed = sign({ id: "msg_keys", timestamp: NOW, body, secrets: hmac.slice(0, 10) });
      expect(verify({ body, headers: signed, secrets: hmac[9] as string, now: clock }).ok).toBe(true);
    });

    it("signs with HMAC and Ed25519 keys side by side", () => {
      const pair = generateSigningKeyPair();
      const signed = sign({ id: "msg_both", timestamp: NOW, body, secrets: [secret, pair.secretKey] });
      expect(signed["webhook-signature"].split(" ").map((token) => token.split(",")[0])).toEqual(["v1", "v1a"]);
      expect(verify({ body, headers: signed, secrets: secret, now: clock }).ok).toBe(true);
      expect(verify({ body, headers: signed, secrets: pair.publicKey, now: clock }).ok).toBe(true);
    });
  });

  describe("payload", () => {
    it("is payload_invalid when the verified body is not JSON", () => {
      const signed = sign({ id: "msg_text", timestamp: NOW, body: "not json", secrets: secret });
      expect(codeOf(verify({ body: "not json", headers: signed, secrets: secret, now: clock }))).toBe(
        "payload_invalid",
      );
    });

    // Regression: a body with a byte order mark verified as bytes (TextDecoder drops it) but was payload_invalid as a
    // string (Buffer#toString keeps it as U+FEFF, which JSON.parse refuses).
    it("reads a body with a leading byte order mark alike as a string and as bytes, JSON and form", () => {
      const text = `\uFEFF${body}`;
      const signed = sign({ id: "msg_bom", timestamp: NOW, body: text, secrets: secret });
      for (const given of [text, new TextEncoder().encode(text)]) {
        const result = verify({ body: given, headers: signed, secrets: secret, now: clock });
        expect(result.ok ? result.payload : result.error.code).toEqual(event);
      }
      const form = "\uFEFFa=1&b=2";
      const formSigned = sign({ id: "msg_bom_form", timestamp: NOW, body: form, secrets: secret });
      for (const given of [form, new TextEncoder().encode(form)]) {
        const result = verify({ body: given, headers: formSigned, secrets: secret, parse: "form", now: clock });
        expect(result.ok ? result.payload : result.error.code).toEqual({ a: "1", b: "2" });
      }
    });

    it("is payload_invalid, with the zod error as cause, when the schema rejects it", () => {
      const result = verify({
        body,
        headers,
        secrets: secret,
        schema: z.object({ type: z.literal("other") }),
        now: clock,
      });
      expect(codeOf(result)).toBe("payload_invalid");
      expect(result.ok ? undefined : result.error.cause).toBeInstanceOf(z.ZodError);
    });
  });

  describe("headers", () => {
    it.each([["webhook-id"], ["webhook-timestamp"], ["webhook-signature"]])(
      "reports a missing %s as missing_header",
      (name) => {
        const { [name as keyof typeof headers]: _removed, ...rest } = headers;
        const result = verify({ body, headers: rest, secrets: secret, now: clock });
        expect(codeOf(result)).toBe("missing_header");
        expect(result.ok ? "" : result.error.message).toContain(name);
      },
    );

    it.each([
      ["an id with '.'", { "webhook-id": "msg.1" }],
      ["an empty id", { "webhook-id": "" }],
      ["a timestamp with a sign", { "webhook-timestamp": `+${NOW}` }],
      ["a timestamp with leading zeros", { "webhook-timestamp": `0${NOW}` }],
      ["a fractional timestamp", { "webhook-timestamp": `${NOW}.5` }],
      ["a timestamp in milliseconds beyond 15 digits", { "webhook-timestamp": "1".repeat(16) }],
      ["a signature without a version", { "webhook-signature": "K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=" }],
      ["a blank signature", { "webhook-signature": "   " }],
    ])("reports %s as malformed_header", (_name, changes) => {
      expect(codeOf(verify({ body, headers: { ...headers, ...changes }, secrets: secret, now: clock }))).toBe(
        "malformed_header",
      );
    });

    // Regression: one token without its version (`v1abc`) made the whole header malformed_header, so a delivery the
    // reference libraries (standardwebhooks, svix) accept was refused here.
    describe("webhook-signature tokens that are not <version>,<signature>", () => {
      const valid = headers["webhook-signature"];
      const withSignature = (value: string) =>
        codeOf(verify({ body, headers: { ...headers, "webhook-signature": value }, secrets: secret, now: clock }));
      it.each([
        ["a token without a comma", "v1abc"],
        ["a version alone", "v1,"],
        ["bare base64", "K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="],
        ["a comma alone", ","],
        ["a signature without a version", ",K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="],
      ])("skips %s beside a valid signature", (_name, junk) => {
        expect(withSignature(`${junk} ${valid}`)).toBe("ok");
        expect(withSignature(`${valid} ${junk}`)).toBe("ok");
      });

      it("is malformed_header when no token is <version>,<signature>, no_matching_signature when none is valid", () => {
        expect(withSignature("v1abc")).toBe("malformed_header");
        expect(withSignature("v1abc v1, xyz")).toBe("malformed_header");
        expect(withSignature("v1abc v1,AAAA")).toBe("no_matching_signature");
        expect(withSignature("v1abc v2,AAAA")).toBe("no_matching_signature");
      });

      it("does not count tokens of a version it does not check toward the 10-per-version cap", () => {
        const unknown = Array.from({ length: 20 }, (_, i) => `v2,${i}`);
        expect(withSignature([...unknown, valid].join(" "))).toBe("ok");
      });
    });

    it("names every missing header in one sentence", () => {
      const result = verify({ body, headers: {}, secrets: secret, now: clock });
      expect(result.ok ? "" : result.error.message).toMatch(
        /^The webhook-id, webhook-timestamp and webhook-signature headers are missing, /,
      );
      const one = verify({ body, headers: { ...headers, "webhook-id": undefined }, secrets: secret, now: clock });
      expect(one.ok ? "" : one.error.message).toMatch(/^The webhook-id header is missing, /);
    });

    it.each([
      ["stripe-signature", "stripe", undefined],
      ["x-hub-signature-256", "github", undefined],
      ["x-shopify-hmac-sha256", "shopify", undefined],
      ["x-slack-signature", "slack", undefined],
      ["webhook-signature", "standardWebhooks (the default)", stripe],
    ])("notices another scheme's header (%s) and says which scheme to pass", (name, option, scheme) => {
      const result = verify({ body, headers: { [name]: "v1,x" }, secrets: secret, now: clock, scheme });
      expect(codeOf(result)).toBe("missing_header");
      expect(result.ok ? "" : result.error.message).toContain(`pass scheme: ${option}.`);
    });

    it("reads repeated signature fields (joined by ', ') as one list", () => {
      const other = sign({ id: "msg_1", timestamp: NOW, body, secrets: generateSecret() })["webhook-signature"];
      const repeated = { ...headers, "webhook-signature": [other, headers["webhook-signature"]] };
      expect(verify({ body, headers: repeated, secrets: secret, now: clock }).ok).toBe(true);
    });

    // Regression: only ", " joins were read; RFC 9110 §5.3 joins repeated field lines with a comma and *optional*
    // whitespace (Envoy joins with a bare ","), and §5.6.1 has recipients ignore empty list elements. A valid
    // signature in the second line ("v1,<other>,v1,<valid>") was read as one signature "<other>,v1,<valid>".
    describe("repeated signature fields joined by a bare ',' (RFC 9110 §5.3, §5.6.1)", () => {
      const valid = headers["webhook-signature"];
      const other = sign({ id: "msg_1", timestamp: NOW, body, secrets: generateSecret() })["webhook-signature"];
      const withSignature = (value: string) =>
        codeOf(verify({ body, headers: { ...headers, "webhook-signature": value }, secrets: secret, now: clock }));
      it.each([
        ["the valid one second", `${other},${valid}`],
        ["the valid one first", `${valid},${other}`],
        ["a line of two signatures, then the valid one", `${other} ${other.replace("v1,", "v1,A")},${valid}`],
        ["an empty line between", `${other},,${valid}`],
        ["an empty line first", `,${valid}`],
      ])("verifies %s", (_name, value) => {
        expect(withSignature(value)).toBe("ok");
      });

      it("still finds no signature in lines that hold none", () => {
        expect(withSignature(`${other},${other.replace("v1,", "v1,B")}`)).toBe("no_matching_signature");
        expect(withSignature(",,")).toBe("malformed_header");
      });

      // Lines of `<version>,<signature>` tokens (or empty ones), joined as RFC 9110 §5.3 allows: a comma, then no
      // whitespace, a space or a tab.
      it("verifies any such join of field lines iff one line holds the valid signature", () => {
        const token = fc.constantFrom(other, "v1,AAAA", "v2,BBBB", `v1a,${"A".repeat(86)}==`);
        const lines = fc.array(
          fc.array(token, { maxLength: 3 }).map((tokens) => tokens.join(" ")),
          { maxLength: 4 },
        );
        fc.assert(
          fc.property(lines, fc.boolean(), fc.nat(), fc.constantFrom(",", ", ", ",\t"), (junk, withValid, at, join) => {
            const all = [...junk];
            if (withValid) all.splice(at % (all.length + 1), 0, valid);
            expect(withSignature(all.join(join)) === "ok").toBe(withValid);
          }),
        );
      });
    });
  });

  describe("what comes from the request never throws", () => {
    const throwing = () => {
      throw new Error("getter blew up");
    };
    it.each([
      ["null headers", null],
      ["undefined headers", undefined],
      ["a string", "webhook-id: msg_1"],
      ["a number", 42],
      ["an array of header lines", ["webhook-id", "msg_1"]],
      [
        "a record whose signature getter throws",
        Object.defineProperty({ ...headers }, "webhook-signature", { get: throwing, enumerable: true }),
      ],
      [
        "a Proxy whose every trap throws",
        new Proxy({}, { get: throwing, ownKeys: throwing, has: throwing, getPrototypeOf: throwing }),
      ],
      ["a Headers look-alike whose get throws", { get: throwing }],
      ["a Headers look-alike whose get returns numbers", { get: () => 5 }],
      ["an object whose `get` getter throws", Object.defineProperty({}, "get", { get: throwing })],
      [
        "a revoked Proxy",
        (() => {
          const { proxy, revoke } = Proxy.revocable({}, {});
          revoke();
          return proxy;
        })(),
      ],
    ])("%s → missing_header", (_name, value) => {
      expect(codeOf(verify({ body, headers: value as never, secrets: secret, now: clock }))).toBe("missing_header");
    });

    // Regression: node:http's req.rawHeaders (or Object.entries(headers)) read as a record without the fields, so the
    // message said the provider's headers were missing instead of saying what to pass.
    it.each([
      ["req.rawHeaders", Object.entries(headers).flat()],
      ["header entries", Object.entries(headers)],
    ])("%s (an array) → missing_header that says to pass req.headers", (_name, value) => {
      const result = verify({ body, headers: value as never, secrets: secret, now: clock });
      expect(codeOf(result)).toBe("missing_header");
      expect(result.ok ? "" : result.error.message).toMatch(/^The request headers are an array .*req\.headers/);
    });

    it("a transparent Proxy around valid headers verifies", () => {
      expect(verify({ body, headers: new Proxy({ ...headers }, {}), secrets: secret, now: clock }).ok).toBe(true);
    });

    it("a throwing getter on another header does not stop verification", () => {
      const noisy = Object.defineProperty({ ...headers }, "x-other", { get: throwing, enumerable: true });
      expect(verify({ body, headers: noisy, secrets: secret, now: clock }).ok).toBe(true);
    });

    it.each([
      ["a Proxy around the bytes", new Proxy(Buffer.from(body), {})],
      ["a Proxy whose traps throw", new Proxy({}, { getPrototypeOf: throwing, get: throwing })],
      [
        "a detached ArrayBuffer",
        (() => {
          const buffer = new ArrayBuffer(8);
          structuredClone(buffer, { transfer: [buffer] });
          return buffer;
        })(),
      ],
      ["an object with a throwing toString", { toString: throwing }],
      ["a symbol", Symbol("body")],
      ["a number", 12],
    ])("a body that is %s → body_not_raw", (_name, value) => {
      expect(codeOf(verify({ body: value as never, headers, secrets: secret, now: clock }))).toBe("body_not_raw");
    });

    it("a DataView over the body verifies", () => {
      const bytes = Buffer.from(body);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      expect(verify({ body: view as never, headers, secrets: secret, now: clock }).ok).toBe(true);
    });
  });

  describe("misuse throws TypeError", () => {
    it.each([
      ["a secret that is a number", { body, headers, secrets: 42 }],
      ["a secret that is an object", { body, headers, secrets: { secret } }],
      ["a list holding a number", { body, headers, secrets: [secret, 7] }],
      ["a secret that is a Buffer", { body, headers, secrets: Buffer.from(secret) }],
      ["a negative tolerance", { body, headers, secrets: secret, toleranceSeconds: -1 }],
      ["a tolerance object without numbers", { body, headers, secrets: secret, toleranceSeconds: { past: "1" } }],
      ["a clock that is not a function", { body, headers, secrets: secret, now: 5 }],
      ["a scheme that is not a scheme", { body, headers, secrets: secret, scheme: {} }],
      ["an unknown parse format", { body, headers, secrets: secret, parse: "xml" }],
      ["a schema that is not a zod schema", { body, headers, secrets: secret, schema: {} }],
      ["no input at all", undefined],
    ])("for %s", (_name, input) => {
      expect(() => verify(input as never)).toThrow(TypeError);
    });

    it.each([
      ["a timestamp in milliseconds", { timestamp: NOW * 1000 }, /looks like milliseconds/],
      ["a parsed body", { body: event }, /exact string or bytes/],
      ["a missing body", { body: undefined }, /exact string or bytes/],
    ])("sign refuses %s with a TypeError that says what to pass", (_name, change, message) => {
      const input = { id: "msg_1", timestamp: NOW, body, secrets: secret, ...change };
      expect(() => sign(input as never)).toThrow(message);
    });

    it("throws for a misconfigured call even when the request is garbage too", () => {
      expect(() => verify({ body: undefined, headers: null, secrets: 42 } as never)).toThrow(TypeError);
      expect(() => verify({ body: undefined, headers: null, secrets: secret, toleranceSeconds: -1 } as never)).toThrow(
        TypeError,
      );
    });
  });
});

describe("WebhookVerificationError", () => {
  it("carries code and scheme, is recognised across copies, and renders a problem without secrets", () => {
    const result = verify({ body, headers, secrets: generateSecret(), now: clock });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(isWebhookVerificationError(result.error)).toBe(true);
    expect(result.error).toMatchObject({ code: "no_matching_signature", scheme: "standard-webhooks", status: 400 });
    const problem = result.error.toProblem().toJSON();
    expect(problem).toMatchObject({ status: 400, code: "webhook_no_matching_signature" });
    expect(problem.detail).not.toContain("fingerprint");
  });

  it("maps consumer misconfiguration to 500 and sender errors to 4xx", () => {
    expect(new WebhookVerificationError("secret_invalid", "x").status).toBe(500);
    expect(new WebhookVerificationError("body_not_raw", "x").status).toBe(500);
    expect(new WebhookVerificationError("missing_header", "x").status).toBe(400);
    expect(new WebhookVerificationError("payload_invalid", "x").status).toBe(422);
  });

  it("regression: a payload that is not JSON is not said to miss a schema nobody gave", () => {
    const detail = new WebhookVerificationError("payload_invalid", "x").toProblem().toJSON().detail;
    expect(detail).toContain("not JSON");
    expect(detail).not.toContain("schema");
  });
});
