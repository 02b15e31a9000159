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
  /**
   * Literals compare case-insensitively (`caseSensitive: false`): they are lower-cased here, and so is a segment
   * before it is matched; values are cut from the segment as sent.
   */
  readonly folded?: boolean | undefined;
}

/** The pattern of a case-insensitive table: its literals (and shape) lower-cased, as the table's literal segments. */
export function foldComposite(pattern: CompositePattern): CompositePattern {
  if (pattern.folded === true) return pattern;
  return {
    parts: pattern.parts.map((part) => (part.name === undefined ? { literal: part.literal.toLowerCase() } : part)),
    names: pattern.names,
    shape: pattern.shape.toLowerCase(),
    literalLength: pattern.literalLength,
    folded: true,
  };
}

// The segment lower-cased with every character in its place, so that positions found in it cut the segment as sent.
// toLowerCase keeps the length but for U+0130 (İ → i̇); then each UTF-16 unit is folded on its own.
function foldSegment(segment: string): string {
  const lower = segment.toLowerCase();
  if (lower.length === segment.length) return lower;
  let out = "";
  for (const unit of segment.split("")) {
    const folded = unit.toLowerCase();
    out += folded.length === 1 ? folded : unit;
  }
  return out;
}

/** One part of a composite segment. */
export type CompositePart =
  | { readonly literal: string; readonly name?: undefined }
  | { readonly name: string; readonly literal?: undefined };

/** Matches a raw segment; the parameter values (still percent-encoded) in order, or `undefined`. */
export function matchComposite(pattern: CompositePattern, sent: string): string[] | undefined {
  const parts = pattern.parts;
  const segment = pattern.folded === true ? foldSegment(sent) : sent;
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
    values.push(sent.slice(pos, end));
    pos = end;
  }
  return pos === segment.length ? values : undefined;
}
