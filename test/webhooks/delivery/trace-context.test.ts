import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildDeliveryRequest } from "../../../src/webhooks/delivery/delivery-request";
import {
  checkTraceparent,
  checkTracestate,
  isTraceparent,
  MAX_TRACESTATE_LENGTH,
  MAX_TRACESTATE_MEMBERS,
  outgoingTraceparent,
  tracestateOf,
  truncateTracestate,
} from "../../../src/webhooks/delivery/trace-context";

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

  // A version 00 value, lower case, with known flags only, is what would be built from it: each traced delivery sends
  // it as it is instead of rebuilding it. Strings compare by value, so this pins the value, not the saved allocation.
  it("outgoingTraceparent sends a canonical version 00 value as it is", () => {
    const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`)).filter((id) => !/^0+$/.test(id));
    fc.assert(
      fc.property(hex(32), hex(16), fc.constantFrom("00", "01", "02", "03"), (traceId, spanId, flags) => {
        const value = `00-${traceId}-${spanId}-${flags}`;
        expect(outgoingTraceparent(value)).toBe(value);
      }),
    );
  });

  it.each([
    // §3.2.2.5: reserved flags are zeroed; §3.2.4: a later version is sent as 00 with its first four fields.
    [
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
    ],
    [
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-04",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
    ],
    [
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    ],
    [
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    ],
    ["00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", undefined],
  ])("outgoingTraceparent rebuilds any other: %s → %s", (value, sent) => {
    expect(outgoingTraceparent(value)).toBe(sent);
    if (sent !== undefined) expect(outgoingTraceparent(sent)).toBe(sent);
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
    expect(
      buildDeliveryRequest(delivery, endpoint, 1_700_000_000_000, { traceparent: VALID }).headers.traceparent,
    ).toBe(VALID);
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
      const built = buildDeliveryRequest(delivery, endpoint, 1_700_000_000_000, { traceparent: stored });
      expect(built.headers.traceparent, JSON.stringify(stored)).toBeUndefined();
    }
  });
});

// W3C Trace Context §3.3.1: list = list-member 0*31( OWS "," OWS list-member ), list-member = key "=" value / OWS.
const TRACESTATE_CASES: readonly [string, string | undefined][] = [
  ["congo=t61rcWkgMzE", "congo=t61rcWkgMzE"],
  ["rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"],
  [" rojo=1 ,\tcongo=2\t", "rojo=1,congo=2"], // OWS is not kept
  ["rojo=1,,congo=2", "rojo=1,congo=2"], // §3.3.1.1: empty members are allowed
  ["", ""],
  [" , ", ""],
  ["fw529a3039@dt=b", "fw529a3039@dt=b"], // multi-tenant-key
  ["0tenant@vendor=x", "0tenant@vendor=x"], // a tenant-id may start with a digit
  ["a=b c", "a=b c"], // a space inside a value
  ["0key=x", undefined], // a simple-key starts with a letter
  ["Congo=1", undefined],
  ["congo", undefined],
  ["congo=", undefined], // value ends with a non-blank character
  ["congo=a ", "congo=a"], // ... but trailing OWS is not part of it
  ["congo=a=b", undefined],
  ["congo=caf\u00e9", undefined],
  ["congo=a\r\nx: 1", undefined],
  ["tenant@Vendor=1", undefined],
  ["tenant@vendorvendorvendo=1", undefined], // system-id: 14 characters at most
  ["congo=1,congo=2", undefined], // a key once
  [`k=${"v".repeat(256)}`, `k=${"v".repeat(256)}`],
  [`k=${"v".repeat(257)}`, undefined], // value: 256 characters at most
  [`${"k".repeat(256)}=v`, `${"k".repeat(256)}=v`],
  [`${"k".repeat(257)}=v`, undefined], // key: 256 characters at most
];

describe("tracestate", () => {
  it.each(TRACESTATE_CASES)("%j → %j", (value, kept) => {
    expect(tracestateOf(value)).toBe(kept);
  });

  it("takes 32 members and 512 characters, not 33 nor 513 (§3.3.1.1, §3.3.1.5)", () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join(",");
    expect(tracestateOf(members(MAX_TRACESTATE_MEMBERS))).toBe(members(32));
    expect(tracestateOf(members(MAX_TRACESTATE_MEMBERS + 1))).toBeUndefined();
    const long = (n: number) => `a=${"x".repeat(255)},b=${"y".repeat(n - 260)}`;
    expect(long(MAX_TRACESTATE_LENGTH)).toHaveLength(512);
    expect(tracestateOf(long(MAX_TRACESTATE_LENGTH))).toBe(long(512));
    expect(tracestateOf(long(MAX_TRACESTATE_LENGTH + 1))).toBeUndefined();
    // Optional white space does not count (§3.3.1.5).
    expect(tracestateOf(` ${long(512).replace(",", " ,\t")} `)).toBe(long(512));
  });

  it("refuses a publish option that is not a list, or one without a traceparent; an empty one is none", () => {
    expect(() => checkTracestate("congo", VALID, "publish")).toThrow(/options.tracestate/);
    expect(() => checkTracestate("congo=1", undefined, "publish")).toThrow(/options.traceparent/);
    expect(checkTracestate(undefined, undefined, "publish")).toBeUndefined();
    expect(checkTracestate(" , ", VALID, "publish")).toBeUndefined();
    expect(checkTracestate(" congo=1 ", VALID, "publish")).toBe("congo=1");
  });

  // §3.3.1.5: "the vendor MUST truncate whole entries. Entries larger than 128 characters long SHOULD be removed
  // first. Then entries SHOULD be removed starting from the end of tracestate."
  describe("truncateTracestate (a list received, cut to what is propagated)", () => {
    const member = (key: string, length: number) => `${key}=${"v".repeat(length - key.length - 1)}`;

    it.each<[string, string]>([
      ["congo=1 , rojo=2", "congo=1,rojo=2"],
      ["congo=1,Bad=2,,rojo=3,x=", "congo=1,rojo=3"], // invalid and empty members dropped, the rest kept in order
      ["congo=1,rojo=2,congo=3", "congo=1,rojo=2"], // a repeated key: the left-most (latest position) stays
      ["", ""],
      ["Bad", ""],
    ])("%j → %j", (value, kept) => {
      expect(truncateTracestate(value)).toBe(kept);
    });

    it("past 32 members, drops the right-most", () => {
      const members = Array.from({ length: 40 }, (_, i) => `k${i}=v`);
      expect(truncateTracestate(members.join(","))).toBe(members.slice(0, MAX_TRACESTATE_MEMBERS).join(","));
    });

    it("over 512 characters, drops whole members: over 128 first (right-most first), then from the end", () => {
      const [a, b, c, d] = [member("a", 129), member("b", 200), member("c", 100), member("d", 100)];
      // 129 + 200 + 100 + 100 + 3 commas = 532: dropping b (the right-most long one) is enough.
      expect(truncateTracestate([a, b, c, d].join(","))).toBe([a, c, d].join(","));
      // Six of 100: 605; no long member, so from the end until it fits (five: 504).
      const shorts = Array.from({ length: 6 }, (_, i) => member(`k${i}`, 100));
      expect(truncateTracestate(shorts.join(","))).toBe(shorts.slice(0, 5).join(","));
      // 512 exactly is kept.
      const exact = [member("a", 255), member("b", 256)].join(",");
      expect(exact).toHaveLength(512);
      expect(truncateTracestate(exact)).toBe(exact);
    });

    it("always gives a list tracestateOf takes, whole members of the input, in order", () => {
      const key = fc.stringMatching(/^[a-z][a-z0-9_*/-]{0,20}$/);
      const value = fc.stringMatching(/^[\x21-\x2b\x2d-\x3c\x3e-\x7e]{1,256}$/);
      fc.assert(
        fc.property(fc.array(fc.tuple(key, value), { maxLength: 50 }), (pairs) => {
          const input = pairs.map(([k, v]) => `${k}=${v}`);
          const kept = truncateTracestate(input.join(","));
          expect(tracestateOf(kept)).toBe(kept);
          expect(kept.length).toBeLessThanOrEqual(MAX_TRACESTATE_LENGTH);
          const keptMembers = kept === "" ? [] : kept.split(",");
          let from = 0;
          for (const m of keptMembers) {
            from = input.indexOf(m, from) + 1;
            expect(from).toBeGreaterThan(0);
          }
        }),
      );
    });
  });

  describe("buildDeliveryRequest", () => {
    const endpoint = {
      url: "https://receiver.example/hooks",
      secrets: [{ secret: `whsec_${"A".repeat(32)}`, expiresAt: null }],
    };
    const delivery = { eventId: "evt_1", payload: "{}" };
    const build = (traceparent?: string, tracestate?: string) =>
      buildDeliveryRequest(delivery, endpoint, 1_700_000_000_000, { traceparent, tracestate }).headers;

    // Regression: a traceparent stored by hand went out as it was. §3.2.4: a later version's fields are used "to
    // construct the new traceparent field according to the highest version ... known (00)"; §3.2.2.5: the flags no
    // level defines "Vendors MUST set those to zero".
    it("sends a later version downgraded to 00, and the reserved flags zero", () => {
      const ids = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7";
      expect(build(`01-${ids}-01-future`, "congo=1")).toMatchObject({
        traceparent: `00-${ids}-01`,
        tracestate: "congo=1",
      });
      expect(build(`02-${ids}-ff`).traceparent).toBe(`00-${ids}-03`);
      expect(build(`00-${ids}-fd`).traceparent).toBe(`00-${ids}-01`);
      expect(build(`00-${ids}-02`).traceparent).toBe(`00-${ids}-02`); // Level 2: random-trace-id
    });

    it("sends tracestate beside the traceparent", () => {
      expect(build(VALID, "congo=t61rcWkgMzE")).toMatchObject({ traceparent: VALID, tracestate: "congo=t61rcWkgMzE" });
      expect(build(VALID)).not.toHaveProperty("tracestate");
    });

    // §3.3: tracestate means nothing without the traceparent it belongs to.
    it("never sends tracestate alone", () => {
      expect(build(undefined, "congo=1")).not.toHaveProperty("tracestate");
      expect(build("not-a-traceparent", "congo=1")).not.toHaveProperty("tracestate");
    });

    // A row written by hand: a value the HTTP client refuses must not fail every attempt of the delivery.
    it("does not send a stored tracestate that is not one, nor an empty one", () => {
      for (const stored of ["congo=1\r\nx: 1", "Congo=1", "", " , "]) {
        const headers = build(VALID, stored);
        expect(headers, JSON.stringify(stored)).not.toHaveProperty("tracestate");
        expect(headers.traceparent).toBe(VALID);
      }
    });
  });
});
