import fc from "fast-check";

/** JSON values without `null` at the top of objects' members (RFC 7396 uses null to mean "remove"). */
const jsonLeaf = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const memberName = fc.constantFrom("a", "b", "c", "name", "status", "items", "nested", "__proto__", "constructor");

/**
 * A JSON Merge Patch document (RFC 7396): an object whose members set, replace (arrays wholesale) or
 * remove (`null`) values, nested to a few levels. Includes `__proto__` members to test pollution guards.
 */
export function mergePatchDocument(): fc.Arbitrary<Record<string, unknown>> {
  const { patch } = fc.letrec<{ patch: Record<string, unknown>; value: unknown }>((tie) => ({
    patch: fc.dictionary(memberName, tie("value"), { maxKeys: 4 }),
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      jsonLeaf,
      fc.constant(null),
      fc.array(jsonLeaf, { maxLength: 3 }),
      tie("patch"),
    ),
  }));
  return patch;
}

/** A JSON object to apply patches to. */
export function jsonDocument(): fc.Arbitrary<Record<string, unknown>> {
  const { doc } = fc.letrec<{ doc: Record<string, unknown>; value: unknown }>((tie) => ({
    doc: fc.dictionary(
      memberName.filter((name) => name !== "__proto__"),
      tie("value"),
      { maxKeys: 4 },
    ),
    value: fc.oneof({ depthSize: "small" }, jsonLeaf, fc.array(jsonLeaf, { maxLength: 3 }), tie("doc")),
  }));
  return doc;
}
