import { isDotSegment } from "../http/dot-segments";
import type { CompositePart, CompositePattern } from "./composite";
import { RoutingError } from "./errors";

/**
 * Path templates, OpenAPI 3.1 §4.8.8 style, with a trailing wildcard:
 *   template = "/" / 1*( "/" segment )
 *   segment  = literal / "{" name "}" / composite
 *   composite = [ literal ] 1*( "{" name "}" literal ) [ "{" name "}" ]   ; e.g. "{base}...{head}"
 *   last     = segment / "{" name "*}" / "*"
 *   literal  = 1*( unreserved / pct-encoded / sub-delims / ":" / "@" )   ; RFC 3986 §3.3 pchar, except
 *              a leading ":name", "*", "(" ")", and a trailing "+" (other routers' syntax: refused with a hint)
 *   name     = ( ALPHA / "_" ) *( ALPHA / DIGIT / "_" )
 * Parameters never compile to a regular expression: a segment is compared, never searched with a pattern.
 */

/** One segment of a parsed template. */
export type TemplateSegment =
  | { readonly kind: "static"; readonly value: string }
  | { readonly kind: "param"; readonly name: string }
  | { readonly kind: "composite"; readonly pattern: CompositePattern }
  | { readonly kind: "wildcard"; readonly name: string };

/** A template split into segments. */
export interface ParsedTemplate {
  readonly template: string;
  readonly segments: readonly TemplateSegment[];
  /** Parameter names in order (the wildcard last, when present). */
  readonly params: readonly string[];
}

type ParamNames<T extends string> = T extends `${string}{${infer Name}}${infer Rest}`
  ? (Name extends `${infer Wild}*` ? Wild : Name) | ParamNames<Rest>
  : never;
type BareWildcard<T extends string> = T extends `${string}/*` ? "*" : never;

/**
 * The path parameters a template declares, as strings.
 * @example PathParams<"/users/{user_id}/orders/{order_id}"> // { user_id: string; order_id: string }
 */
export type PathParams<T extends string> = { [K in ParamNames<T> | BareWildcard<T>]: string };

// RFC 3986 §3.3 pchar without "%" (checked separately as pct-encoded) and without "{" "}".
const LITERAL = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Names that would reach Object.prototype when used as keys of a params object.
const FORBIDDEN_NAMES = new Set(["__proto__", "constructor", "prototype"]);

function invalid(template: string, why: string): RoutingError {
  return new RoutingError("invalid_template", `Invalid path template "${template}": ${why}.`);
}

// Characters that mean a pattern in Express, path-to-regexp or a regular expression, never in these templates.
const REGEX_LIKE = /[()[\]\\^|]|\+$/;

/**
 * Refuses a literal written in another router's grammar, which would otherwise match only itself: `:name`
 * (Express), `*` outside the last segment's wildcard, and regular-expression syntax (`(\\d+)`, `[a-z]`, `a|b`).
 * Each error says what to write instead.
 */
function checkForeignSyntax(template: string, literal: string): void {
  const colon = /^:([A-Za-z_][A-Za-z0-9_]*)/.exec(literal);
  if (colon !== null) {
    throw invalid(template, `"${literal}" looks like an Express parameter; use {${colon[1]}}`);
  }
  if (REGEX_LIKE.test(literal)) {
    throw invalid(
      template,
      `"${literal}" looks like a pattern; use {name} and check the value with the params schema (a literal "(" ")" "+" is written %28 %29 %2B)`,
    );
  }
  if (literal.includes("*")) {
    throw invalid(
      template,
      `"${literal}" has a "*"; use {name} for a segment, or {name*} (or "*") as the last segment`,
    );
  }
}

function parseName(template: string, name: string, seen: Set<string>): string {
  if (!NAME.test(name)) throw invalid(template, `"${name}" is not a parameter name (letters, digits, "_")`);
  if (FORBIDDEN_NAMES.has(name)) throw invalid(template, `"${name}" cannot be a parameter name`);
  if (seen.has(name)) throw invalid(template, `parameter "${name}" appears twice`);
  seen.add(name);
  return name;
}

/** Parses and validates a path template; throws {@link RoutingError} on a bad one. */
export function parseTemplate(template: string): ParsedTemplate {
  if (typeof template !== "string") throw new TypeError("A path template must be a string.");
  if (template.includes("?")) {
    throw new RoutingError(
      "query_in_template",
      `Path template "${template}" contains a query string: query parameters filter and shape lists, declare them in the query schema.`,
    );
  }
  if (!template.startsWith("/")) throw invalid(template, 'it must start with "/"');
  if (template === "/") return { template, segments: [], params: [] };
  if (template.endsWith("/")) throw invalid(template, 'it must not end with "/" (see the trailingSlash option)');
  const parts = template.slice(1).split("/");
  const seen = new Set<string>();
  const segments: TemplateSegment[] = [];
  parts.forEach((part, index) => {
    const last = index === parts.length - 1;
    if (part === "") throw invalid(template, "it contains an empty segment");
    // RFC 3986 §5.2.4: clients remove "." and ".." segments (WHATWG URL too, as %2E), so no request can reach one.
    if (isDotSegment(part)) throw invalid(template, `"${part}" is a dot-segment, which clients remove`);
    if (part === "*") {
      if (!last) throw invalid(template, "a wildcard can only be the last segment");
      segments.push({ kind: "wildcard", name: "*" });
      return;
    }
    if (part.startsWith("{") && part.indexOf("}") === part.length - 1) {
      const inner = part.slice(1, -1);
      if (inner.endsWith("*")) {
        if (!last) throw invalid(template, "a wildcard can only be the last segment");
        segments.push({ kind: "wildcard", name: parseName(template, inner.slice(0, -1), seen) });
      } else {
        segments.push({ kind: "param", name: parseName(template, inner, seen) });
      }
      return;
    }
    if (part.includes("{") || part.includes("}")) {
      segments.push({ kind: "composite", pattern: parseComposite(template, part, seen) });
      return;
    }
    checkForeignSyntax(template, part);
    if (!LITERAL.test(part)) throw invalid(template, `"${part}" has characters that must be percent-encoded`);
    segments.push({ kind: "static", value: part });
  });
  const params = segments.flatMap((segment) =>
    segment.kind === "static" ? [] : segment.kind === "composite" ? segment.pattern.names : [segment.name],
  );
  return { template, segments, params };
}

function parseComposite(template: string, part: string, seen: Set<string>): CompositePattern {
  const parts: CompositePart[] = [];
  let pos = 0;
  while (pos < part.length) {
    const open = part.indexOf("{", pos);
    if (open === -1 || open > pos) {
      const literal = part.slice(pos, open === -1 ? part.length : open);
      checkForeignSyntax(template, parts.length === 0 ? literal : `x${literal}`);
      if (!LITERAL.test(literal) || literal.includes("}")) throw invalid(template, `"${part}" is not a valid segment`);
      parts.push({ literal });
      pos += literal.length;
      continue;
    }
    const close = part.indexOf("}", open);
    if (close === -1) throw invalid(template, `"${part}" has an unclosed "{"`);
    if (parts.at(-1)?.name !== undefined)
      throw invalid(template, `"${part}": two parameters must be separated by a literal`);
    const name = part.slice(open + 1, close);
    if (name.endsWith("*")) throw invalid(template, "a wildcard must be a whole segment");
    parts.push({ name: parseName(template, name, seen) });
    pos = close + 1;
  }
  const names = parts.flatMap((p) => (p.name === undefined ? [] : [p.name]));
  const shape = parts.map((p) => (p.name === undefined ? p.literal : "{}")).join("");
  const literalLength = parts.reduce((sum, p) => sum + (p.literal?.length ?? 0), 0);
  return { parts, names, shape, literalLength };
}

/** The template with parameter names erased: two templates with one shape match the same paths. */
export function templateShape(parsed: ParsedTemplate, caseSensitive: boolean): string {
  if (parsed.segments.length === 0) return "/";
  let shape = "";
  for (const segment of parsed.segments) {
    if (segment.kind === "static") shape += `/${caseSensitive ? segment.value : segment.value.toLowerCase()}`;
    else if (segment.kind === "composite")
      shape += `/${caseSensitive ? segment.pattern.shape : segment.pattern.shape.toLowerCase()}`;
    else shape += segment.kind === "param" ? "/{}" : "/{*}";
  }
  return shape;
}

/**
 * Orders templates from most to least specific, segment by segment: a literal, then a composite
 * (more literal text first), then a parameter, then a wildcard. When several templates match one
 * path, the first in this order wins.
 */
export function compareSpecificity(a: ParsedTemplate, b: ParsedTemplate): number {
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i] as TemplateSegment;
    const y = b.segments[i] as TemplateSegment;
    const rank = kindRank(x) - kindRank(y);
    if (rank !== 0) return rank;
    if (x.kind === "composite" && y.kind === "composite" && x.pattern.shape !== y.pattern.shape) {
      const longer = y.pattern.literalLength - x.pattern.literalLength;
      return longer !== 0 ? longer : x.pattern.shape < y.pattern.shape ? -1 : 1;
    }
  }
  return a.segments.length - b.segments.length;
}

/** A segment kind's rank in {@link compareSpecificity}: literal 0, composite 1, parameter 2, wildcard 3. */
export function kindRank(segment: TemplateSegment): number {
  return segment.kind === "static" ? 0 : segment.kind === "composite" ? 1 : segment.kind === "param" ? 2 : 3;
}
