import { answeredBy, compareMethods, METHOD_NAMES } from "../http/methods";
import { positiveInteger } from "../options/number-option";
import { foldComposite } from "./composite";
import { Automaton, type Entry, type State } from "./dfa";
import { RoutingError } from "./errors";
import { type MatchOptions, type MatchResult, NOT_FOUND } from "./match-result";
import { methodSlots } from "./method-slots";
import { compositeClash } from "./route-overlap";
import { type ParsedTemplate, parseTemplate, templateShape } from "./template";
import { walker } from "./walk";

/** One route given to {@link compileMatcher}: a method, a template and the value to return. */
export interface MatcherRoute<R> {
  readonly method: string;
  readonly template: string;
  readonly route: R;
  /** Names the declaration in build-time error messages. */
  readonly label?: string;
}

/** A compiled route table: `match(method, path)` is a lookup, no regular expression is involved. */
export interface Matcher<R> {
  /** Finds the route for a method and a still percent-encoded path (no query). */
  match(method: string, path: string): MatchResult<R>;
}

const EMPTY_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The `Allow` list for a set of declared methods, in the method table's order: a method another one
 * answers joins it (HEAD with GET, RFC 9110 §9.3.2), and OPTIONS is always there because the router
 * answers it (§9.3.7).
 */
export function allowList(declared: Iterable<string>): string[] {
  const set = new Set(declared);
  for (const method of METHOD_NAMES) {
    const via = answeredBy(method);
    if (via !== undefined && set.has(via)) set.add(method);
  }
  set.add("OPTIONS");
  return [...set].sort(compareMethods);
}

// A property key as V8 stores it: the engine then recognises the store of a parameter by identity
// rather than by comparing characters (names cut from a template are fresh strings).
function internalized(name: string): string {
  return Object.keys({ [name]: 0 })[0] as string;
}

// With `caseSensitive: false` the literals of composite segments compare case-insensitively, as literal segments do
// (docs/routing.md, "Case"): the table holds them folded, at build and when matching.
function foldTemplate(parsed: ParsedTemplate): ParsedTemplate {
  if (!parsed.segments.some((segment) => segment.kind === "composite")) return parsed;
  const segments = parsed.segments.map((segment) =>
    segment.kind === "composite" ? { kind: "composite" as const, pattern: foldComposite(segment.pattern) } : segment,
  );
  return { template: parsed.template, segments, params: parsed.params };
}

/**
 * `text` with the hex digits of its percent-encodings in upper case: RFC 3986 §2.1, "%2b" and "%2B" are one octet, and
 * URIs that differ only there are equivalent (§6.2.2.1, which names upper case the normal form).
 */
function upperHex(text: string): string {
  return text.includes("%") ? text.replace(/%[0-9a-f]{2}/gi, (triplet) => triplet.toUpperCase()) : text;
}

// Whether some literal of a template is percent-encoded (`/langs/c%2B%2B`): only then does a path's hex case matter.
function hasEncodedLiteral(parsed: ParsedTemplate): boolean {
  return parsed.segments.some((segment) =>
    segment.kind === "static"
      ? segment.value.includes("%")
      : segment.kind === "composite" && segment.pattern.parts.some((part) => part.literal?.includes("%")),
  );
}

function toEntry<R>(route: MatcherRoute<R>, caseSensitive: boolean): Entry<R> {
  // Literals compare as sent, but for the case of percent-encoding hex digits (folded anyway without caseSensitive).
  const template = parseTemplate(caseSensitive ? upperHex(route.template) : route.template);
  const parsed = caseSensitive ? template : foldTemplate(template);
  const names: string[] = [];
  const indexes: number[] = [];
  const composites: Entry<R>["composites"][number][] = [];
  let wildcard = -1;
  let wildcardName = "";
  parsed.segments.forEach((segment, index) => {
    if (segment.kind === "param") {
      names.push(internalized(segment.name));
      indexes.push(index);
    } else if (segment.kind === "composite") composites.push({ index, pattern: segment.pattern });
    else if (segment.kind === "wildcard") {
      wildcard = index;
      wildcardName = internalized(segment.name);
    }
  });
  return {
    method: route.method,
    parsed,
    route: route.route,
    label: route.label ?? `${route.method} ${route.template}`,
    names,
    indexes,
    composites,
    wildcard,
    wildcardName,
    first: Math.max(
      0,
      parsed.segments.findIndex((segment) => segment.kind !== "static"),
    ),
    single: names.length === 1 && composites.length === 0 && wildcard === -1,
    staticResult:
      parsed.params.length > 0 ? undefined : Object.freeze({ kind: "found", route: route.route, params: EMPTY_PARAMS }),
  };
}

function checkConflicts<R>(entries: readonly Entry<R>[], caseSensitive: boolean): void {
  const seen = new Map<string, Entry<R>>();
  for (const entry of entries) {
    const key = `${entry.method} ${templateShape(entry.parsed, caseSensitive)}`;
    const previous = seen.get(key);
    if (previous === undefined) {
      seen.set(key, entry);
      continue;
    }
    const same = previous.parsed.template === entry.parsed.template;
    throw new RoutingError(
      same ? "duplicate_route" : "ambiguous_route",
      same
        ? `Duplicate route: ${entry.label} is already declared by ${previous.label}.`
        : `Ambiguous routes: ${entry.label} and ${previous.label} match the same paths with the same method.`,
    );
  }
}

/**
 * Refuses two routes of one method whose first difference is two composite segments that can match
 * the same segment (`/{a}-x` and `/x-{a}` both match `/x-x`): specificity cannot say which is meant.
 * A difference of kind (literal, composite, parameter, wildcard) is decided by specificity instead.
 */
function checkComposites<R>(entries: readonly Entry<R>[], caseSensitive: boolean): void {
  const candidates = entries.filter((entry) => entry.composites.length > 0);
  for (let i = 0; i < candidates.length; i++) {
    for (let j = i + 1; j < candidates.length; j++) {
      const a = candidates[i] as Entry<R>;
      const b = candidates[j] as Entry<R>;
      if (a.method !== b.method) continue;
      const clash = compositeClash(a.parsed, b.parsed, caseSensitive);
      if (clash === undefined) continue;
      throw new RoutingError(
        "ambiguous_route",
        `Ambiguous routes: ${a.label} and ${b.label} can match the same path: their composite segments both match "${clash}", and no rule says which is meant.`,
      );
    }
  }
}

/**
 * Whether a client reads `location` as a reference to another host rather than a path on this one: RFC 3986 §4.2,
 * a reference that starts with "//" is a network-path reference; a browser reads "/\" so too (WHATWG URL: in an
 * http(s) URL "\" is "/", https://url.spec.whatwg.org/#path-state), after dropping ASCII tab and newline.
 */
function networkPath(location: string): boolean {
  return /^\/[\t\n\r]*[/\\]/.test(location);
}

/**
 * Compiles a route table into a {@link Matcher}.
 * @throws RoutingError `invalid_template`, `query_in_template`, `duplicate_route` or `ambiguous_route`
 * (same method and shape, or composite segments in one position that can match one segment).
 * @example
 * const m = compileMatcher([{ method: "GET", template: "/users/{id}", route: "users.read" }]);
 * m.match("GET", "/users/u_1"); // { kind: "found", route: "users.read", params: { id: "u_1" } }
 */
export function compileMatcher<R>(routes: readonly MatcherRoute<R>[], options: MatchOptions = {}): Matcher<R> {
  const caseSensitive = options.caseSensitive ?? true;
  const maxParamLength = positiveInteger("router", "maxParamLength", options.maxParamLength ?? 100);
  const trailingSlash = options.trailingSlash ?? "strict";
  const duplicateSlashes = options.duplicateSlashes ?? "strict";
  const fold = caseSensitive ? (segment: string) => segment : (segment: string) => segment.toLowerCase();
  const entries = routes.map((route) => toEntry(route, caseSensitive));
  checkConflicts(entries, caseSensitive);
  checkComposites(entries, caseSensitive);
  const slots = methodSlots(entries.map((entry) => entry.method));
  const slotOf = slots.slotOf;
  const automaton = new Automaton<R>(caseSensitive, slots.names, allowList);
  for (const entry of entries) automaton.insert(entry);
  const rootState = automaton.stateOf([automaton.root]);
  // "/" is the root template, and also one empty segment for a root wildcard ("/*" matches "/").
  const root = automaton.root;
  const slashState = automaton.stateOf(root.wildcard ? [root, root.wildcard] : [root]);

  // Fast path: a literal path maps straight to its final state, without splitting; a table of the
  // literal paths' lengths spares hashing a path that cannot be one.
  const literal = new Map<string, State<R>>();
  const literalLengths = new Uint8Array(256);
  for (const entry of entries) {
    if (entry.staticResult === undefined) continue;
    let state = entry.parsed.segments.length === 0 ? slashState : rootState;
    for (const segment of entry.parsed.segments) {
      if (segment.kind === "static") state = automaton.stepLiteral(state, fold(segment.value));
    }
    literal.set(fold(entry.parsed.template), state);
    literalLengths[Math.min(entry.parsed.template.length, 255)] = 1;
  }
  // When the first segment can only be a literal, its first character alone turns most misses away.
  const rootOpen =
    !caseSensitive || root.param !== undefined || root.wildcard !== undefined || root.composites.size > 0;
  const rootFirsts = new Uint8Array(128);
  for (const key of rootState.keys) rootFirsts[key.charCodeAt(0) & 127] = 1;

  const walk = walker(automaton, rootState, slashState, caseSensitive, maxParamLength);

  // Paths are put in the literals' normal form only where a literal is percent-encoded: other tables pay nothing.
  const normalHex = caseSensitive && entries.some((entry) => hasEncodedLiteral(entry.parsed));

  function exact(method: string, sent: string): MatchResult<R> {
    const path = normalHex ? upperHex(sent) : sent;
    if (!rootOpen && path.length > 1 && rootFirsts[path.charCodeAt(1) & 127] === 0) return NOT_FOUND;
    const slot = slotOf(method);
    if (literalLengths[Math.min(path.length, 255)] === 0) return walk(slot, path);
    const state = literal.get(caseSensitive ? path : path.toLowerCase());
    if (state !== undefined) {
      const found = slot === -1 ? undefined : state.byMethod[slot];
      if (found === undefined) return state.refusal;
      if (found.staticResult !== undefined) return found.staticResult;
    }
    return walk(slot, path);
  }

  function normalize(path: string): { path: string; redirect: boolean } {
    let out = path;
    let redirect = false;
    if (duplicateSlashes !== "strict" && out.includes("//")) {
      out = out.replace(/\/{2,}/g, "/");
      redirect ||= duplicateSlashes === "redirect";
    }
    if (trailingSlash !== "strict" && out.length > 1 && out.endsWith("/")) {
      out = out.slice(0, -1);
      redirect ||= trailingSlash === "redirect";
    }
    return { path: out, redirect };
  }

  if (trailingSlash === "strict" && duplicateSlashes === "strict") return { match: exact };
  return {
    match(method, path) {
      const result = exact(method, path);
      if (result.kind !== "not_found") return result;
      const normal = normalize(path);
      if (normal.path === path) return result;
      const retry = exact(method, normal.path);
      if (retry.kind === "not_found" || !normal.redirect) return retry;
      // No redirect to another host: the path answers as not found.
      if (networkPath(normal.path)) return result;
      // Fetch §4.8: a CORS preflight needs an ok status and follows no redirect, so OPTIONS answers as the path it
      // would be redirected to does.
      if (method === "OPTIONS") return retry;
      return { kind: "redirect", location: normal.path };
    },
  };
}
