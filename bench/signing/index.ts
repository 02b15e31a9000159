/**
 * bench/signing: verifying one delivery, ours against the peers' own packages and a bare node:crypto limit,
 * on 1 KiB and 64 KiB JSON bodies. Every contender's answer is checked before timing.
 */

import { deepStrictEqual, strictEqual } from "node:assert";
import { createHmac, timingSafeEqual } from "node:crypto";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { generateSecret, github, sign, signWith, stripe, verify } from "../../src/webhooks/signing/index";
import { measure } from "./measure";

const SIZES = [
  { label: "1KiB", bytes: 1024 },
  { label: "64KiB", bytes: 64 * 1024 },
] as const;

function jsonBody(bytes: number): string {
  const items: { id: number; name: string; tags: string[] }[] = [];
  let text = "";
  for (let i = 0; text.length < bytes; i++) {
    items.push({ id: i, name: `item-${i}`, tags: ["a", "b"] });
    text = JSON.stringify({ type: "invoice.paid", data: { items } });
  }
  return text;
}

const secret = generateSecret(24);
const stripeSecret = "whsec_bench_0123456789abcdef";
const githubSecret = "bench github secret";
const stripeClient = new Stripe("sk_test_bench");
const standardPeer = new StandardWebhook(secret);
const svixPeer = new SvixWebhook(secret);
const rawKey = Buffer.from(secret.slice("whsec_".length), "base64");

/**
 * The limit: a minimal correct Standard Webhooks verifier on bare node:crypto (read the three headers,
 * check the window, HMAC, constant-time compare) that returns the parsed event, as every contender but
 * octokit does. `parse: false` is the same without JSON.parse.
 */
function bare(body: string, headers: Record<string, string>, parse: boolean): unknown {
  const id = headers["webhook-id"]!;
  const timestamp = headers["webhook-timestamp"]!;
  const signature = headers["webhook-signature"]!;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) throw new Error("timestamp");
  const expected = createHmac("sha256", rawKey).update(`${id}.${timestamp}.`).update(body).digest();
  const given = Buffer.from(signature.slice(3), "base64");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new Error("signature");
  return parse ? JSON.parse(body) : true;
}

const ratios: string[] = [];
const ratio = (label: string, peer: string, ours: number, theirs: number) =>
  ratios.push(`ratio: ${label} vs ${peer} = ${(ours / theirs).toFixed(2)}`);
const format = (ops: number) => Math.round(ops).toLocaleString("en-US").padStart(12);

for (const size of SIZES) {
  const body = jsonBody(size.bytes);
  const event = JSON.parse(body);
  const now = Math.floor(Date.now() / 1000);
  const headers = sign({ id: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", timestamp: now, body, secrets: secret });
  const stripeHeaders = signWith(stripe, { timestamp: now, body, secrets: stripeSecret });
  const stripeHeader = stripeHeaders["stripe-signature"]!;
  const githubHeaders = signWith(github, { body, secrets: githubSecret });
  const githubSignature = githubHeaders["x-hub-signature-256"]!;

  const contenders = {
    ours: () => verify({ body, headers, secrets: secret }),
    "ours (parse: none)": () => verify({ body, headers, secrets: secret, parse: "none" }),
    "ours, stripe scheme": () => verify({ body, headers: stripeHeaders, secrets: stripeSecret, scheme: stripe }),
    "ours, github scheme (parse: none)": () =>
      verify({ body, headers: githubHeaders, secrets: githubSecret, scheme: github, parse: "none" }),
    standardwebhooks: () => standardPeer.verify(body, headers),
    svix: () => svixPeer.verify(body, headers),
    stripe: () => stripeClient.webhooks.constructEvent(body, stripeHeader, stripeSecret),
    "@octokit/webhooks-methods": { async: () => octokitVerify(githubSecret, body, githubSignature) },
    "bare node:crypto": () => bare(body, headers, true),
    "bare node:crypto (no parse)": () => bare(body, headers, false),
  };

  // Correctness first: every contender accepts the delivery and returns the event (or true).
  for (const name of ["ours", "ours, stripe scheme"] as const) {
    const result = contenders[name]();
    strictEqual(result.ok, true, name);
    if (result.ok) deepStrictEqual(result.payload, event, name);
  }
  strictEqual(contenders["ours (parse: none)"]().ok, true);
  strictEqual(contenders["ours, github scheme (parse: none)"]().ok, true);
  deepStrictEqual(contenders.standardwebhooks(), event);
  deepStrictEqual(contenders.svix(), event);
  deepStrictEqual(contenders.stripe(), event);
  strictEqual(await contenders["@octokit/webhooks-methods"].async(), true);
  deepStrictEqual(contenders["bare node:crypto"](), event);
  strictEqual(contenders["bare node:crypto (no parse)"](), true);
  // ...and rejects a tampered body.
  const tampered = `${body.slice(0, -2)} }`;
  strictEqual(verify({ body: tampered, headers, secrets: secret }).ok, false);

  console.log(`\nverify, ${size.label} JSON body (${Buffer.byteLength(body)} bytes), ops/s:`);
  const ops = await measure(contenders);
  for (const [name, value] of Object.entries(ops)) console.log(`  ${name.padEnd(36)}${format(value)}`);

  const label = `verify ${size.label}`;
  ratio(label, "standardwebhooks", ops.ours!, ops.standardwebhooks!);
  ratio(label, "svix", ops.ours!, ops.svix!);
  ratio(label, "stripe", ops["ours, stripe scheme"]!, ops.stripe!);
  ratio(
    label,
    "@octokit/webhooks-methods",
    ops["ours, github scheme (parse: none)"]!,
    ops["@octokit/webhooks-methods"]!,
  );
  ratio(label, "bare node:crypto", ops.ours!, ops["bare node:crypto"]!);
  ratio(
    `verify ${size.label} (parse: none)`,
    "bare node:crypto (no parse)",
    ops["ours (parse: none)"]!,
    ops["bare node:crypto (no parse)"]!,
  );
}

console.log(
  "\nPeers verify their own scheme: standardwebhooks/svix Standard Webhooks, stripe its Stripe-Signature, octokit GitHub's" +
    " sha256= (async, awaited each time; it returns a boolean, so ours runs with parse: none there). The bare limit parses" +
    " the JSON like ours; the (no parse) pair compares signature checking alone.\n",
);
for (const line of ratios) console.log(line);
