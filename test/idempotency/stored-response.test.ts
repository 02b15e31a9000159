import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_REPLAY_HEADERS, toStoredResponse } from "../../src/idempotency";

const names = new Set(DEFAULT_REPLAY_HEADERS);

describe("toStoredResponse", () => {
  // Regression: Buffer#slice is a view, not a copy, so a handler reusing its Buffer rewrote the stored response.
  it("keeps the stored body when the handler reuses its Node Buffer", () => {
    const scratch = Buffer.from("order-1 created");
    const stored = toStoredResponse({ status: 201, headers: {}, body: scratch }, names);
    scratch.write("XXXXXXXXXXXXXXX");
    expect(Buffer.from(stored.body).toString()).toBe("order-1 created");
    expect(stored.body.buffer).not.toBe(scratch.buffer);
  });

  it("copies the body's bytes whatever view they come in, and only those bytes", () => {
    const views = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
      fc
        .tuple(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), fc.nat())
        .map(([bytes, a, b]) => bytes.subarray(a % bytes.length, b % (bytes.length + 1))),
    );
    fc.assert(
      fc.property(views, (body) => {
        const before = Uint8Array.from(body);
        const stored = toStoredResponse({ status: 200, headers: {}, body }, names);
        body.fill(0xaa);
        expect([...stored.body]).toEqual([...before]);
        expect(stored.body.byteLength).toBe(stored.body.buffer.byteLength);
      }),
    );
  });
});
