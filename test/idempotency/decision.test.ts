import { describe, expect, it } from "vitest";
import { type BeginResult, type Decision, decide, requestFingerprint } from "../../src/idempotency";
import { needsLegacyFingerprint } from "../../src/idempotency/decision";
import { legacyRequestFingerprint } from "../../src/idempotency/fingerprint";

const response = { status: 201, headers: {}, body: new Uint8Array([1]) };

// draft-ietf-httpapi-idempotency-key-header §2.6–2.7, one row per store finding × fingerprint.
const table: [string, BeginResult, string, Decision["kind"]][] = [
  ["fresh key", { kind: "acquired", leaseToken: "t" }, "fp", "execute"],
  [
    "in progress, same request",
    { kind: "in-progress", fingerprint: "fp", retryAfterMs: 10 },
    "fp",
    "conflict-in-progress",
  ],
  [
    "in progress, other request",
    { kind: "in-progress", fingerprint: "fp", retryAfterMs: 10 },
    "fp2",
    "fingerprint-mismatch",
  ],
  ["completed, same request", { kind: "completed", fingerprint: "fp", response }, "fp", "replay"],
  ["completed, other request", { kind: "completed", fingerprint: "fp", response }, "fp2", "fingerprint-mismatch"],
];

describe("decide", () => {
  it.each(table)("%s → %s", (_, found, fingerprint, kind) => {
    expect(decide("key", fingerprint, found).kind).toBe(kind);
  });

  it("carries the lease, the stored response and the time left", () => {
    expect(decide("key", "fp", { kind: "acquired", leaseToken: "t" })).toEqual({
      kind: "execute",
      lease: { key: "key", token: "t" },
    });
    expect(decide("key", "fp", { kind: "completed", fingerprint: "fp", response })).toEqual({
      kind: "replay",
      response,
    });
    expect(decide("key", "fp", { kind: "in-progress", fingerprint: "fp", retryAfterMs: 1500 })).toEqual({
      kind: "conflict-in-progress",
      retryAfterMs: 1500,
    });
  });
});

describe("decide with a record 0.1 wrote (legacy fingerprint)", () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  const json = {
    method: "POST",
    target: "/orders",
    caller: "acct_1",
    body: enc("{}"),
    contentType: "application/json",
  };
  const other = { ...json, body: enc("[]") };
  const current = requestFingerprint(json);
  const legacy = legacyRequestFingerprint(json);

  // One row per record form × request; the request brings both its fingerprints, as the middleware passes them.
  const rows: [string, BeginResult, string | undefined, Decision["kind"]][] = [
    ["legacy record, same request", { kind: "completed", fingerprint: legacy, response }, legacy, "replay"],
    [
      "legacy record, same request, in progress",
      { kind: "in-progress", fingerprint: legacy, retryAfterMs: 10 },
      legacy,
      "conflict-in-progress",
    ],
    [
      "legacy record, other body",
      { kind: "completed", fingerprint: legacyRequestFingerprint(other), response },
      legacy,
      "fingerprint-mismatch",
    ],
    // Without the legacy fingerprint the record is compared with the current one, as before: a mismatch.
    [
      "legacy record, no legacy fingerprint given",
      { kind: "completed", fingerprint: legacy, response },
      undefined,
      "fingerprint-mismatch",
    ],
    ["current record, same request", { kind: "completed", fingerprint: current, response }, legacy, "replay"],
    // A current record is never compared with the legacy form, which ignores Content-Type.
    [
      "current record, other Content-Type",
      { kind: "completed", fingerprint: requestFingerprint({ ...json, contentType: undefined }), response },
      legacy,
      "fingerprint-mismatch",
    ],
  ];

  it.each(rows)("%s → %s", (_, found, legacyFingerprint, kind) => {
    expect(decide("key", current, found, legacyFingerprint).kind).toBe(kind);
  });

  it("asks for the legacy fingerprint only for a record that holds the legacy form", () => {
    expect(needsLegacyFingerprint({ kind: "acquired", leaseToken: "t" })).toBe(false);
    expect(needsLegacyFingerprint({ kind: "completed", fingerprint: current, response })).toBe(false);
    expect(needsLegacyFingerprint({ kind: "completed", fingerprint: legacy, response })).toBe(true);
    expect(needsLegacyFingerprint({ kind: "in-progress", fingerprint: legacy, retryAfterMs: 1 })).toBe(true);
    expect(needsLegacyFingerprint({ kind: "in-progress", fingerprint: "fp", retryAfterMs: 1 })).toBe(false);
  });
});
