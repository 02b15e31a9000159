import { matchComposite } from "./composite";
import type { Entry } from "./dfa";
import type { MatchResult } from "./match-result";

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
  const { names, indexes } = entry;
  // One native search from the first parameter on: without a "%", no value needs decoding.
  const percent = path.indexOf("%", starts[entry.first] as number) !== -1;
  if (entry.single) {
    // The most common layout, one whole segment and nothing else, without the general loops.
    const index = indexes[0] as number;
    const end = index + 1 < count ? (starts[index + 1] as number) - 1 : path.length;
    const value = percent ? decode(path.slice(starts[index] as number, end)) : path.slice(starts[index] as number, end);
    if (value === undefined) return badPath("malformed_path", names[0] as string);
    if (value.length > maxParamLength) return badPath("param_too_long", names[0] as string);
    const params: Record<string, string> = {};
    params[names[0] as string] = value;
    return { kind: "found", route: entry.route, params };
  }
  const params: Record<string, string> = {};
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
    // The common bare "*" alone: a literal key is a faster store than a computed one.
    if (entry.wildcardName === "*" && indexes.length === 0 && entry.composites.length === 0)
      return { kind: "found", route: entry.route, params: { "*": value } };
    params[entry.wildcardName] = value;
  }
  return { kind: "found", route: entry.route, params };
}

function badPath<R>(code: "malformed_path" | "param_too_long", param: string): MatchResult<R> {
  return { kind: "bad_path", code, param };
}

function decode(value: string): string | undefined {
  if (value.indexOf("%") === -1) return value;
  // RFC 3986 §2.1: a "%" must start a pct-encoded octet; and the octets must be UTF-8.
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
