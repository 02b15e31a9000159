/** Request header fields as consumers hold them: a plain record (any name case) or a Fetch `Headers`. */
export type WebhookHeaders = Readonly<Record<string, string | readonly string[] | undefined>> | Headers;

/** Reads one header field by lower-case name; `undefined` when absent. */
export type HeaderLookup = (name: string) => string | undefined;

interface HeadersLike {
  get(name: string): string | null;
}

function isHeadersLike(value: object): value is HeadersLike {
  return typeof (value as Partial<HeadersLike>).get === "function";
}

// RFC 9110 §5.3: repeated field lines combine into one value joined by ", ".
function fieldValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const parts = value.filter((part): part is string => typeof part === "string");
    return parts.length === 0 ? undefined : parts.join(", ");
  }
  return undefined;
}

/**
 * A case-insensitive reader over `headers`. Records keyed in lower case (node:http, our `HttpRequest`)
 * take the direct path; other spellings are found by one scan.
 */
export function headerLookup(headers: WebhookHeaders): HeaderLookup {
  if (typeof headers !== "object" || headers === null) {
    throw new TypeError("verify: headers must be a record of header fields or a Fetch Headers object");
  }
  if (isHeadersLike(headers)) {
    return (name) => headers.get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, unknown>>;
  return (name) => {
    const direct = record[name];
    if (direct !== undefined) return fieldValue(direct);
    for (const key of Object.keys(record)) {
      if (key.length === name.length && key.toLowerCase() === name) return fieldValue(record[key]);
    }
    return undefined;
  };
}
