import fc from "fast-check";
import { CACHE_CONTROL_DIRECTIVES } from "../../caching/cache-control";
import { parseEntityTagList } from "../../caching/entity-tag";
import { finiteNumber } from "../../options/number-option";
import { BoundedFilter } from "./bounded-filter";

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

/**
 * Entity-tag-ish strings that break the grammar (RFC 9110 §8.8.3, §13.1.1): unquoted, unbalanced, lower-case `w/`,
 * stray `*`. Only strings `parseEntityTagList` refuses: `""`, `","` or `" , "` are empty lists, which §5.6.1
 * tells recipients to accept, and `*` is the wildcard.
 */
export function malformedEntityTagList(): fc.Arbitrary<string> {
  const refused = (value: unknown) => typeof value === "string" && parseEntityTagList(value) === undefined;
  const random = new BoundedFilter(fc.string({ maxLength: 30 }), refused, 100, (last) => {
    return new Error(
      `malformedEntityTagList: 100 strings in a row parsed as entity-tag lists, the last ${JSON.stringify(last)}`,
    );
  });
  return fc.oneof(
    random,
    fc.constantFrom('"unterminated', 'w/"lower"', 'W/ "space"', '*, "a"', 'W/"a"W/"b"', '""x', ",x,", "W/", '"a" "b"'),
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

/** Options for {@link httpDate}. */
export interface HttpDateOptions {
  /** Which forms to generate. @default all three */
  forms?: readonly HttpDateForm[];
  /**
   * The recipient's clock in epoch ms, which decides the century of an rfc850-date's two-digit year (§5.6.7).
   * @default Date.now() when the arbitrary is built
   */
  now?: number;
}

const LAST_SECOND = 4_102_444_799; // 2099-12-31T23:59:59Z

// RFC 9110 §5.6.7: a two-digit year more than 50 years ahead of the recipient's clock is read as the past century.
// Dates within 49 years of `now` (either way) are read back as themselves by a recipient whose clock is up to a
// year away from `now`, so the arbitrary may be built well before the texts are parsed.
function rfc850Window(now: number): [number, number] {
  const year = new Date(now).getUTCFullYear();
  const from = Math.ceil(new Date(now).setUTCFullYear(year - 49) / 1000);
  const to = Math.floor(new Date(now).setUTCFullYear(year + 49) / 1000);
  if (!(from <= LAST_SECOND && to >= 0)) {
    throw new TypeError(
      `httpDate: now (${now}) leaves no rfc850-date between 1970 and 2099 that reads back as itself.`,
    );
  }
  return [Math.max(0, from), Math.min(LAST_SECOND, to)];
}

/**
 * A date at whole seconds between 1970 and 2099 with its HTTP-date text in one of the three forms; the text
 * parses back to that date. An rfc850-date is generated only for dates within 49 years of `now`: its two-digit
 * year is read relative to the recipient's clock (§5.6.7), so `Thursday, 01-Jan-70` is 2070 today.
 * @example fc.property(httpDate(), ({ date, text }) => parseHttpDate(text) === date.getTime())
 */
export function httpDate(
  options: HttpDateOptions = {},
): fc.Arbitrary<{ date: Date; form: HttpDateForm; text: string }> {
  const forms = options.forms ?? ["imf-fixdate", "rfc850", "asctime"];
  const now = finiteNumber("httpDate", "now", options.now ?? Date.now(), "epoch milliseconds");
  return fc.oneof(
    ...forms.map((form) => {
      const [min, max] = form === "rfc850" ? rfc850Window(now) : [0, LAST_SECOND];
      return fc.integer({ min, max }).map((seconds) => {
        const date = new Date(seconds * 1000);
        return { date, form, text: formatHttpDateAs(date, form) };
      });
    }),
  );
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
