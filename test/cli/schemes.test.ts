/**
 * The `--secret` and `--scheme` options: a secret that is missing or that the scheme cannot use is misuse (exit 2),
 * never a verdict on the request, the capture or the consumer.
 */
import { describe, expect, it } from "vitest";
import { consumerSecrets, secretsOption } from "../../src/cli/schemes";
import { generateSecret, github, standardWebhooks } from "../../src/webhooks/signing/index";
import { runCli } from "./run-cli";
import { usageError } from "./usage-error";

describe("secretsOption()", () => {
  it("keeps every --secret, in order", () => {
    expect(secretsOption(["a", "b"])).toEqual(["a", "b"]);
  });

  it('refuses an empty --secret, as `--secret "$UNSET"` passes one', () => {
    const error = usageError(() => secretsOption(["whsec_x", ""]));
    expect(error.code).toBe("cli_usage");
    expect(error.message).toContain("--secret #2 is empty");
  });
});

describe("consumerSecrets()", () => {
  it("refuses a secret the scheme cannot use, as createWebhookConsumer does, naming it by fingerprint", () => {
    const error = usageError(() => consumerSecrets(standardWebhooks, ["whsec_!!!"]));
    expect(error.message).toMatch(/^--secret: Secret #1 whsec_… \(fingerprint [0-9a-f]{8}\) is not whsec_/);
    expect(error.message).not.toContain("!!!");
  });

  it("takes secrets the scheme can use", () => {
    expect(() => consumerSecrets(standardWebhooks, [generateSecret()])).not.toThrow();
    expect(() => consumerSecrets(github, ["my-github-secret"])).not.toThrow();
  });
});

// Regression: `--secret "$WEBHOOK_SECRET"` with the variable unset. verify said "✗ not verified: secret_invalid"
// (exit 1, as for a forged capture), listen started and answered every delivery 500, and check --webhook-consumer
// failed the consumer ("a correctly signed delivery got no answer", exit 1) without sending it anything.
describe("an empty --secret is misuse: exit 2", () => {
  const capture = "webhook-id: msg_1\nwebhook-timestamp: 1\nwebhook-signature: v1,abc\n\n{}";
  const commands: [string, string[]][] = [
    ["verify", ["verify", "--secret", ""]],
    ["listen", ["listen", "--port", "0", "--secret", ""]],
    ["send", ["send", "http://127.0.0.1:9/hooks", "--type", "t", "--secret", ""]],
    ["check --webhook-consumer", ["check", "--webhook-consumer", "http://127.0.0.1:9/hooks", "--secret", ""]],
  ];
  for (const [name, args] of commands) {
    it(name, async () => {
      const run = await runCli(args, { stdin: capture });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("--secret #1 is empty");
      expect(run.stdout).toBe("");
    }, 10_000); // listen used to start listening, and never end
  }
});

describe("listen with a secret its scheme cannot use", () => {
  it("is misuse: exit 2 (regression: it listened, and answered every delivery 500 secret_invalid)", async () => {
    const run = await runCli(["listen", "--port", "0", "--secret", "whsec_!!!"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("is not whsec_ followed by base64");
    expect(run.stdout).toBe("");
  }, 10_000);
});
