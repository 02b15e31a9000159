/** What `check` prints of a failing law: the `--header` values only by fingerprint. */
import { describe, expect, it } from "vitest";
import { redactFields } from "../../src/cli/law-outcome";
import { secretFingerprint } from "../../src/webhooks/signing/index";

const transcript = [
  "#1 POST /things HTTP/1.1",
  "X-Api-Key: k1-S3CRET",
  `authorization: Bearer … (fingerprint ${secretFingerprint("t")})`,
  "content-type: application/json",
  "",
  '{"name":"x-api-key"}',
].join("\n");

describe("redactFields() (regression: check printed --header values)", () => {
  it("masks the named fields, whatever the case, and leaves the others", () => {
    const text = redactFields(transcript, new Set(["x-api-key", "authorization"]));
    expect(text).not.toContain("k1-S3CRET");
    expect(text).toContain(`X-Api-Key: … (fingerprint ${secretFingerprint("k1-S3CRET")})`);
    expect(text).toContain("content-type: application/json");
    expect(text).toContain('{"name":"x-api-key"}');
  });

  it("does not mask a credential field twice (the transcript already did)", () => {
    const text = redactFields(transcript, new Set(["authorization"]));
    expect(text).toContain(`authorization: Bearer … (fingerprint ${secretFingerprint("t")})`);
  });

  it("changes nothing without names", () => {
    expect(redactFields(transcript, new Set())).toBe(transcript);
  });
});
