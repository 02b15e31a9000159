import fc from "fast-check";
import { Command } from "ioredis";
import { describe, expect, it } from "vitest";
import { stagingKey } from "../../src/idempotency/redis/staging-key";

// ioredis's own slot computation (the Redis Cluster hash-tag rule) is the reference.
const slot = (key: string) => new Command("get", [key]).getSlot();

describe("stagingKey", () => {
  it.each([
    ["idempotency:abc", "{idempotency:abc}:staged:n"],
    ["{tenant}:abc", "{tenant}:staged:n".replace("}:", "}:abc:")],
    ["a{b", "{a{b}:staged:n"],
    ["{}x", undefined],
    ["a}b", undefined],
    ["", undefined],
  ])("%s → %s", (recordKey, expected) => {
    expect(stagingKey(recordKey, "n")).toBe(expected);
  });

  it("names a key in the record key's cluster slot, or nothing", () => {
    const part = fc.stringMatching(/^[a-z{}:]{0,6}$/);
    fc.assert(
      fc.property(part, part, part, (a, b, c) => {
        const recordKey = a + b + c;
        const staged = stagingKey(recordKey, "0b6f3c2e-3d4f-4a5b-8c7d-9e0f1a2b3c4d");
        if (staged === undefined) return recordKey === "" || recordKey.includes("}");
        return staged !== recordKey && slot(staged) === slot(recordKey);
      }),
      { numRuns: 2000 },
    );
  });
});
