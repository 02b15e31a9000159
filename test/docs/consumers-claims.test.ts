/**
 * docs/webhooks-consumers.md against the code: its troubleshooting table has a row for exactly the codes a failed
 * verification can carry, and the codes it says a dead letter's `lastError` holds are the ones an inbox stores.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { STORED_ERROR_CODES } from "../../src/webhooks/consumer/errors";
import { VERIFICATION_ERROR_CODES } from "../../src/webhooks/signing/index";

const page = readFileSync(new URL("../../docs/webhooks-consumers.md", import.meta.url), "utf8");

describe("docs/webhooks-consumers.md", () => {
  it("has a troubleshooting row for every VerificationErrorCode, and for no other", () => {
    const section = page.slice(page.indexOf("### Troubleshooting by error code"), page.indexOf("### Edge-case policy"));
    const codes = [...section.matchAll(/^\| `([a-z_]+)` /gm)]
      .map((match) => match[1])
      .filter((code) => code !== "code"); // the header row
    expect(codes.sort()).toEqual([...VERIFICATION_ERROR_CODES].sort());
  });

  it("names the codes a dead letter's lastError may hold", () => {
    const sentence = /`lastError\.code` is one of ([^(]+)\(/.exec(page)?.[1] ?? "";
    const codes = [...sentence.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]);
    expect(codes.sort()).toEqual([...STORED_ERROR_CODES].sort());
  });
});
