import { describe, expect, it } from "vitest";
import { randomHex, randomId } from "../../src/random/random-id";

describe("randomId", () => {
  it("is the prefix and a version 4 UUID's hex digits, different every time, across batches", () => {
    // More than one batch of 256, so the refill is crossed.
    const ids = Array.from({ length: 600 }, () => randomId("dlv_"));
    for (const id of ids) expect(id).toMatch(/^dlv_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("randomHex: that many bytes as hex, different every time, interleaved with ids across batches", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const hex = randomHex(7);
      expect(hex).toMatch(/^[0-9a-f]{14}$/);
      seen.add(hex);
      expect(randomId("x_")).toMatch(/^x_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    }
    expect(seen.size).toBe(1000);
  });
});
