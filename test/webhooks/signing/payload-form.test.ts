import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseForm } from "../../../src/http/body";
import { readPayload } from "../../../src/webhooks/signing/payload";

const encoder = new TextEncoder();

// The signed-payload reader's answer for form text, as text and as bytes (they must agree).
function read(text: string) {
  const asText = readPayload(text, "form", undefined, "test");
  const asBytes = readPayload(encoder.encode(text), "form", undefined, "test");
  expect(asBytes).toStrictEqual(asText);
  return "value" in asText ? { value: asText.value } : { code: asText.code };
}

describe("regression: a signed form payload kept the last of a repeated name and read name[] literally", () => {
  it("keeps every value of a repeated name, in order, as an array", () => {
    expect(read("tag=a&tag=b&tag=c&x=1")).toStrictEqual({ value: parseForm("tag=a&tag=b&tag=c&x=1") });
    expect(read("tag=a&tag=b&x=1").value).toMatchObject({ tag: ["a", "b"], x: "1" });
  });

  it("reads name[] as the list name, an array even with one value", () => {
    expect(read("enabled_events[]=a").value).toMatchObject({ enabled_events: ["a"] });
    expect(read("enabled_events%5B%5D=a&enabled_events[]=b").value).toMatchObject({ enabled_events: ["a", "b"] });
    expect(read("e=a&e[]=b").value).toMatchObject({ e: ["a", "b"] });
  });

  it("answers the router's record: null prototype, so no inherited member is read as a field", () => {
    const { value } = read("a=1");
    expect(Object.getPrototypeOf(value)).toBeNull();
    expect((value as Record<string, unknown>)["toString"]).toBeUndefined();
  });
});

describe("property: the signed-payload reader and the router's form reader agree on any form text", () => {
  // Names drawn to collide (repeats, [] lists, escapes, __proto__), values anything URLSearchParams may decode.
  const name = fc.oneof(
    fc.constantFrom("a", "b", "a[]", "a%5B%5D", "b[]", "[]", "__proto__", "__proto__[]", "%5F%5Fproto%5F%5F", "c%20d"),
    fc.string({ maxLength: 4 }),
  );
  const pair = fc.tuple(name, fc.option(fc.string({ maxLength: 4 }), { nil: undefined }));
  const form = fc
    .array(pair, { maxLength: 6 })
    .map((pairs) => pairs.map(([key, value]) => (value === undefined ? key : `${key}=${value}`)).join("&"));

  it("holds for every text: the same record, or payload_invalid where the record has an own __proto__", () => {
    fc.assert(
      fc.property(fc.oneof(form, fc.string({ maxLength: 20 })), (text) => {
        const router = parseForm(text);
        const expected = Object.hasOwn(router, "__proto__") ? { code: "payload_invalid" } : { value: router };
        expect(read(text)).toStrictEqual(expected);
      }),
      { numRuns: 1_000 },
    );
  });
});
