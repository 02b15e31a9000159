import { trimOws } from "../http/ows";
import { parseItem } from "../http/structured-fields";

/** The longest key accepted, in characters (Stripe's limit; the draft leaves it to the server). */
export const MAX_KEY_LENGTH = 255;

/** Options of {@link parseIdempotencyKey}. */
export interface ParseKeyOptions {
  /**
   * Accept only the draft's sf-string form (`"8e03978e-40d5"`); when false, a bare value such as
   * Stripe's SDKs send (`8e03978e-40d5`) is accepted too.
   * @default false
   */
  strict?: boolean;
}

/** The outcome of parsing an Idempotency-Key field value. */
export type ParseKeyResult = { ok: true; key: string } | { ok: false; reason: string };

// The bare form: visible ASCII (RFC 5234 VCHAR) except DQUOTE and ",", so that two field lines
// joined with ", " (RFC 9110 §5.3) never read as one key.
const BARE_KEY = /^[\x21\x23-\x2b\x2d-\x7e]+$/;

/**
 * Parses an Idempotency-Key field value.
 *
 * draft-ietf-httpapi-idempotency-key-header §2.1: `Idempotency-Key = sf-string` (RFC 8941 §3.3.3,
 * now RFC 9651); parameters are ignored (RFC 9651 §3.1.2: unknown parameters are ignored).
 * @example parseIdempotencyKey('"8e03978e-40d5"') // { ok: true, key: "8e03978e-40d5" }
 */
export function parseIdempotencyKey(value: string, options: ParseKeyOptions = {}): ParseKeyResult {
  // draft-ietf-httpapi-idempotency-key-header §2.1 (a field value, sf-string) and RFC 9110 §5.5, §5.6.3: only OWS
  // (SP, HTAB) surrounds a field value, in both forms. Not String.prototype.trim, which also took NBSP (a 0xA0 byte
  // node:http reads as latin1), VT, FF and U+FEFF: the bare "\u00a0k-1" named the key "k-1" and was replayed its
  // response, where it is no key at all (400).
  const field = trimOws(value);
  let key: string;
  const item = parseItem(field);
  if (item !== undefined && typeof item.value === "string") key = item.value;
  else if (options.strict) return { ok: false, reason: 'The Idempotency-Key must be a quoted string, e.g. "k-1".' };
  else {
    if (field.length > 0 && !BARE_KEY.test(field)) {
      return { ok: false, reason: "The Idempotency-Key must be a quoted string or one word of visible ASCII." };
    }
    key = field;
  }
  if (key.length === 0) return { ok: false, reason: "The Idempotency-Key is empty." };
  if (key.length > MAX_KEY_LENGTH) {
    return { ok: false, reason: `The Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters.` };
  }
  return { ok: true, key };
}
