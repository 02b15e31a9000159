import fc from "fast-check";

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// RFC 8259 §2: a JSON text ends with a value, never with ",": appending one makes any text invalid.
function spoiled(text: string): string {
  return parses(text) ? `${text},` : text;
}

/**
 * Request bodies that are not JSON (RFC 8259) — truncated documents, `{` followed by junk, classic mistakes
 * (single quotes, trailing commas, `NaN`, leading zeros) — each checked with `JSON.parse` and spoiled with a
 * trailing `,` when it happened to parse, so a server that accepts `{}` is never told `{}` is malformed.
 * @example fc.assert(fc.property(malformedJson(), (text) => expect(() => JSON.parse(text)).toThrow()))
 */
export function malformedJson(): fc.Arbitrary<string> {
  // A proper prefix of an object's text lacks its closing brace.
  const truncated = fc
    .tuple(
      fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 3 }),
      fc.nat(),
    )
    .map(([doc, cut]) => {
      const text = JSON.stringify(doc);
      return text.slice(0, 1 + (cut % (text.length - 1)));
    });
  const junk = fc.string({ maxLength: 20 }).map((rest) => `{${rest}`);
  const mistakes = fc.constantFrom(
    "{",
    "{'name':1}",
    '{"name":}',
    '{"name" 1}',
    '{"a":1,}',
    "[1,]",
    '{"n":NaN}',
    "01",
    "nul",
    '"open',
  );
  return fc.oneof(truncated, junk, mistakes).map(spoiled);
}
