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

// One step of the work list: merge `patch` into `target` (or copy `value`), then hand the result to `put`.
type Step =
  | {
      readonly kind: "merge";
      readonly target: unknown;
      readonly patch: unknown;
      readonly put: (value: unknown) => void;
    }
  | { readonly kind: "copy"; readonly value: unknown; readonly put: (value: unknown) => void };

/**
 * Applies a JSON Merge Patch (RFC 7396 §2) and returns the result; neither argument is changed.
 * A `null` member removes, an object merges recursively, anything else (arrays included) replaces.
 * Keys such as `__proto__` are kept as plain data and never reach a prototype. The walk keeps its own work list
 * instead of recursing, so no depth of document exhausts the call stack.
 * @example mergePatch({ a: 1, b: { c: 2 } }, { b: { c: null, d: 3 } }) // { a: 1, b: { d: 3 } }
 * @see https://www.rfc-editor.org/rfc/rfc7396#section-2
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  let result: unknown;
  const steps: Step[] = [{ kind: "merge", target, patch, put: (value) => (result = value) }];
  while (steps.length > 0) {
    const step = steps.pop() as Step;
    if (step.kind === "copy") {
      copyStep(step.value, step.put, steps);
      continue;
    }
    const { patch: p, target: t } = step;
    // RFC 7396 §2: a patch that is not an object replaces the target wholesale.
    if (!isObject(p)) {
      copyStep(p, step.put, steps);
      continue;
    }
    const base = isObject(t) ? t : {};
    const out: Record<string, unknown> = {};
    step.put(out);
    // Members are defined now, in order (existing ones keep their place, new ones follow in patch order), and
    // filled in when their step runs: redefining a member keeps its position.
    for (const key of Object.keys(base)) {
      const put = (value: unknown) => define(out, key, value);
      if (!Object.hasOwn(p, key)) {
        define(out, key, undefined);
        steps.push({ kind: "copy", value: base[key], put });
      } else if (p[key] !== null) {
        define(out, key, undefined);
        steps.push({ kind: "merge", target: base[key], patch: p[key], put });
      }
      // RFC 7396 §2: a null member removes the target's member.
    }
    for (const key of Object.keys(p)) {
      if (Object.hasOwn(base, key) || p[key] === null) continue;
      define(out, key, undefined);
      steps.push({ kind: "merge", target: undefined, patch: p[key], put: (value) => define(out, key, value) });
    }
  }
  return result;
}

// A deep copy, so the result never shares (and later mutates) a part of an input: containers are made here and
// their members queued as further steps.
function copyStep(value: unknown, put: (value: unknown) => void, steps: Step[]): void {
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    put(out);
    for (let i = 0; i < value.length; i++) {
      steps.push({ kind: "copy", value: value[i], put: (item) => (out[i] = item) });
    }
  } else if (isObject(value)) {
    const out: Record<string, unknown> = {};
    put(out);
    for (const key of Object.keys(value)) {
      define(out, key, undefined);
      steps.push({ kind: "copy", value: value[key], put: (item) => define(out, key, item) });
    }
  } else {
    put(value);
  }
}
