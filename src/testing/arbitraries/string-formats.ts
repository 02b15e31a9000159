import fc from "fast-check";

// base64url without padding (RFC 7515 §2), of UTF-8 text or of bytes.
function base64url(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * JWS compact serializations (RFC 7515 §7.1): a JOSE header naming `alg` (`typ: "JWT"`, RFC 7519 §5.1), a JSON
 * claims set and signature bytes, each base64url. The signature is random bytes: a format check, not a verifier,
 * is what these values are for.
 */
export function jwtArbitrary(alg?: string): fc.Arbitrary<string> {
  const header = (name: string) => base64url(JSON.stringify({ alg: name, typ: "JWT" }));
  const headers = alg === undefined ? fc.constantFrom("HS256", "RS256", "ES256", "EdDSA") : fc.constant(alg);
  const claims = fc.record(
    { sub: fc.string({ maxLength: 12 }), iat: fc.integer({ min: 0, max: 4_102_444_800 }) },
    { requiredKeys: [] },
  );
  return fc
    .tuple(headers, claims, fc.uint8Array({ minLength: 0, maxLength: 64 }))
    .map(
      ([name, claimSet, signature]) => `${header(name)}.${base64url(JSON.stringify(claimSet))}.${base64url(signature)}`,
    );
}

const count = () => fc.option(fc.nat({ max: 999 }), { nil: undefined });

/**
 * ISO 8601 durations (ISO 8601-1 §5.5.2.4, as zod's `z.iso.duration()` reads them): `PnW`, or years, months, days,
 * then after `T` hours, minutes and seconds (a decimal fraction allowed), each optional but at least one present.
 */
export function durationArbitrary(): fc.Arbitrary<string> {
  const weeks = fc.nat({ max: 999 }).map((n) => `P${n}W`);
  const fraction = fc.option(fc.nat({ max: 999 }), { nil: undefined });
  const parts = fc
    .record({ y: count(), mo: count(), d: count(), h: count(), mi: count(), s: count(), f: fraction })
    .map(({ y, mo, d, h, mi, s, f }) => {
      const put = (n: number | undefined, unit: string) => (n === undefined ? "" : `${n}${unit}`);
      const seconds = s === undefined ? "" : `${s}${f === undefined ? "" : `.${f}`}S`;
      const time = `${put(h, "H")}${put(mi, "M")}${seconds}`;
      const date = `${put(y, "Y")}${put(mo, "M")}${put(d, "D")}`;
      // No component at all is no duration: the smallest one says zero days.
      if (date === "" && time === "") return "P0D";
      return `P${date}${time === "" ? "" : `T${time}`}`;
    });
  return fc.oneof(parts, weeks);
}

// Single code points that are Extended_Pictographic (Unicode UTS #51), so a run of them is an emoji string.
const EMOJI = ["😀", "🎉", "👍", "🚀", "🌍", "✅", "🍵", "🔥", "⭐", "🐍", "📦", "💡"];

/** Strings of one to four emoji (zod's `z.emoji()`: Extended_Pictographic and Emoji_Component characters only). */
export function emojiArbitrary(): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...EMOJI), { minLength: 1, maxLength: 4 }).map((chosen) => chosen.join(""));
}

/**
 * Realistic values of a JSON Schema `format` (draft 2020-12 §7.3), and of the formats zod adds (`emoji`, `jwt`);
 * `undefined` for a format without one, which is then generated from its pattern or as any string.
 * @param jwtAlg the `alg` a `jwt` must name (zod's `z.jwt({ alg })`, carried by `fromZod`).
 */
export function formatArbitrary(format: string | undefined, jwtAlg?: string): fc.Arbitrary<string> | undefined {
  switch (format) {
    case "email":
      return fc.emailAddress();
    case "uuid":
      return fc.uuid();
    case "date-time":
      return fc
        .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
        .map((d) => d.toISOString());
    case "date":
      return fc
        .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2099-12-31T00:00:00Z"), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case "uri":
    case "url":
      return fc.webUrl();
    case "ipv4":
      return fc.ipV4();
    case "ipv6":
      return fc.ipV6();
    case "duration":
      return durationArbitrary();
    case "emoji":
      return emojiArbitrary();
    case "jwt":
      return jwtArbitrary(jwtAlg);
  }
  return undefined;
}
