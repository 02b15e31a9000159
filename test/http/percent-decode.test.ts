import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { percentDecodesToUtf8 } from "../../src/http/percent-decode";

const strict = new TextDecoder("utf-8", { fatal: true });
const escaped = (bytes: Uint8Array) => [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");

describe("percentDecodesToUtf8 (WHATWG URL percent-decode, then UTF-8 without replacement)", () => {
  it.each([
    ["no escape", "plain text é", true],
    ["escaped UTF-8, either case of hex", "caf%C3%a9 %F0%9F%98%80", true],
    ["a malformed escape, kept as written", "100% %zz %4", true],
    ["a Latin-1 byte", "caf%E9", false],
    ["a lone continuation byte", "%80", false],
    ["an overlong NUL", "%C0%80", false],
    ["an encoded surrogate", "%ED%A0%80", false],
    ["a sequence cut by raw text", "%C3x", false],
  ])("%s", (_name, raw, expected) => {
    expect(percentDecodesToUtf8(raw)).toBe(expected);
  });

  it("agrees with a strict UTF-8 decoder on the escaped bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (bytes) => {
        let valid = true;
        try {
          strict.decode(bytes);
        } catch {
          valid = false;
        }
        expect(percentDecodesToUtf8(escaped(bytes))).toBe(valid);
      }),
    );
  });
});
