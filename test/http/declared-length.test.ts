import { describe, expect, it } from "vitest";
import { checkDeclaredLength } from "../../src/http/declared-length";

describe("checkDeclaredLength (RFC 9110 §8.6, RFC 9112 §6.3)", () => {
  it.each<[string, string | number | readonly string[]]>([
    ["digits", "5"],
    ["a number", 5],
    ["OWS around the digits (RFC 9110 §5.5)", " 5\t"],
    ["leading zeros", "005"],
  ])("accepts %s that is the body's length", (_name, declared) => {
    expect(() => checkDeclaredLength(declared, 5)).not.toThrow();
  });

  it.each<[string, string | number | readonly string[]]>([
    ["another length", "4"],
    ["a sign", "+5"],
    ["a fraction", "5.0"],
    ["two values", ["5", "5"]],
    ["an empty value", ""],
  ])("refuses %s", (_name, declared) => {
    expect(() => checkDeclaredLength(declared, 5)).toThrow(RangeError);
  });

  // Node sends the field as written and clients refuse it (undici: HPE_INVALID_CONTENT_LENGTH): the check must stop it.
  it.each([
    ["a no-break space", "5\u00a0"],
    ["a U+FEFF", "\ufeff5"],
    ["a line feed", "5\n"],
    ["a vertical tab", "\u000b5"],
    ["an ideographic space", "5\u3000"],
  ])("regression: refuses digits next to %s, which String.prototype.trim removed", (_name, declared) => {
    expect(() => checkDeclaredLength(declared, 5)).toThrow(RangeError);
  });
});
