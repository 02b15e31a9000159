/** The capture `verify` reads: RFC 9112's message format, refused where a server would refuse it. */
import { describe, expect, it } from "vitest";
import { type Capture, parseCapture } from "../../src/cli/capture";

const parse = (text: string) => parseCapture(Buffer.from(text));

describe("parseCapture()", () => {
  it("reads the request line, the fields (names lower-cased, repeats joined) and the raw body", () => {
    const capture = parse("POST /hooks HTTP/1.1\r\nX-A: 1\r\nx-a: 2\r\nContent-Type:  application/json \r\n\r\n{}");
    expect(capture).toMatchObject({ method: "POST", target: "/hooks", headers: { "x-a": "1, 2" } });
    expect((capture as Capture).headers["content-type"]).toBe("application/json");
    expect(Buffer.from((capture as Capture).body).toString()).toBe("{}");
  });

  describe("refuses what RFC 9112 makes a server refuse", () => {
    const refused: [string, string, RegExp][] = [
      ["whitespace before the colon (§5.1; regression: accepted)", "webhook-id : msg_1\n\n{}", /§5\.1/],
      ["a tab before the colon (§5.1)", "webhook-id\t: msg_1\n\n{}", /§5\.1/],
      ["a folded line (§5.2)", "webhook-id: msg_1\n  continued: x\n\n{}", /§5\.2/],
      ["a field name that is no token", "web(hook): x\n\n{}", /not a token/],
      ["a line without a colon", "webhook-id msg_1\n\n{}", /not a header line/],
      ["no blank line", "webhook-id: msg_1\n", /no blank line/],
    ];
    for (const [what, text, message] of refused) {
      it(what, () => {
        const result = parse(text);
        expect(typeof result).toBe("string");
        expect(result).toMatch(message);
      });
    }
  });
});
