import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isEndpointSecret } from "../../../src/webhooks/delivery/endpoint-secret";
import { generateSecret } from "../../../src/webhooks/signing/standard-keys";

describe("isEndpointSecret", () => {
  it("takes whsec_ and the base64 of 24 to 64 bytes, padded or not, and every secret generateSecret makes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), (bytes) => {
        const text = Buffer.from(bytes).toString("base64");
        expect(isEndpointSecret(`whsec_${text}`)).toBe(true);
        expect(isEndpointSecret(`whsec_${text.replace(/=+$/, "")}`)).toBe(true);
      }),
    );
    for (const size of [24, 32, 64]) expect(isEndpointSecret(generateSecret(size))).toBe(true);
  });

  it("refuses other lengths, other prefixes, and text that is not the canonical base64 of its bytes", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 23 }), fc.uint8Array({ minLength: 65, maxLength: 80 })),
        (bytes) => !isEndpointSecret(`whsec_${Buffer.from(bytes).toString("base64")}`),
      ),
    );
    const good = Buffer.alloc(32, 1).toString("base64");
    for (const value of [
      good,
      `whsk_${good}`,
      `WHSEC_${good}`,
      `whsec_${good} `,
      `whsec_${good}==`,
      `whsec_${good.slice(0, 42)}B=`,
      `whsec_${good.replaceAll("A", "-")}`,
      "",
      undefined,
      32,
    ]) {
      expect(isEndpointSecret(value), JSON.stringify(value)).toBe(false);
    }
  });
});
