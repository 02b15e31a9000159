import { describe, expect, it } from "vitest";
import { isCacheable, isIdempotent, isSafe, METHOD_NAMES, METHODS } from "../../src/http/methods";

describe("method table (RFC 9110 §9.2)", () => {
  it.each([
    ["GET", true, true, true],
    ["HEAD", true, true, true],
    ["POST", false, false, true],
    ["PUT", false, true, false],
    ["DELETE", false, true, false],
    ["CONNECT", false, false, false],
    ["OPTIONS", true, true, false],
    ["TRACE", true, true, false],
    ["PATCH", false, false, false],
  ])("%s: safe=%s idempotent=%s cacheable=%s", (method, safe, idempotent, cacheable) => {
    expect(isSafe(method)).toBe(safe);
    expect(isIdempotent(method)).toBe(idempotent);
    expect(isCacheable(method)).toBe(cacheable);
  });

  it("every safe method is idempotent (§9.2.2)", () => {
    for (const name of METHOD_NAMES) if (METHODS[name].safe) expect(METHODS[name].idempotent).toBe(true);
  });

  it("treats unknown and lower-case methods as unsafe and not idempotent (§9.1: case-sensitive)", () => {
    expect(isSafe("get")).toBe(false);
    expect(isIdempotent("PURGE")).toBe(false);
    expect(isSafe("__proto__")).toBe(false);
  });
});
