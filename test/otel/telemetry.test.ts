import { TraceFlags } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { formatTraceparent, parseTraceparent } from "../../src/otel/index";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
const traceparent = (flags: string, version = "00", rest = "") => `${version}-${TRACE_ID}-${SPAN_ID}-${flags}${rest}`;

describe("trace-flags (W3C Trace Context §3.2.2.5)", () => {
  // Regression: every bit was kept as received, and formatTraceparent wrote them out again, though the flags no level
  // defines are reserved: "Vendors MUST set those to zero" (§3.2.2.5, "Other Flags"; processing model, step 2.2).
  it.each([
    ["00", 0],
    ["01", TraceFlags.SAMPLED],
    ["02", 0x02], // Level 2: random-trace-id, kept as received
    ["03", 0x03],
    ["04", 0],
    ["05", TraceFlags.SAMPLED],
    ["fd", TraceFlags.SAMPLED],
    ["ff", 0x03],
  ])("version 00, flags %s → %i", (flags, expected) => {
    expect(parseTraceparent(traceparent(flags))?.traceFlags).toBe(expected);
  });

  // §3.2.4: a higher version is read by its first four fields; only the flags this version defines are taken.
  it("a later version: the known bits of its flags, the fields after them ignored", () => {
    expect(parseTraceparent(traceparent("ff", "01", "-future"))).toStrictEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 0x03,
      isRemote: true,
    });
  });

  it("formatTraceparent writes version 00 with the reserved bits zero", () => {
    const context = { traceId: TRACE_ID, spanId: SPAN_ID, isRemote: false };
    expect(formatTraceparent({ ...context, traceFlags: 0xff })).toBe(traceparent("03"));
    expect(formatTraceparent({ ...context, traceFlags: 0x05 })).toBe(traceparent("01"));
    expect(formatTraceparent({ ...context, traceFlags: TraceFlags.SAMPLED })).toBe(traceparent("01"));
    // §3.2.2: lower-case hex, though the API takes upper-case ids as valid.
    const upper = { traceId: TRACE_ID.toUpperCase(), spanId: SPAN_ID.toUpperCase(), isRemote: true };
    expect(formatTraceparent({ ...upper, traceFlags: TraceFlags.SAMPLED })).toBe(traceparent("01"));
    // A round trip of a later version downgrades it (§3.2.4: "construct the new traceparent ... it is 00").
    const read = parseTraceparent(traceparent("01", "01", "-future"));
    expect(read && formatTraceparent(read)).toBe(traceparent("01"));
  });
});

describe("tracestate received beside a traceparent (§3.3)", () => {
  const read = (tracestate: string) => parseTraceparent(traceparent("01"), tracestate)?.traceState?.serialize();

  it("keeps a valid list as it came, drops members that are not key=value (processing model, step 3)", () => {
    expect(read("congo=t61rcWkgMzE, rojo=00f067aa0ba902b7")).toBe("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    expect(read("congo=1,Bad=2,rojo=3")).toBe("congo=1,rojo=3");
  });

  // §3.3.1.1: vendors "MUST accept empty tracestate headers but SHOULD avoid sending them"; a context carrying an empty
  // one had a propagator downstream (@opentelemetry/core's W3C one) send it empty.
  it("an empty list, or one with no valid member, leaves the context without a tracestate", () => {
    for (const empty of ["", " , ", "Bad=1"]) {
      const remote = parseTraceparent(traceparent("01"), empty);
      expect(remote?.traceId, JSON.stringify(empty)).toBe(TRACE_ID);
      expect(remote?.traceState, JSON.stringify(empty)).toBeUndefined();
    }
  });

  // Regression: the API kept the value of the left-most repeated key at the right-most one's place, and reordered.
  it("keeps the left-most of a repeated key, in its place (§3.3.1.4: the latest position)", () => {
    expect(read("congo=1,rojo=2,congo=3")).toBe("congo=1,rojo=2");
  });

  // Regression: a list over 512 characters was dropped whole. §3.3.1.5: truncate whole entries, those over 128
  // characters first, then from the end.
  it("over 512 characters: whole members dropped, the long ones first, from the right", () => {
    const big = `big=${"b".repeat(250)}`;
    const huge = `huge=${"h".repeat(240)}`;
    const value = `congo=1,${big},rojo=2,${huge},lemon=3`;
    expect(value.length).toBeGreaterThan(512);
    expect(read(value)).toBe(`congo=1,${big},rojo=2,lemon=3`);
    // Then from the end, once no long member is left.
    const shorts = Array.from({ length: 6 }, (_, i) => `k${i}=${"v".repeat(100)}`).join(",");
    expect(read(shorts)).toBe(Array.from({ length: 4 }, (_, i) => `k${i}=${"v".repeat(100)}`).join(","));
  });

  // §3.3.1.5 counts optional white space in the 512 a vendor SHOULD propagate at least; none is sent again, so a list
  // over 512 by its white space alone is sent whole.
  it("a list of 512 characters once its optional white space is taken out is kept whole", () => {
    const value = `a=${"x".repeat(255)},b=${"y".repeat(252)}`;
    expect(value).toHaveLength(512);
    expect(read(` ${value.replace(",", " ,\t")} `)).toBe(value);
  });

  it("over 32 members: the right-most are dropped", () => {
    const members = Array.from({ length: 34 }, (_, i) => `k${i}=v`);
    expect(read(members.join(","))).toBe(members.slice(0, 32).join(","));
  });
});
