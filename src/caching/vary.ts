/**
 * Vary, RFC 9110 §12.5.5:
 *   Vary = #( "*" / field-name )
 */
import { CachingError } from "./errors";
import { isToken, trimOws } from "./syntax";

/**
 * Parses a Vary value to lower-case field names (duplicates and malformed members dropped), or `"*"` when
 * the response varies on more than request fields.
 * @example parseVary("Accept-Encoding, accept") // ["accept-encoding", "accept"]
 */
export function parseVary(value: string | undefined): "*" | string[] {
  if (value === undefined) return [];
  // A Set, not names.includes: linear however many names the field lists.
  const names = new Set<string>();
  for (const part of value.split(",")) {
    // §5.6.1.2: list members are separated by OWS "," OWS; any other space makes the member malformed.
    const name = trimOws(part);
    if (name === "*") return "*";
    if (isToken(name)) names.add(name.toLowerCase());
  }
  return [...names];
}

/**
 * Adds field names to a Vary value: case-insensitive de-duplication, existing order kept, and `*` absorbs
 * everything (§12.5.5: a `*` makes any other member meaningless).
 * @throws {CachingError} `invalid_field_name` when a name to add is neither `*` nor a token.
 * @example mergeVary("Accept", "accept-encoding", "Accept") // "accept, accept-encoding"
 */
export function mergeVary(current: string | undefined, ...fields: readonly string[]): string {
  const existing = parseVary(current);
  if (existing === "*") return "*";
  const names = new Set(existing);
  for (const field of fields) {
    const name = trimOws(field);
    if (name === "*") return "*";
    if (!isToken(name)) throw new CachingError("invalid_field_name", `${JSON.stringify(field)} is not a field name.`);
    names.add(name.toLowerCase());
  }
  return [...names].join(", ");
}
