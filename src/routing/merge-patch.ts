/** A JSON value as `JSON.parse` returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** The media type of a JSON Merge Patch document (RFC 7396 §4). */
export const MERGE_PATCH_CONTENT_TYPE = "application/merge-patch+json";

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// Defining (not assigning) keeps "__proto__" an ordinary own key: no prototype is ever touched.
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Applies a JSON Merge Patch (RFC 7396 §2) and returns the result; neither argument is changed.
 * A `null` member removes, an object merges recursively, anything else (arrays included) replaces.
 * Keys such as `__proto__` are kept as plain data and never reach a prototype.
 * @example mergePatch({ a: 1, b: { c: 2 } }, { b: { c: null, d: 3 } }) // { a: 1, b: { d: 3 } }
 * @see https://www.rfc-editor.org/rfc/rfc7396#section-2
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  // RFC 7396 §2: a patch that is not an object replaces the target wholesale.
  if (!isObject(patch)) return clone(patch);
  const base = isObject(target) ? target : {};
  const out: Record<string, unknown> = {};
  // Existing members keep their place; new ones follow in patch order.
  for (const key of Object.keys(base)) {
    if (!Object.hasOwn(patch, key)) define(out, key, clone(base[key]));
    else if (patch[key] !== null) define(out, key, mergePatch(base[key], patch[key]));
    // RFC 7396 §2: a null member removes the target's member.
  }
  for (const key of Object.keys(patch)) {
    if (Object.hasOwn(base, key) || patch[key] === null) continue;
    define(out, key, mergePatch(undefined, patch[key]));
  }
  return out;
}

// A deep copy, so the result never shares (and later mutates) a part of an input.
function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) define(out, key, clone(value[key]));
  return out;
}
