import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildDeliveryRequest } from "../../../src/webhooks/delivery/delivery-request";
import { checkTraceparent, isTraceparent } from "../../../src/webhooks/delivery/trace-context";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// W3C Trace Context §3.2.2 (and §3.2.4 for versions after 00).
const CASES: readonly [string, boolean][] = [
  [VALID, true],
  ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true],
  ["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true],
  // Regression: a later version's fields are sent as a header value; a control character there made every attempt
  // of the delivery fail with a TypeError, without counting one, for ever (RFC 9110 §5.5).
  ["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-\u0000", false],
  ["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-a\tb", false],
  ["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-\u00e9", false],
  [`${VALID}-extra`, false], // version 00 has exactly four fields
  ["ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false],
  ["00-00000000000000000000000000000000-00f067aa0ba902b7-01", false],
  ["00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false],
  ["00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false], // lower-case hex only
  ["00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false],
  ["", false],
];

describe("traceparent", () => {
  it.each(CASES)("%s → %s", (value, valid) => {
    expect(isTraceparent(value)).toBe(valid);
  });

  it("accepts every well-formed version 00 value with non-zero ids", () => {
    const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
    fc.assert(
      fc.property(hex(32), hex(16), hex(2), (traceId, spanId, flags) => {
        const zero = /^0+$/.test(traceId) || /^0+$/.test(spanId);
        expect(isTraceparent(`00-${traceId}-${spanId}-${flags}`)).toBe(!zero);
      }),
    );
  });

  it("refuses a malformed publish option with a TypeError naming it", () => {
    expect(() => checkTraceparent("nope", "publish")).toThrow(/options.traceparent/);
    expect(() => checkTraceparent(undefined, "publish")).not.toThrow();
  });

  it("buildDeliveryRequest sends traceparent only when given one", () => {
    const endpoint = {
      url: "https://receiver.example/hooks",
      secrets: [{ secret: `whsec_${"A".repeat(32)}`, expiresAt: null }],
    };
    const delivery = { eventId: "evt_1", payload: "{}" };
    expect(buildDeliveryRequest(delivery, endpoint, 1_700_000_000_000).headers.traceparent).toBeUndefined();
    expect(buildDeliveryRequest(delivery, endpoint, 1_700_000_000_000, "ua", VALID).headers.traceparent).toBe(VALID);
  });

  // Regression: a traceparent stored by hand or by an earlier version (which took any character after a later
  // version's fourth field) was sent as it was, and the HTTP client refused every attempt of the delivery.
  it("buildDeliveryRequest does not send a stored traceparent that is not one", () => {
    const endpoint = {
      url: "https://receiver.example/hooks",
      secrets: [{ secret: `whsec_${"A".repeat(32)}`, expiresAt: null }],
    };
    const delivery = { eventId: "evt_1", payload: "{}" };
    for (const stored of ["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-\u0000", "x\r\ny: 1", ""]) {
      const built = buildDeliveryRequest(delivery, endpoint, 1_700_000_000_000, "ua", stored);
      expect(built.headers.traceparent, JSON.stringify(stored)).toBeUndefined();
    }
  });
});
