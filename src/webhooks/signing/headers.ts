/** Request header fields as consumers hold them: a plain record (any name case) or a Fetch `Headers`. */
export type WebhookHeaders = Readonly<Record<string, string | readonly string[] | undefined>> | Headers;

/** Reads one header field by lower-case name; `undefined` when absent. */
export type HeaderLookup = (name: string) => string | undefined;

// RFC 9110 §5.3: repeated field lines combine into one value joined by ", ".
function fieldValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const parts = value.filter((part): part is string => typeof part === "string");
    return parts.length === 0 ? undefined : parts.join(", ");
  }
  return undefined;
}

function readRecord(record: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const direct = record[name];
  if (direct !== undefined) return fieldValue(direct);
  for (const key of Object.keys(record)) {
    if (key.length === name.length && key.toLowerCase() === name) return fieldValue(record[key]);
  }
  return undefined;
}

/**
 * A case-insensitive reader over `headers`, or `undefined` when `headers` is no record (not an object, or an array).
 * Records keyed in lower case (node:http, our `HttpRequest`) take the direct path; other spellings are found by one
 * scan.
 * Headers come from the request, so reading them never throws: a getter, `get` method or Proxy trap that throws,
 * or a value that is not text, reads as an absent field (the scheme then reports `missing_header`).
 */
export function headerLookup(headers: unknown): HeaderLookup | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  let get: unknown;
  try {
    // An array (node:http's req.rawHeaders, a list of [name, value] entries) holds fields, but is no record of them.
    if (Array.isArray(headers)) return undefined;
    get = (headers as { get?: unknown }).get;
  } catch {
    // A revoked Proxy (Array.isArray throws), a throwing `get` getter.
    return () => undefined;
  }
  if (typeof get === "function") {
    // A Fetch Headers (or look-alike): its `get` already joins repeated fields.
    return (name) => {
      try {
        const value: unknown = get.call(headers, name);
        return typeof value === "string" ? value : undefined;
      } catch {
        return undefined;
      }
    };
  }
  const record = headers as Readonly<Record<string, unknown>>;
  return (name) => {
    try {
      return readRecord(record, name);
    } catch {
      return undefined;
    }
  };
}
