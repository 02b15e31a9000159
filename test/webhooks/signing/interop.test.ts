import { createHmac } from "node:crypto";
import { sign as octokitSign, verify as octokitVerify } from "@octokit/webhooks-methods";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { describe, expect, it } from "vitest";
import { generateSecret, github, sign, signWith, stripe, verify } from "../../../src/webhooks/signing/index";

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

  it("agrees on rejection: the reference library rejects a tampered body that we also reject", () => {
    const secret = generateSecret();
    const headers = sign({ id: "msg_interop3", timestamp: nowSeconds(), body, secrets: secret });
    const tampered = body.replace("1200", "1201");
    expect(() => new StandardWebhook(secret).verify(tampered, headers)).toThrow();
    expect(verify({ body: tampered, headers, secrets: secret }).ok).toBe(false);
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
