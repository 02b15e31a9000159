import { matchComposite } from "./composite";
import type { Entry } from "./dfa";
import type { MatchResult } from "./match-result";

/**
 * Makes the parameters objects: plain objects (their prototype is `Object.prototype`, as for `{}`)
 * whose hidden classes descend from a root of their own, which no other code in the process extends;
 * and one constructor for every route, so making one is a monomorphic allocation.
 */
// A plain function, not a class: only a function's `prototype` can be set to Object.prototype.
const Params = function Params() {} as unknown as new () => Record<string, string>;
Params.prototype = Object.prototype;
// V8 sizes the objects a constructor makes from the first few it makes (slack tracking): make those
// with four properties, as an object literal gets, so routes with up to four parameters keep them all
// in the object itself.
for (let i = 0; i < 8; i++) Object.assign(new Params(), { a: "", b: "", c: "", d: "" });

/**
 * The answer for a route matched with parameters: their values cut from the path at the segment
 * offsets the walk recorded, in the route's precomputed layout (whole segments, then composites,
 * then the wildcard), percent-decoded and length-checked.
 * @param starts the offset of each of the `count` segments of `path`.
 */
export function paramsOf<R>(
  entry: Entry<R>,
  path: string,
  starts: Int32Array,
  count: number,
  maxParamLength: number,
): MatchResult<R> {
  if (entry.single) {
    // The most common layout, one whole segment and nothing else: a small function V8 inlines.
    const index = entry.first;
    return singleParam(
      entry,
      path,
      starts[index] as number,
      index + 1 < count ? (starts[index + 1] as number) - 1 : path.length,
      maxParamLength,
    );
  }
  return manyParams(entry, path, starts, count, maxParamLength);
}

function singleParam<R>(
  entry: Entry<R>,
  path: string,
  start: number,
  end: number,
  maxParamLength: number,
): MatchResult<R> {
  const raw = path.slice(start, end);
  const value = raw.indexOf("%") === -1 ? raw : decode(raw);
  if (value === undefined) return badPath("malformed_path", entry.names[0] as string);
  if (value.length > maxParamLength) return badPath("param_too_long", entry.names[0] as string);
  const params = new Params();
  params[entry.names[0] as string] = value;
  return { kind: "found", route: entry.route, params };
}

function manyParams<R>(
  entry: Entry<R>,
  path: string,
  starts: Int32Array,
  count: number,
  maxParamLength: number,
): MatchResult<R> {
  const { names, indexes } = entry;
  // One native search from the first parameter on: without a "%", no value needs decoding.
  const percent = path.indexOf("%", starts[entry.first] as number) !== -1;
  const params = new Params();
  for (let i = 0; i < indexes.length; i++) {
    const index = indexes[i] as number;
    const start = starts[index] as number;
    const end = index + 1 < count ? (starts[index + 1] as number) - 1 : path.length;
    let value = path.slice(start, end);
    if (percent) {
      const decoded = decode(value);
      if (decoded === undefined) return badPath("malformed_path", names[i] as string);
      value = decoded;
    }
    if (value.length > maxParamLength) return badPath("param_too_long", names[i] as string);
    params[names[i] as string] = value;
  }
  if (entry.composites.length !== 0) {
    for (const { index, pattern } of entry.composites) {
      const end = index + 1 < count ? (starts[index + 1] as number) - 1 : path.length;
      const values = matchComposite(pattern, path.slice(starts[index] as number, end)) as string[];
      for (let i = 0; i < values.length; i++) {
        const name = pattern.names[i] as string;
        const value = decode(values[i] as string);
        if (value === undefined) return badPath("malformed_path", name);
        if (value.length > maxParamLength) return badPath("param_too_long", name);
        params[name] = value;
      }
    }
  }
  if (entry.wildcard !== -1) {
    const value = decode(path.slice(starts[entry.wildcard] as number));
    if (value === undefined) return badPath("malformed_path", entry.wildcardName);
    params[entry.wildcardName] = value;
  }
  return { kind: "found", route: entry.route, params };
}

function badPath<R>(code: "malformed_path" | "param_too_long", param: string): MatchResult<R> {
  return { kind: "bad_path", code, param };
}

function decode(value: string): string | undefined {
  if (value.indexOf("%") === -1) return value;
  // RFC 3986 §2.1: a "%" must start a pct-encoded octet; and the octets must be UTF-8 (encoded surrogates are not).
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return undefined;
  }
  // A NUL is no identifier, and PostgreSQL text cannot keep one: refused before any handler or store sees it.
  return decoded.includes("\u0000") ? undefined : decoded;
}
