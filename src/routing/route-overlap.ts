import { matchComposite } from "./composite";
import { compositeOverlap } from "./composite-overlap";
import { kindRank, type ParsedTemplate, type TemplateSegment } from "./template";

/**
 * When two templates' first difference (in segment kind or composite shape) is two composite segments,
 * and some path matches both templates, a segment both composites match; otherwise `undefined`.
 * Specificity orders every other first difference (a literal before a composite before a parameter
 * before a wildcard), so only this one leaves the choice between two matching routes open.
 */
export function compositeClash(a: ParsedTemplate, b: ParsedTemplate, caseSensitive: boolean): string | undefined {
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i] as TemplateSegment;
    const y = b.segments[i] as TemplateSegment;
    if (x.kind === "composite" && y.kind === "composite" && x.pattern.shape !== y.pattern.shape) {
      const segment = compositeOverlap(x.pattern, y.pattern);
      return segment !== undefined && restIntersects(a, b, i + 1, caseSensitive) ? segment : undefined;
    }
    if (kindRank(x) !== kindRank(y) || !intersects(x, y, caseSensitive)) return undefined;
  }
  return undefined;
}

// Whether some path's segments from `from` on match both templates.
function restIntersects(a: ParsedTemplate, b: ParsedTemplate, from: number, caseSensitive: boolean): boolean {
  for (let i = from; ; i++) {
    const x = a.segments[i];
    const y = b.segments[i];
    if (x === undefined || y === undefined) return x === y;
    // A wildcard takes the rest of the path, whatever the other template asks of it.
    if (x.kind === "wildcard" || y.kind === "wildcard") return true;
    if (!intersects(x, y, caseSensitive)) return false;
  }
}

// Whether some segment matches both template segments (never two wildcards: they are handled above).
function intersects(x: TemplateSegment, y: TemplateSegment, caseSensitive: boolean): boolean {
  if (x.kind === "static" && y.kind === "static") {
    return caseSensitive ? x.value === y.value : x.value.toLowerCase() === y.value.toLowerCase();
  }
  if (x.kind === "static") return literalIntersects(x.value, y);
  if (y.kind === "static") return literalIntersects(y.value, x);
  if (x.kind === "composite" && y.kind === "composite" && x.pattern.shape !== y.pattern.shape) {
    return compositeOverlap(x.pattern, y.pattern) !== undefined;
  }
  return true;
}

function literalIntersects(literal: string, other: TemplateSegment): boolean {
  // A composite of a case-insensitive table is folded (matcher.ts), and folds the literal as it matches it.
  return other.kind !== "composite" || matchComposite(other.pattern, literal) !== undefined;
}
