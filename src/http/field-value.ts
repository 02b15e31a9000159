// RFC 9110 §5.5: field-value = *field-content; field-content = field-vchar [ 1*( SP / HTAB / field-vchar ) field-vchar ];
// field-vchar = VCHAR / obs-text.
const FIELD_CONTENT = /^[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/;

/**
 * Whether `value` is a non-empty field value that reaches the receiver unchanged: visible characters (obs-text
 * included) with spaces and tabs only between them. Receivers strip whitespace around a value, and HTTP clients
 * refuse control characters and anything above U+00FF.
 */
export function isFieldContent(value: string): boolean {
  return FIELD_CONTENT.test(value);
}
