import { createHmac } from "node:crypto";
import { sign as octokitSign, verify as octokitVerify } from "@octokit/webhooks-methods";
import fc from "fast-check";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { describe, expect, it } from "vitest";
import { generateSecret, github, sign, signWith, stripe, verify } from "../../../src/webhooks/signing/index";
import { hmacSecret } from "./scheme-cases";

// Agreement with the peers' own packages, in both directions. The peers read the real clock, so these
// tests sign at the current time; our side uses the same instant through the injected clock.

const body = JSON.stringify({ type: "invoice.paid", data: { id: "in_1", amount: 1200, note: "café ☕" } });
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe("standardwebhooks (the reference JavaScript library)", () => {
  it("verifies our signatures, single and rotated", () => {
    const [current, previous] = [generateSecret(), generateSecret(24)];
    const headers = sign({ id: "msg_interop1", timestamp: nowSeconds(), body, secrets: [previous, current] });
    expect(new StandardWebhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new StandardWebhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("signs what we verify, including a Buffer body", () => {
    const secret = generateSecret();
    const timestamp = nowSeconds();
    const signature = new StandardWebhook(secret).sign("msg_interop2", new Date(timestamp * 1000), body);
    const headers = {
      "webhook-id": "msg_interop2",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature,
    };
    const fromString = verify({ body, headers, secrets: secret, now: () => timestamp * 1000 });
    const fromBytes = verify({ body: Buffer.from(body), headers, secrets: secret, now: () => timestamp * 1000 });
    expect(fromString).toMatchObject({ ok: true, id: "msg_interop2", timestamp, payload: JSON.parse(body) });
    expect(fromBytes.ok).toBe(true);
  });

  it("signs exactly the signature it signs, for a string and a Buffer body, and under a rotated list", () => {
    const [current, previous] = [generateSecret(), generateSecret(64)];
    const timestamp = nowSeconds();
    const at = new Date(timestamp * 1000);
    for (const payload of [body, Buffer.from(body)]) {
      const ours = sign({ id: "msg_same", timestamp, body: payload, secrets: [current, previous] });
      const theirs = [current, previous].map((key) => new StandardWebhook(key).sign("msg_same", at, payload));
      expect(ours).toEqual({
        "webhook-id": "msg_same",
        "webhook-timestamp": String(timestamp),
        "webhook-signature": theirs.join(" "),
      });
      expect(new SvixWebhook(current).sign("msg_same", at, payload)).toBe(theirs[0]);
    }
  });

  it("agrees on rejection: the reference library rejects a tampered body that we also reject", () => {
    const secret = generateSecret();
    const headers = sign({ id: "msg_interop3", timestamp: nowSeconds(), body, secrets: secret });
    const tampered = body.replace("1200", "1201");
    expect(() => new StandardWebhook(secret).verify(tampered, headers)).toThrow();
    expect(verify({ body: tampered, headers, secrets: secret }).ok).toBe(false);
  });
});

// Standard Webhooks, "Webhook headers": consumers try each signature until one matches. A header of valid
// signatures and junk tokens (no comma, no version, no signature, unknown versions, wrong signatures) verifies iff
// one valid signature is in it, for us as for the reference library and svix.
describe("a webhook-signature of valid signatures among junk tokens", () => {
  const secret = generateSecret();
  const junk = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9+/=]{1,20}$/),
    fc.stringMatching(/^v1a?,?$/),
    fc.stringMatching(/^,[A-Za-z0-9+/=]{0,44}$/),
    fc.stringMatching(/^v[0-9a-z]{1,3},[A-Za-z0-9+/=]{1,44}$/),
    fc.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
  );
  it("verifies iff one valid signature is present, as standardwebhooks and svix do", () => {
    fc.assert(
      fc.property(fc.array(junk, { maxLength: 6 }), fc.nat(2), fc.nat(), (tokens, validCount, at) => {
        const timestamp = nowSeconds();
        const signed = sign({ id: "msg_junk", timestamp, body, secrets: secret });
        const list = [...tokens];
        for (let i = 0; i < validCount; i++) list.splice(at % (list.length + 1), 0, signed["webhook-signature"]);
        const headers = { ...signed, "webhook-signature": list.join(" ") };
        const ours = verify({ body, headers, secrets: secret, now: () => timestamp * 1000 }).ok;
        const agrees = (check: () => unknown) => {
          try {
            check();
            return true;
          } catch {
            return false;
          }
        };
        expect(ours).toBe(validCount > 0);
        expect(agrees(() => new StandardWebhook(secret).verify(body, headers))).toBe(ours);
        expect(agrees(() => new SvixWebhook(secret).verify(body, headers))).toBe(ours);
      }),
      { numRuns: 200 },
    );
  });
});

describe("svix", () => {
  it("verifies our signatures", () => {
    const secret = generateSecret();
    const headers = sign({ id: "msg_svix1", timestamp: nowSeconds(), body, secrets: secret });
    expect(new SvixWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("signs what we verify, under the svix-* header names too", () => {
    const secret = generateSecret();
    const timestamp = nowSeconds();
    const signature = new SvixWebhook(secret).sign("msg_svix2", new Date(timestamp * 1000), body);
    const svixHeaders = { "svix-id": "msg_svix2", "svix-timestamp": String(timestamp), "svix-signature": signature };
    const result = verify({ body, headers: svixHeaders, secrets: secret, now: () => timestamp * 1000 });
    expect(result).toMatchObject({ ok: true, id: "msg_svix2" });
  });
});

describe("stripe", () => {
  const client = new Stripe("sk_test_interop");
  const secret = "whsec_test_interop_0123456789";

  it("its test header generator verifies with ours", () => {
    const timestamp = nowSeconds();
    const header = client.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
    const result = verify({
      body,
      headers: { "Stripe-Signature": header },
      secrets: secret,
      scheme: stripe,
      now: () => timestamp * 1000,
    });
    expect(result).toMatchObject({ ok: true, timestamp, scheme: "stripe" });
  });

  it("signs exactly the header its test header generator makes", () => {
    const timestamp = nowSeconds();
    const theirs = client.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
    expect(signWith(stripe, { body, secrets: secret, timestamp })).toEqual({ "stripe-signature": theirs });
    expect(signWith(stripe, { body: Buffer.from(body), secrets: secret, timestamp })["stripe-signature"]).toBe(theirs);
  });

  it("ours passes stripe.webhooks.constructEvent", () => {
    const headers = signWith(stripe, { body, secrets: secret, timestamp: nowSeconds() });
    const event = client.webhooks.constructEvent(body, headers["stripe-signature"]!, secret);
    expect(event).toEqual(JSON.parse(body));
  });

  it("takes the event id from the payload", () => {
    const event = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid" });
    const timestamp = nowSeconds();
    const header = client.webhooks.generateTestHeaderString({ payload: event, secret, timestamp });
    const result = verify({
      body: event,
      headers: { "stripe-signature": header },
      secrets: secret,
      scheme: stripe,
      now: () => timestamp * 1000,
    });
    expect(result).toMatchObject({ ok: true, id: "evt_1" });
  });

  it("keys the HMAC with the whole whsec_ string, as constructEvent does, not with its decoded base64", () => {
    const timestamp = nowSeconds();
    const endpointSecret = generateSecret();
    const decodedKey = Buffer.from(endpointSecret.slice("whsec_".length), "base64");
    const decodedHeader = `t=${timestamp},v1=${createHmac("sha256", decodedKey).update(`${timestamp}.${body}`).digest("hex")}`;
    const literalHeader = client.webhooks.generateTestHeaderString({
      payload: body,
      secret: endpointSecret,
      timestamp,
    });
    const check = (header: string) =>
      verify({
        body,
        headers: { "stripe-signature": header },
        secrets: endpointSecret,
        scheme: stripe,
        now: () => timestamp * 1000,
      });
    expect(() => client.webhooks.constructEvent(body, decodedHeader, endpointSecret)).toThrow();
    const decoded = check(decodedHeader);
    expect(decoded.ok ? undefined : decoded.error.code).toBe("no_matching_signature");
    expect(check(literalHeader).ok).toBe(true);
  });
});

describe("@octokit/webhooks-methods", () => {
  const secret = "octokit interop secret";

  it("its sign agrees with ours, and its verify accepts ours", async () => {
    const ours = signWith(github, { body, secrets: secret })["x-hub-signature-256"]!;
    expect(await octokitSign(secret, body)).toBe(ours);
    expect(await octokitVerify(secret, body, ours)).toBe(true);
  });

  it("we verify its signatures", async () => {
    const theirs = await octokitSign(secret, body);
    const result = verify({
      body,
      headers: { "x-hub-signature-256": theirs, "x-github-delivery": "d-1" },
      secrets: secret,
      scheme: github,
    });
    expect(result).toMatchObject({ ok: true, id: "d-1", timestamp: undefined });
  });
});

// Laws over arbitrary inputs: for any body (text of any characters, lone surrogates included), id and secret, our
// signer writes exactly what the peer's writes. Text only: the peers hash text, while we hash bytes as they are.
describe("signing agrees with the peers for any input", () => {
  const text = fc.string({ maxLength: 200, unit: "grapheme" });
  const anyText = fc.string({ maxLength: 200 });
  const id = fc.string({ minLength: 1, maxLength: 40, unit: fc.constantFrom(..."abcXYZ019_-:") });
  const timestamp = fc.integer({ min: 0, max: 99_999_999_999 });
  const runs = { numRuns: 60 };

  it("standardwebhooks: the same webhook-signature", () => {
    fc.assert(
      fc.property(id, timestamp, fc.oneof(text, anyText), hmacSecret, (idValue, ts, bodyValue, secret) => {
        const ours = sign({ id: idValue, timestamp: ts, body: bodyValue, secrets: secret })["webhook-signature"];
        expect(ours).toBe(new StandardWebhook(secret).sign(idValue, new Date(ts * 1000), bodyValue));
      }),
      runs,
    );
  });

  it("stripe: the same Stripe-Signature", () => {
    const client = new Stripe("sk_test_interop");
    const secret = fc.string({ minLength: 1, maxLength: 40, unit: fc.constantFrom(..."abcXYZ019") });
    fc.assert(
      // stripe-node reads a timestamp of 0 as none given (`timestamp || now`): its header then bears the present time.
      fc.property(
        fc.integer({ min: 1, max: 99_999_999_999 }),
        fc.oneof(text, anyText),
        secret,
        (ts, bodyValue, tail) => {
          const key = `whsec_${tail}`;
          const theirs = client.webhooks.generateTestHeaderString({ payload: bodyValue, secret: key, timestamp: ts });
          expect(signWith(stripe, { body: bodyValue, secrets: key, timestamp: ts })["stripe-signature"]).toBe(theirs);
        },
      ),
      runs,
    );
  });

  it("@octokit/webhooks-methods: the same X-Hub-Signature-256", async () => {
    const secret = fc
      .string({ minLength: 1, maxLength: 40 })
      .filter((value) => value.trim() === value && !/^(sk|rk|pk)_(live|test)_/.test(value));
    await fc.assert(
      fc.asyncProperty(fc.oneof(text, anyText).filter(Boolean), secret, async (bodyValue, key) => {
        const ours = signWith(github, { body: bodyValue, secrets: key })["x-hub-signature-256"];
        expect(ours).toBe(await octokitSign(key, bodyValue));
      }),
      runs,
    );
  });
});
