/**
 * A naive reference matcher for the property tests: a linear scan over every route, each template
 * matched segment by segment on its own, the most specific match chosen by sorting. Slow and obvious.
 */
export interface RefRoute {
  method: string;
  template: string;
  id: number;
}

export type RefResult =
  | { kind: "found"; id: number; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: string[] }
  | { kind: "not_found" }
  | { kind: "bad_path" };

type Seg =
  | { t: "s"; v: string }
  | { t: "p"; n: string }
  | { t: "c"; lits: string[]; names: string[] }
  | { t: "w"; n: string };

function segs(template: string): Seg[] {
  if (template === "/") return [];
  return template
    .slice(1)
    .split("/")
    .map((part): Seg => {
      if (part === "*") return { t: "w", n: "*" };
      const whole = /^\{(\w+)(\*?)\}$/.exec(part);
      if (whole) return whole[2] ? { t: "w", n: whole[1] as string } : { t: "p", n: whole[1] as string };
      if (part.includes("{")) {
        const names = [...part.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
        return { t: "c", lits: part.split(/\{\w+\}/), names };
      }
      return { t: "s", v: part };
    });
}

function rank(s: Seg): number {
  return s.t === "s" ? 0 : s.t === "c" ? 1 : s.t === "p" ? 2 : 3;
}

// Documented composite rule: each value ends at the first occurrence of the next literal, a final
// literal is the segment's suffix, no value is empty.
// Literals compare case-insensitively without case sensitivity: the rule runs on the lower-cased segment and
// literals (the generated paths are ASCII, so positions are the same), values are cut from the segment as sent.
function composite(literals: string[], sent: string, caseSensitive: boolean): string[] | undefined {
  const segment = caseSensitive ? sent : sent.toLowerCase();
  const lits = caseSensitive ? literals : literals.map((lit) => lit.toLowerCase());
  if (!segment.startsWith(lits[0] as string)) return undefined;
  let pos = (lits[0] as string).length;
  const values: string[] = [];
  for (let i = 1; i < lits.length; i++) {
    const lit = lits[i] as string;
    let end: number;
    if (i === lits.length - 1) {
      if (!segment.endsWith(lit)) return undefined;
      end = segment.length - lit.length;
    } else end = segment.indexOf(lit, pos + 1);
    if (end <= pos) return undefined;
    values.push(sent.slice(pos, end));
    pos = end + lit.length;
  }
  return pos === segment.length ? values : undefined;
}

function matchOne(
  template: string,
  path: string,
  caseSensitive = true,
  maxParamLength = Number.POSITIVE_INFINITY,
): Record<string, string> | undefined | "bad" {
  const t = segs(template);
  const p = path === "/" ? [""] : path.slice(1).split("/");
  if (t.length === 0) return path === "/" ? {} : undefined;
  const raw: Record<string, string> = {};
  for (let i = 0; i < t.length; i++) {
    const s = t[i] as Seg;
    if (s.t === "w") {
      if (p.length <= i) return undefined;
      raw[s.n] = p.slice(i).join("/");
      return limited(decodeAll(raw), maxParamLength, s.n);
    }
    const v = p[i];
    if (v === undefined) return undefined;
    if (s.t === "s" && (caseSensitive ? hexUpper(v) !== hexUpper(s.v) : v.toLowerCase() !== s.v.toLowerCase()))
      return undefined;
    if (s.t === "p") {
      if (v === "") return undefined;
      raw[s.n] = v;
    }
    if (s.t === "c") {
      const values = composite(s.lits, v, caseSensitive);
      if (values === undefined) return undefined;
      s.names.forEach((n, j) => {
        raw[n] = values[j] as string;
      });
    }
  }
  if (p.length !== t.length) return undefined;
  return limited(decodeAll(raw), maxParamLength);
}

// Documented: a decoded value longer than maxParamLength is refused, a wildcard's never.
function limited(
  params: Record<string, string> | "bad",
  maxParamLength: number,
  wildcard?: string,
): Record<string, string> | "bad" {
  if (params === "bad") return params;
  const long = Object.entries(params).some(([name, value]) => name !== wildcard && value.length > maxParamLength);
  return long ? "bad" : params;
}

// Documented: a literal compares as sent but for the case of its percent-encodings' hex digits (RFC 3986 §2.1).
function hexUpper(text: string): string {
  return text.replace(/%[0-9a-f]{2}/gi, (triplet) => triplet.toUpperCase());
}

function decodeAll(raw: Record<string, string>): Record<string, string> | "bad" {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      return "bad";
    }
    // Documented: a value that decodes to U+0000 is refused like malformed encoding.
    if ((out[k] as string).includes("\u0000")) return "bad";
  }
  return out;
}

function compare(a: string, b: string): number {
  const x = segs(a);
  const y = segs(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = rank(x[i] as Seg) - rank(y[i] as Seg);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const ORDER = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"];

export function referenceMatch(
  routes: readonly RefRoute[],
  method: string,
  path: string,
  caseSensitive = true,
  maxParamLength = Number.POSITIVE_INFINITY,
): RefResult {
  const matching = routes.filter((route) => matchOne(route.template, path, caseSensitive) !== undefined);
  if (matching.length === 0) return { kind: "not_found" };
  const lookFor = (m: string) =>
    matching.filter((r) => r.method === m).sort((a, b) => compare(a.template, b.template))[0];
  const best = lookFor(method) ?? (method === "HEAD" ? lookFor("GET") : undefined);
  if (best === undefined) {
    const allow = new Set(matching.map((r) => r.method));
    if (allow.has("GET")) allow.add("HEAD");
    allow.add("OPTIONS");
    // RFC order, then extension methods in code-point order.
    const at = (m: string) => (ORDER.includes(m) ? ORDER.indexOf(m) : ORDER.length);
    return {
      kind: "method_not_allowed",
      allow: [...allow].sort((a, b) => at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0)),
    };
  }
  const params = matchOne(best.template, path, caseSensitive, maxParamLength);
  if (params === "bad" || params === undefined) return { kind: "bad_path" };
  return { kind: "found", id: best.id, params };
}
