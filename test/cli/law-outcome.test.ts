/** What `check` prints of a failing law: the `--header` values only by fingerprint, why a server did not answer. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactFields, runLaw } from "../../src/cli/law-outcome";
import { secretFingerprint } from "../../src/webhooks/signing/index";
import { freePort } from "../support/free-port";

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

describe("runLaw()", () => {
  it('names why the server did not answer: ECONNREFUSED (regression: a bare "fetch failed")', async () => {
    const url = `http://127.0.0.1:${await freePort()}/things`;
    const property = fc.asyncProperty(fc.constant(null), async () => {
      await fetch(url);
    });
    const outcome = await runLaw({ name: "GET answers", property }, "/things", {
      runs: 1,
      seed: 1,
      secretFields: new Set(),
    });
    expect(outcome).toMatchObject({ passed: false, reason: "the server did not answer (ECONNREFUSED)" });
  });
});
