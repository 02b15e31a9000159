import fc from "fast-check";
import { CACHE_CONTROL_DIRECTIVES } from "../../caching/cache-control";

// RFC 9110 §8.8.3: etagc = %x21 / %x23-7E / obs-text (obs-text left out: Fetch Headers reject it).
const etagChar = fc.constantFrom(
  ...Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i)).filter((c) => c !== '"'),
);
const ows = fc.constantFrom("", " ", "  ", "\t");

/** A valid entity-tag (RFC 9110 §8.8.3), strong or weak unless `weak` pins it. */
export function entityTag(options: { weak?: boolean } = {}): fc.Arbitrary<string> {
  const weak = options.weak === undefined ? fc.boolean() : fc.constant(options.weak);
  return fc
    .tuple(weak, fc.string({ unit: etagChar, maxLength: 24 }))
    .map(([isWeak, opaque]) => `${isWeak ? "W/" : ""}"${opaque}"`);
}

/** A valid `If-Match`/`If-None-Match` field value: `*` or a list of entity-tags with odd but legal spacing (§5.6.1). */
export function entityTagList(): fc.Arbitrary<string> {
  const element = fc.tuple(ows, entityTag(), ows).map(([a, tag, b]) => `${a}${tag}${b}`);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant("*") },
    {
      weight: 6,
      arbitrary: fc
        .array(fc.oneof({ weight: 6, arbitrary: element }, { weight: 1, arbitrary: ows }), {
          minLength: 1,
          maxLength: 5,
        })
        .filter((items) => items.some((item) => item.includes('"')))
        .map((items) => items.join(",")),
    },
  );
}

/** Entity-tag-ish strings that break the grammar: unquoted, unbalanced, lower-case `w/`, stray `*`. */
export function malformedEntityTagList(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('"unterminated', 'w/"lower"', 'W/ "space"', '*, "a"', 'W/"a"W/"b"', '""x', ",,,", "W/", '"a" "b"'),
  );
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const;
const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** One of the three HTTP-date forms of RFC 9110 §5.6.7, for a date. */
export type HttpDateForm = "imf-fixdate" | "rfc850" | "asctime";

/** Formats `date` (whole seconds, UTC) in one of the three HTTP-date forms. */
export function formatHttpDateAs(date: Date, form: HttpDateForm): string {
  const d = date.getUTCDay();
  const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  const month = MONTHS[date.getUTCMonth()];
  switch (form) {
    case "imf-fixdate":
      return `${DAYS[d]}, ${pad(date.getUTCDate())} ${month} ${date.getUTCFullYear()} ${time} GMT`;
    case "rfc850":
      return `${LONG_DAYS[d]}, ${pad(date.getUTCDate())}-${month}-${pad(date.getUTCFullYear() % 100)} ${time} GMT`;
    case "asctime":
      return `${DAYS[d]} ${month} ${String(date.getUTCDate()).padStart(2, " ")} ${time} ${date.getUTCFullYear()}`;
  }
}

/** A date at whole seconds between 1970 and 2099 with its HTTP-date text in all three forms. */
export function httpDate(
  options: { forms?: readonly HttpDateForm[] } = {},
): fc.Arbitrary<{ date: Date; form: HttpDateForm; text: string }> {
  const forms = options.forms ?? ["imf-fixdate", "rfc850", "asctime"];
  return fc.tuple(fc.integer({ min: 0, max: 4_102_444_799 }), fc.constantFrom(...forms)).map(([seconds, form]) => {
    const date = new Date(seconds * 1000);
    return { date, form, text: formatHttpDateAs(date, form) };
  });
}

/** Strings that are not HTTP-dates, which recipients must ignore (§5.6.7): wrong zone, day names, overflow. */
export function malformedHttpDate(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom(
      "Sun, 06 Nov 1994 08:49:37 PST",
      "Sun, 32 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 25:49:37 GMT",
      "Sun, 06 Foo 1994 08:49:37 GMT",
      "1994-11-06T08:49:37Z",
      "Sun,06 Nov 1994 08:49:37 GMT",
      "0",
      "-1",
    ),
  );
}

const directiveName = fc.constantFrom(...CACHE_CONTROL_DIRECTIVES, "x-extension");

/** A Cache-Control field value (RFC 9111 §5.2) with arguments, quoted forms, duplicates and extension directives. */
export function cacheControl(): fc.Arbitrary<string> {
  const argument = fc.oneof(
    fc.nat({ max: 2 ** 32 }).map(String),
    fc.nat({ max: 1000 }).map((n) => `"${n}"`),
    fc.constantFrom('"set-cookie"', '"x-a, x-b"', "token"),
  );
  const directive = fc
    .tuple(directiveName, fc.option(argument, { nil: undefined }), fc.boolean())
    .map(([name, arg, upper]) => `${upper ? name.toUpperCase() : name}${arg === undefined ? "" : `=${arg}`}`);
  return fc
    .array(fc.tuple(ows, directive, ows), { minLength: 1, maxLength: 6 })
    .map((items) => items.map(([a, d, b]) => `${a}${d}${b}`).join(","));
}

// RFC 9651 §3.3.3: sf-string characters are printable ASCII; `"` and `\` are escaped.
const sfStringChar = fc.constantFrom(...Array.from({ length: 0x7e - 0x1f }, (_, i) => String.fromCharCode(0x20 + i)));
const tokenChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!#$%&'*+^`|");

/** An `Idempotency-Key` value and whether a lenient parser (draft sf-string or bare token, ≤ 255 chars) accepts it. */
export function idempotencyKeyHeader(): fc.Arbitrary<{ header: string; key: string | undefined; form: string }> {
  const quoted = fc.string({ unit: sfStringChar, minLength: 1, maxLength: 64 }).map((key) => ({
    header: `"${key.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`,
    key,
    form: "sf-string",
  }));
  const bare = fc
    .tuple(fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789"), fc.string({ unit: tokenChar, maxLength: 64 }))
    .map(([first, rest]) => ({ header: first + rest, key: first + rest, form: "token" }));
  const uuid = fc.uuid().map((key) => ({ header: `"${key}"`, key, form: "sf-string" }));
  const invalid = fc.constantFrom(
    { header: '""', key: undefined, form: "empty" },
    { header: `"${"k".repeat(256)}"`, key: undefined, form: "too-long" },
    { header: '"unterminated', key: undefined, form: "malformed" },
    { header: '"a";param=?2', key: undefined, form: "malformed" },
    { header: '"a", "b"', key: undefined, form: "list" },
  );
  return fc.oneof({ weight: 3, arbitrary: quoted }, { weight: 2, arbitrary: bare }, uuid, invalid);
}
