/**
 * `rest-webhooks verify`, spawned: a captured request read on stdin, the verdict explained with the library's
 * own diagnosis codes, exit 0 only when it verifies.
 */
import { createHmac } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateSecret, sign } from "../../src/webhooks/signing/index";
import { runCli } from "./run-cli";

const secret = generateSecret();
const body = '{"type":"order.created","timestamp":"2026-11-25T00:00:00.000Z","data":{"id":"ord_1","total":450}}';

function capture(text: string, timestamp = Math.floor(Date.now() / 1000)): Buffer {
  const headers = sign({ id: "msg_1", timestamp, body, secrets: secret });
  const head = [
    "POST /webhooks HTTP/1.1",
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return Buffer.from(`${head.join("\r\n")}\r\n\r\n${text}`);
}

// Each test runs its own processes on its own capture: they run side by side.
describe.concurrent("rest-webhooks verify", () => {
  it("verifies a good capture: exit 0", async () => {
    const run = await runCli(["verify", "--secret", secret], { stdin: capture(body) });
    expect(run.stdout).toContain("✓ verified as standard-webhooks (id msg_1)");
    expect(run.code).toBe(0);
  });

  it("refuses a capture with one body byte changed: exit 1, no_matching_signature, the secret's fingerprint", async () => {
    const changed = body.replace("450", "451"); // same length: the signature, not Content-Length, tells
    const run = await runCli(["verify", "--secret", secret, "--json"], { stdin: capture(changed) });
    expect(run.code).toBe(1);
    const verdict = JSON.parse(run.stdout) as { verified: boolean; code: string; message: string };
    expect(verdict).toMatchObject({ verified: false, code: "no_matching_signature" });
    expect(verdict.message).toMatch(/fingerprint [0-9a-f]{8}/);
  });

  it("explains an old capture: the signature is valid, only the timestamp is off, and --now replays it", async () => {
    const signedAt = Math.floor(Date.now() / 1000) - 3600;
    const [old, replayed] = await Promise.all([
      runCli(["verify", "--secret", secret], { stdin: capture(body, signedAt) }),
      runCli(["verify", "--secret", secret, "--now", String(signedAt)], { stdin: capture(body, signedAt) }),
    ]);
    expect(old.code).toBe(1);
    expect(old.stdout).toContain("timestamp_too_old");
    expect(old.stdout).toContain(`The signature itself is valid: only the timestamp is off`);
    expect(replayed.code).toBe(0);
  });

  describe("a signed timestamp past the range of a Date is printed, not a crash (regression: RangeError)", () => {
    // 15 digits, the most verify accepts; sign() refuses it, a sender need not: HMAC of `${id}.${timestamp}.${body}`.
    const far = 999_999_999_999_999;
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const signature = createHmac("sha256", key).update(`msg_far.${far}.${body}`).digest("base64");
    const head = `webhook-id: msg_far\nwebhook-timestamp: ${far}\nwebhook-signature: v1,${signature}\n\n`;
    const stdin = Buffer.from(`${head}${body}`);

    it("as a timestamp in the future, with the hint that the signature is valid", async () => {
      const run = await runCli(["verify", "--secret", secret], { stdin });
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("timestamp_in_future");
      expect(run.stdout).toContain(`signed Unix time ${far}`);
    });

    it("as the signing time of a capture that verifies with --now", async () => {
      const run = await runCli(["verify", "--secret", secret, "--now", String(far)], { stdin });
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`✓ verified as standard-webhooks (id msg_far), signed Unix time ${far}`);
    });
  });

  it("names the scheme a capture does verify with", async () => {
    const run = await runCli(["verify", "--secret", secret, "--scheme", "stripe"], { stdin: capture(body) });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("missing_header");
    expect(run.stdout).toContain("pass --scheme standard");
  });

  describe("an unreadable capture is misuse: exit 2 with a hint (regression: a stack trace, exit 1)", () => {
    const directory = mkdtempSync(join(tmpdir(), "rest-webhooks-verify-"));
    const cases: [string, string, string][] = [
      ["a missing file", join(directory, "missing.http"), "no such file"],
      ["a directory (EISDIR)", directory, "it is a directory"],
    ];
    for (const [what, path, reason] of cases) {
      it(what, async () => {
        const run = await runCli(["verify", "--secret", secret, "--file", path]);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(`cannot read the capture (--file) ${JSON.stringify(path)}: ${reason}`);
        expect(run.stderr).toContain("rest-webhooks verify --help");
        expect(run.stderr).not.toMatch(/^\s+at /m);
      });
    }
  });

  it("refuses a header line with whitespace before the colon, as a server must (RFC 9112 §5.1): exit 2", async () => {
    const spaced = Buffer.from(capture(body).toString().replace("webhook-id:", "webhook-id :"));
    const run = await runCli(["verify", "--secret", secret], { stdin: spaced });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("whitespace between the field name and the colon");
  });

  it("refuses a capture path as an argument: exit 2 (regression: read an empty stdin)", async () => {
    const run = await runCli(["verify", "--secret", secret, "capture.http"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unexpected argument "capture.http": the command takes options only');
  });

  it("refuses a --now past the whole numbers a double holds: exit 2 (regression: verify's TypeError, a stack trace)", async () => {
    const run = await runCli(["verify", "--secret", secret, "--now", "9".repeat(400)], { stdin: capture(body) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--now must be a whole number");
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });

  it("answers misuse with exit 2 and the help hint", async () => {
    const run = await runCli(["verify", "--secret", secret, "--scheme", "svix"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--scheme must be one of standard, stripe, github, shopify, slack");
    expect(run.stderr).toContain("rest-webhooks verify --help");
  });
});
