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

  // Redis and PostgreSQL read back only strings: a list item of another type failed every begin on the key.
  it("throws TypeError for a kept header whose list holds something other than a string", () => {
    const response = { status: 201, headers: { vary: ["accept", 5] as never }, body: null };
    expect(() => toStoredResponse(response, names)).toThrow(TypeError);
    const ignored = { status: 201, headers: { "x-count": [5] as never, vary: ["accept"] }, body: null };
    expect(toStoredResponse(ignored, names).headers).toEqual({ vary: ["accept"] });
  });

  // Regression: node:http and the Fetch adapter send a name given under two spellings (`Vary` from one middleware,
  // `vary` from the handler) as two field lines, but the stored response kept the last spelling's value alone, so
  // the replay lost `Vary: Origin`.
  it("keeps the values of every spelling of a kept name, in order", () => {
    const response = {
      status: 201,
      headers: { Vary: "Origin", link: "</a>", vary: ["Accept", "Accept-Language"], Link: "</b>" },
      body: null,
    };
    expect(toStoredResponse(response, names).headers).toEqual({
      vary: ["Origin", "Accept", "Accept-Language"],
      link: ["</a>", "</b>"],
    });
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
