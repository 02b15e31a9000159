import { describe, expect, it } from "vitest";
import { type BeginResult, type Decision, decide } from "../../src/idempotency";

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
