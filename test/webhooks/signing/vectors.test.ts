import { describe, expect, it } from "vitest";
import { github, sign, signWith, slack, standardWebhooks, verify } from "../../../src/webhooks/signing/index";

// Published test vectors, restated as data. Each case names where it is published.

/** A clock fixed at `seconds` (plus a minute, so that "now" is not exactly the signed instant). */
const at = (seconds: number) => () => (seconds + 60) * 1000;

describe("Standard Webhooks vectors", () => {
  const cases = [
    {
      source: "libraries/javascript/src/webhook.test.ts, 'sign function works'",
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
      signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    },
    {
      source: "libraries/rust/src/lib.rs, test_sign",
      secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
      id: "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
      timestamp: 1649367553,
      body: '{"email":"test@example.com","username":"test_user"}',
      signature: "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=",
    },
    {
      source: "libraries/go/webhook_asymmetric_test.go, TestAsymmetricWebhookSign (v1a, Ed25519 seed)",
      secret: "whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=",
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
      signature: "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==",
    },
  ];

  for (const vector of cases) {
    describe(vector.source, () => {
      it("signs to the published signature", () => {
        const headers = sign({ id: vector.id, timestamp: vector.timestamp, body: vector.body, secrets: vector.secret });
        expect(headers["webhook-signature"]).toBe(vector.signature);
      });

      it("verifies the published signature", () => {
        const result = verify({
          body: vector.body,
          headers: {
            "webhook-id": vector.id,
            "webhook-timestamp": String(vector.timestamp),
            "webhook-signature": vector.signature,
          },
          secrets: vector.secret,
          now: at(vector.timestamp),
        });
        expect(result.ok).toBe(true);
      });
    });
  }

  // The JavaScript library's cases, on its default secret (given there without the whsec_ prefix).
  describe("libraries/javascript/src/webhook.test.ts cases", () => {
    const secret = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const body = '{"test": 2432232314}';
    const timestamp = 1614265330;
    const valid = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    const headers = { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": valid };
    const run = (changes: Record<string, string | undefined>, key = secret) =>
      verify({ body, headers: { ...headers, ...changes }, secrets: key, now: at(timestamp) });

    it("accepts the secret with and without the whsec_ prefix", () => {
      expect(run({}).ok).toBe(true);
      expect(run({}, `whsec_${secret}`).ok).toBe(true);
    });

    it.each([
      ["missing id", { "webhook-id": undefined }, "missing_header"],
      ["missing timestamp", { "webhook-timestamp": undefined }, "missing_header"],
      ["missing signature", { "webhook-signature": undefined }, "missing_header"],
      ["invalid timestamp", { "webhook-timestamp": "hello" }, "malformed_header"],
      ["invalid signature", { "webhook-signature": "v1,dawfeoifkpqwoekfpqoekf" }, "no_matching_signature"],
      ["partial signature", { "webhook-signature": valid.slice(0, 8) }, "no_matching_signature"],
      ["empty signature", { "webhook-signature": "v1," }, "malformed_header"],
    ] as const)("rejects a %s", (_name, changes, code) => {
      const result = run(changes);
      expect(result.ok ? undefined : result.error.code).toBe(code);
    });

    it("accepts a multi-signature header with one valid signature among others (and an unknown version)", () => {
      const other = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
      const mixed = [other, "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=", valid, other].join(" ");
      expect(run({ "webhook-signature": mixed }).ok).toBe(true);
    });

    it("rejects timestamps just beyond five minutes either way", () => {
      const old = verify({ body, headers, secrets: secret, now: () => (timestamp + 301) * 1000 });
      const early = verify({ body, headers, secrets: secret, now: () => (timestamp - 301) * 1000 });
      expect(old.ok ? undefined : old.error.code).toBe("timestamp_too_old");
      expect(early.ok ? undefined : early.error.code).toBe("timestamp_in_future");
    });
  });

  describe("libraries/rust/src/lib.rs cases", () => {
    const secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const id = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    const body = '{"email":"test@example.com","username":"test_user"}';
    const timestamp = 1649367553;
    const others = [
      "v1,tFtCZ5RDCPxzWQRWXWPgrCgE2frDBe9gjpbWQxnVfsQ=",
      "v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q=",
      "v1,9DfC1c3eeOrXB6w/5dIDydLNQaEyww5KalE5jLBZucE=",
    ];
    const valid = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";
    const check = (signature: string) =>
      verify({
        body,
        headers: { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signature },
        secrets: secret,
        now: at(timestamp),
      });

    it("test_no_verify: a wrong signature fails", () => {
      const result = check("v1,R3PTzyfHASBKHH98a7yexTwaJ4yNIcGhFQc1yuN+BPU=");
      expect(result.ok ? undefined : result.error.code).toBe("no_matching_signature");
    });

    it("test_verify_with_multiple_signatures: one valid signature among three wrong ones verifies", () => {
      expect(check([others[0], others[1], valid, others[2]].join(" ")).ok).toBe(true);
    });

    it("test_no_verify_with_multiple_signatures: three wrong ones fail", () => {
      const result = check(others.join(" "));
      expect(result.ok ? undefined : result.error.code).toBe("no_matching_signature");
    });
  });
});

describe("GitHub, 'Validating webhook deliveries'", () => {
  const secret = "It's a Secret to Everybody";
  const body = "Hello, World!";
  const signature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

  it("signs and verifies the documented example", () => {
    expect(signWith(github, { body, secrets: secret })["x-hub-signature-256"]).toBe(signature);
    const result = verify({
      body,
      headers: { "X-Hub-Signature-256": signature },
      secrets: secret,
      scheme: github,
      parse: "none",
    });
    expect(result).toMatchObject({ ok: true, payload: body, scheme: "github" });
  });
});

describe("@octokit/webhooks-methods test vectors", () => {
  // test/verify.test.ts: GitHub sends JSON indented by two spaces with a final line break.
  const githubJson = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const cases = [
    {
      name: "verify.test.ts, correct signature",
      secret: "mysecret",
      body: githubJson({ foo: "bar" }),
      signature: "sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f",
    },
    {
      name: "sign.test.ts, compact JSON",
      secret: "mysecret",
      body: JSON.stringify({ foo: "bar" }),
      signature: "sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3",
    },
    {
      name: "verify.test.ts #71, special characters (lower-case escape)",
      secret: "development",
      body: githubJson({ foo: "Foo\n\u001b[34mbar: ♥♥♥♥♥♥♥♥\nthis-is-lost\u001b[0m\u001b[2K" }).replace(
        /\\u001b/g,
        "\\u001B",
      ),
      signature: "sha256=9dacf9003316b09be07df56d86a2d0d6872e42a1e6c72c3bad9ff915a7c5603e",
    },
    {
      name: "verify.test.ts #71, escaped escape sequence",
      secret: "development",
      body: githubJson({ foo: "\\u001b" }),
      signature: "sha256=87316067e2011fae39998b18c46a14d83b3e7c3ffdd88fb2ee5afb7d11288e60",
    },
  ];

  for (const vector of cases) {
    it(`${vector.name}: signs to the same signature and verifies it`, () => {
      expect(signWith(github, { body: vector.body, secrets: vector.secret })["x-hub-signature-256"]).toBe(
        vector.signature,
      );
      const result = verify({
        body: Buffer.from(vector.body),
        headers: { "x-hub-signature-256": vector.signature },
        secrets: vector.secret,
        scheme: github,
      });
      expect(result.ok).toBe(true);
    });
  }

  it("verify.test.ts: a wrong signature, a garbage signature and a wrong secret fail", () => {
    const body = githubJson({ foo: "bar" });
    const good = "sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f";
    const code = (signature: string, secret: string) => {
      const result = verify({ body, headers: { "x-hub-signature-256": signature }, secrets: secret, scheme: github });
      return result.ok ? "ok" : result.error.code;
    };
    expect(code("sha256=xxxccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f", "mysecret")).toBe(
      "no_matching_signature",
    );
    expect(code("foo", "mysecret")).toBe("malformed_header");
    expect(code(good, "foo")).toBe("no_matching_signature");
  });

  it("verify.test.ts verifyWithFallback: rotation accepts the secret in either position", () => {
    const body = githubJson({ foo: "bar" });
    const headers = {
      "x-hub-signature-256": "sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f",
    };
    expect(verify({ body, headers, secrets: ["mysecret", "foo"], scheme: github }).ok).toBe(true);
    expect(verify({ body, headers, secrets: ["foo", "mysecret"], scheme: github }).ok).toBe(true);
    expect(verify({ body, headers, secrets: ["foo", "foo2"], scheme: github }).ok).toBe(false);
  });
});

describe("Slack, 'Verifying requests from Slack'", () => {
  const secret = "8f742231b10e8888abcd99yyyzzz85a5";
  const timestamp = 1531420618;
  const body =
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
  const signature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

  it("signs and verifies the documented example, reading the form body", () => {
    expect(signWith(slack, { timestamp, body, secrets: secret })["x-slack-signature"]).toBe(signature);
    const result = verify({
      body,
      headers: { "X-Slack-Signature": signature, "X-Slack-Request-Timestamp": String(timestamp) },
      secrets: secret,
      scheme: slack,
      parse: "form",
      now: at(timestamp),
    });
    expect(result).toMatchObject({
      ok: true,
      timestamp,
      payload: { command: "/webhook-collect", team_id: "T1DC2JH3J" },
    });
  });

  it("the default scheme is Standard Webhooks", () => {
    expect(standardWebhooks.name).toBe("standard-webhooks");
  });
});
