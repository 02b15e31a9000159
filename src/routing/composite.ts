/**
 * A segment mixing literals and parameters, e.g. `{base}...{head}` or `{name}.json`. Matching is one
 * left-to-right scan without backtracking: each parameter ends at the first occurrence of the literal
 * that follows it, a final literal is matched at the end of the segment, and no value is empty.
 */
export interface CompositePattern {
  /** Literals and parameter names in order; two parameters are never adjacent. */
  readonly parts: readonly CompositePart[];
  readonly names: readonly string[];
  /** The pattern with names erased (`{}...{}`): equal shapes match the same segments. */
  readonly shape: string;
  /** Total literal length: with several composites matching, more literal text is more specific. */
  readonly literalLength: number;
}

/** One part of a composite segment. */
export type CompositePart =
  | { readonly literal: string; readonly name?: undefined }
  | { readonly name: string; readonly literal?: undefined };

/** Matches a raw segment; the parameter values (still percent-encoded) in order, or `undefined`. */
export function matchComposite(pattern: CompositePattern, segment: string): string[] | undefined {
  const parts = pattern.parts;
  const values: string[] = [];
  let pos = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as CompositePart;
    if (part.name === undefined) {
      if (!segment.startsWith(part.literal, pos)) return undefined;
      pos += part.literal.length;
      continue;
    }
    const next = parts[i + 1];
    let end: number;
    if (next === undefined) end = segment.length;
    else if (i + 2 === parts.length) {
      end = segment.length - (next.literal as string).length;
      if (!segment.endsWith(next.literal as string)) return undefined;
    } else end = segment.indexOf(next.literal as string, pos + 1);
    if (end <= pos) return undefined;
    values.push(segment.slice(pos, end));
    pos = end;
  }
  return pos === segment.length ? values : undefined;
}
