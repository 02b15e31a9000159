import { contentLength } from "./adapter-options";
import { trimOws } from "./ows";

/**
 * Refuses a handler's Content-Length that is not the length of the body the adapter is about to send: the client
 * frames the message by it (RFC 9112 §6.3 (5)), so a shorter one leaves the rest of the body to be read as the next
 * response on the connection and a longer one (or any but 0 without a body) leaves the client waiting for bytes that
 * never come. Both adapters call this, so both turn such a response into the same 500; they do not for a response to
 * HEAD or a 204, 205 or 304, which send no body and whose Content-Length is the representation's (RFC 9110 §8.6).
 * @param declared the handler's field value (an array when it gave repeated fields).
 * @param length the body's length in bytes, 0 without one.
 * @throws RangeError when `declared` is not `length` as 1*DIGIT (RFC 9110 §8.6).
 */
export function checkDeclaredLength(declared: string | number | readonly string[], length: number): void {
  // Only OWS surrounds a field value (RFC 9110 §5.5): String.prototype.trim would also pass a no-break space or U+FEFF,
  // which the adapter then sends as written and the client refuses.
  if (contentLength(trimOws(String(declared))) !== length) {
    throw new RangeError(
      `rest-webhooks: a handler's Content-Length (${String(declared)}) must be its body's length in bytes, ${length} ` +
        "(RFC 9112 §6.3); leave it out and the adapter sets it.",
    );
  }
}
