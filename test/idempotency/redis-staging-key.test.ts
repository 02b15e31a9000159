import fc from "fast-check";
import { Command } from "ioredis";
import { describe, expect, it } from "vitest";
import { stagingKey } from "../../src/idempotency/redis/staging-key";

// ioredis's own slot computation (the Redis Cluster hash-tag rule) is the reference, with its keyPrefix applied as
// the client applies it to every key it sends.
const slot = (key: string, keyPrefix = "") => new Command("get", [key], { keyPrefix }).getSlot();

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

  it("names a key in the record key's slot as the client sends both, after its keyPrefix", () => {
    const part = fc.stringMatching(/^[a-z{}:]{0,6}$/);
    fc.assert(
      fc.property(part, part, part, (keyPrefix, a, b) => {
        const recordKey = a + b;
        const staged = stagingKey(recordKey, "n0", keyPrefix);
        if (staged === undefined) return true;
        return staged !== recordKey && slot(staged, keyPrefix) === slot(recordKey, keyPrefix);
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    ["app:", "idempotency:abc", "{app:idempotency:abc}:staged:n"],
    ["app:", "{tenant}:abc", "{tenant}:abc:staged:n"],
    ["{app}:", "abc", "abc:staged:n"],
    ["a{", "b", undefined],
  ])("with keyPrefix %s: %s → %s", (keyPrefix, recordKey, expected) => {
    expect(stagingKey(recordKey, "n", keyPrefix)).toBe(expected);
  });

  it("stages under a keyPrefix without a hash tag in the record key's slot (it did not: CROSSSLOT on a cluster)", () => {
    for (const recordKey of ["idempotency:order-1", "idempotency:order-2", "x"]) {
      const staged = stagingKey(recordKey, "n", "app:") as string;
      expect(slot(staged, "app:")).toBe(slot(recordKey, "app:"));
    }
  });
});
