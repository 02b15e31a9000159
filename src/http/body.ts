import { positiveInteger } from "../options/number-option";
import { contentCodingProblem } from "./content-coding";
import { countMembers, findDuplicateMember } from "./duplicate-members";
import { type ForbiddenMemberPlace, forbiddenMemberProblem } from "./forbidden-member";
import {
  DEFAULT_JSON_MAX_DEPTH,
  findStringFault,
  type JsonBodyOptions,
  type StringFaultAt,
  scanJsonText,
} from "./json-limits";
import { isJsonMediaType, type MediaType, parseMediaType } from "./media-type";
import type { HttpRequest } from "./message";
import { percentDecodesToUtf8 } from "./percent-decode";
import { HttpProblem, type HttpProblemCode } from "./problem";
import { prototypeMemberOf } from "./prototype-members";
import { unsupportedMediaType } from "./unsupported-media-type";
import { isWellFormed } from "./well-formed";

/** The outcome of reading a body: the value, or the problem to answer with (its `code` is an {@link HttpProblemCode}). */
export type BodyResult<T> = { ok: true; value: T } | { ok: false; problem: HttpProblem<HttpProblemCode> };

/** Form fields: a name sent once is a string; a repeated name, or one ending in `[]`, is an array. */
export type FormRecord = Record<string, string | string[]>;

const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function contentType(request: Pick<HttpRequest, "headers">): MediaType | undefined {
  const value = request.headers["content-type"];
  return value === undefined ? undefined : parseMediaType(value);
}

/** A request as the body readers see it: the method, when given, decides which Accept-* field a 415 carries. */
export type BodyRequest = Pick<HttpRequest, "headers" | "body"> & { readonly method?: string };

function emptyBody(): HttpProblem<HttpProblemCode> {
  return new HttpProblem({ status: 400, code: "body_required", detail: "The request body is empty." });
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return fatalDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

const FAULT_MESSAGES = {
  lone_surrogate:
    "A string holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape); I-JSON text cannot (RFC 7493 §2.1).",
  nul_character: "A string holds U+0000 (\\u0000), which this API does not accept.",
} as const;

/**
 * The 422 problem for a string a body may not carry: `errors` names it with an RFC 6901 JSON Pointer, as a
 * validation problem does.
 */
export function invalidStringProblem(at: StringFaultAt): HttpProblem<HttpProblemCode> {
  const message = FAULT_MESSAGES[at.fault];
  return new HttpProblem({
    status: 422,
    code: "invalid_string",
    detail: `${message} At ${at.pointer === "" ? "the root" : `"${at.pointer}"`} of the request body.`,
    extensions: { errors: [{ pointer: at.pointer, in: "body", code: at.fault, message }] },
  });
}

// A body is content: its prototype members are 422s, as its other member faults (the query's are 400s).
const BODY: ForbiddenMemberPlace = { status: 422, in: "body" };

const DUPLICATE_MESSAGE = "A member name is given twice in one object; I-JSON names are unique (RFC 7493 §2.3).";

function duplicateMemberProblem(pointer: string): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 422,
    code: "duplicate_member",
    detail: `${DUPLICATE_MESSAGE} At "${pointer}" of the request body.`,
    extensions: { errors: [{ pointer, in: "body", code: "duplicate_member", message: DUPLICATE_MESSAGE }] },
  });
}

function tooDeep(maxDepth: number): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 400,
    code: "json_too_deep",
    detail: `The JSON body nests arrays and objects more than ${maxDepth} deep.`,
    extensions: { max_depth: maxDepth },
  });
}

/**
 * Parses JSON text within the limits of `options`: 400 `json_too_deep` when it nests deeper than `maxDepth`
 * (checked before parsing), 400 `malformed_json` when it is not JSON (RFC 8259), 422 `invalid_string` when a string
 * or member name holds a lone surrogate (RFC 7493 §2.1) or, unless `allowNul`, U+0000, and, unless
 * `allowPrototypeKeys`, 422 `forbidden_member` for an own `__proto__` member or a `constructor` member holding a
 * `prototype` member (prototype poisoning), and, unless `allowDuplicateMembers`, 422 `duplicate_member` for a member
 * name given twice in one object (RFC 7493 §2.3). A leading BOM (U+FEFF) is ignored, as RFC 8259 §8.1 allows and
 * the body readers do.
 * @param text the JSON text.
 * @param options the nesting limit and whether NUL is accepted.
 * @example const read = parseJsonText('{"a":"\\ud800"}'); // { ok: false, problem: 422 invalid_string at /a }
 */
export function parseJsonText(text: string, options: JsonBodyOptions = {}): BodyResult<unknown> {
  // RFC 8259 §8.1: a parser may ignore a BOM; the body readers' UTF-8 decoder drops one, so text kept with it reads alike.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // Text from anywhere (a string cut mid-pair) may hold a lone surrogate as a character, not only as a \u escape.
  return parseJson(json, options, isWellFormed(json));
}

// `wellFormed`: the text holds no lone surrogate character, as text decoded from UTF-8 never does.
function parseJson(text: string, options: JsonBodyOptions, wellFormed: boolean): BodyResult<unknown> {
  // Compared with NaN, no nesting would be too deep: a misconfigured limit is refused, not ignored.
  const maxDepth = positiveInteger("parseJsonText", "maxDepth", options.maxDepth ?? DEFAULT_JSON_MAX_DEPTH);
  const scan = scanJsonText(text, maxDepth);
  if (scan.tooDeep) return { ok: false, problem: tooDeep(maxDepth) };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problem: new HttpProblem({
        status: 400,
        code: "malformed_json",
        detail: `The body is not valid JSON: ${(error as Error).message}`,
        cause: error,
      }),
    };
  }
  // Without a \u escape, well-formed text holds neither a lone surrogate nor a NUL (RFC 8259 §7: controls are escaped).
  if (scan.unicodeEscape || !wellFormed) {
    const fault = findStringFault(value, options.allowNul ?? false);
    if (fault !== undefined) return { ok: false, problem: invalidStringProblem(fault) };
  }
  // Walked only when the text names __proto__ or constructor and prototype: other bodies pay a search of the text.
  if (options.allowPrototypeKeys !== true) {
    const member = prototypeMemberOf(text, value, scan.unicodeEscape);
    if (member !== undefined) return { ok: false, problem: forbiddenMemberProblem(member, BODY) };
  }
  // A name given twice leaves the parsed value fewer members than the text has name separators: only then is the
  // text read again, name by name, to say where.
  if (options.allowDuplicateMembers !== true && scan.members > 0 && countMembers(value) !== scan.members) {
    const pointer = findDuplicateMember(text);
    if (pointer !== undefined) return { ok: false, problem: duplicateMemberProblem(pointer) };
  }
  return { ok: true, value };
}

/**
 * Reads a JSON body (RFC 8259): 400 when empty, not UTF-8 or malformed; 415 when the Content-Type is not
 * JSON (`application/json` or any `+json` type, e.g. `application/merge-patch+json`) or names another charset, and
 * 415 `unsupported_content_coding` when a `Content-Encoding` other than `identity` says the body is coded;
 * and the limits of {@link parseJsonText} (nesting depth, I-JSON strings, no NUL and no prototype members unless
 * allowed).
 * @param options the nesting limit and whether NUL is accepted.
 */
export function safeJsonBody(request: BodyRequest, options: JsonBodyOptions = {}): BodyResult<unknown> {
  if (request.body.byteLength === 0) return { ok: false, problem: emptyBody() };
  const coded = contentCodingProblem(request.headers);
  if (coded !== undefined) return { ok: false, problem: coded };
  const media = contentType(request);
  if (!isJsonMediaType(media)) {
    return { ok: false, problem: unsupportedMediaType(request, ["application/json"]) };
  }
  const charset = media?.parameters.charset?.toLowerCase();
  // RFC 8259 §8.1: JSON exchanged between systems must be UTF-8.
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return { ok: false, problem: unsupportedMediaType(request, ["application/json; charset=utf-8"]) };
  }
  const text = decodeUtf8(request.body);
  if (text === undefined) {
    return {
      ok: false,
      problem: new HttpProblem({ status: 400, code: "malformed_json", detail: "The body is not valid UTF-8." }),
    };
  }
  // Decoded from UTF-8, the text is well-formed.
  return parseJson(text, options, true);
}

/** Like {@link safeJsonBody} but throws the {@link HttpProblem}, which the adapters render. */
export function jsonBody(request: BodyRequest, options: JsonBodyOptions = {}): unknown {
  const result = safeJsonBody(request, options);
  if (!result.ok) throw result.problem;
  return result.value;
}

/**
 * Parses `application/x-www-form-urlencoded` text (WHATWG URL §5.1) keeping repeated names as arrays.
 * A name ending in `[]` (`enabled_events[]`) is stored without the brackets and is always an array.
 */
export function parseForm(text: string): FormRecord {
  const out: FormRecord = Object.create(null);
  for (const [rawName, value] of new URLSearchParams(text)) {
    const isArray = rawName.endsWith("[]");
    const name = isArray ? rawName.slice(0, -2) : rawName;
    const existing = out[name];
    if (existing === undefined) out[name] = isArray ? [value] : value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[name] = [existing, value];
  }
  return out;
}

/**
 * Reads a form body: 400 `malformed_form` when not UTF-8, also inside a percent-escape (`%E9`, which WHATWG URL §5.1
 * would read as U+FFFD), naming the `field`; 400 when empty; 415 when the Content-Type is not form-urlencoded or a
 * `Content-Encoding` other than `identity` says the body is coded (`unsupported_content_coding`), 422
 * `invalid_string` when a name or value decodes to U+0000 (unless `allowNul`), and 422 `forbidden_member` at
 * `/__proto__` for a field named `__proto__` (percent-encoded or as `__proto__[]` too), unless `allowPrototypeKeys`,
 * as a JSON body's. A `constructor` field is accepted: its value is text, which holds no `prototype` member.
 * @param options the JSON body options that apply to forms too (`allowNul`, `allowPrototypeKeys`).
 * @example safeFormBody(request); // "__proto__[]=a": { ok: false, problem: 422 forbidden_member at /__proto__ }
 */
export function safeFormBody(
  request: BodyRequest,
  options: Pick<JsonBodyOptions, "allowNul" | "allowPrototypeKeys"> = {},
): BodyResult<FormRecord> {
  if (request.body.byteLength === 0) return { ok: false, problem: emptyBody() };
  const coded = contentCodingProblem(request.headers);
  if (coded !== undefined) return { ok: false, problem: coded };
  const media = contentType(request);
  if (media?.type !== "application" || media.subtype !== "x-www-form-urlencoded") {
    return { ok: false, problem: unsupportedMediaType(request, ["application/x-www-form-urlencoded"]) };
  }
  const text = decodeUtf8(request.body);
  if (text === undefined) {
    return {
      ok: false,
      problem: new HttpProblem({ status: 400, code: "malformed_form", detail: "The body is not valid UTF-8." }),
    };
  }
  // WHATWG URL §5.1 decodes escaped bytes that are not UTF-8 to U+FFFD: refused, as a query's are, not stored changed.
  const undecodable = text.includes("%") ? undecodableField(text) : undefined;
  if (undecodable !== undefined) {
    return {
      ok: false,
      problem: new HttpProblem({
        status: 400,
        code: "malformed_form",
        detail: `Form field "${undecodable}" is not percent-encoded UTF-8.`,
        extensions: { field: undecodable },
      }),
    };
  }
  const value = parseForm(text);
  // With every escape UTF-8, only a NUL can be left to refuse.
  if (options.allowNul !== true && (text.includes("%00") || text.includes("\u0000"))) {
    const fault = findStringFault(value, false);
    if (fault !== undefined) return { ok: false, problem: invalidStringProblem(fault) };
  }
  // Own on the null-prototype record, the field sets a prototype once the form is Object.assign-ed, as JSON's would.
  if (options.allowPrototypeKeys !== true && Object.hasOwn(value, "__proto__")) {
    return { ok: false, problem: forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto_key" }, BODY) };
  }
  return { ok: true, value };
}

// The name (decoded when it can be, else as sent) of the first field whose name or value escapes bytes that are not UTF-8.
function undecodableField(text: string): string | undefined {
  for (const pair of text.split("&")) {
    const eq = pair.indexOf("=");
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    if (!percentDecodesToUtf8(rawName)) return rawName;
    if (eq !== -1 && !percentDecodesToUtf8(pair.slice(eq + 1))) {
      const [[name] = [rawName]] = new URLSearchParams(`${rawName}=`);
      return name;
    }
  }
  return undefined;
}

/** Reads a JSON or form body, whichever the Content-Type names (415 for anything else). */
export function safeJsonOrFormBody(request: BodyRequest, options: JsonBodyOptions = {}): BodyResult<unknown> {
  const media = contentType(request);
  if (media?.type === "application" && media.subtype === "x-www-form-urlencoded") return safeFormBody(request, options);
  if (request.body.byteLength > 0 && !isJsonMediaType(media)) {
    return {
      ok: false,
      problem: unsupportedMediaType(request, ["application/json", "application/x-www-form-urlencoded"]),
    };
  }
  return safeJsonBody(request, options);
}

/** Parses a query string into a {@link QueryRecord}-compatible object (repeated names become arrays). */
export function parseQuery(search: string): Record<string, string | string[]> {
  if (search.length === 0) return Object.create(null);
  return parseForm(search.startsWith("?") ? search.slice(1) : search);
}
