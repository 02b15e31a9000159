import type { JsonBodyOptions } from "../http/json-limits";
import { acceptedMediaTypes } from "./accepted-media";
import { readsBody, takesOthers } from "./operation";
import type { ParsedTemplate } from "./template";
import type { RouteInfo } from "./types";

const FORM = "application/x-www-form-urlencoded";

/** The body formats an operation reads: an update's merge patch is JSON; a form only with `form` (and declared). */
function bodyFormats(route: RouteInfo): { json: boolean; form: boolean } {
  if (!readsBody(route)) return { json: false, form: false };
  const accepted = acceptedMediaTypes(route);
  return { json: accepted.some((type) => type !== FORM), form: accepted.includes(FORM) };
}

/** A clause of a problem response's description, with the `code`s it is answered with. */
function coded(clause: string, codes: readonly string[]): string {
  return `${clause} (${codes.map((code) => `\`${code}\``).join(", ")})`;
}

/** `a`, `a or b`, `a, b or c`. */
function either(parts: readonly string[]): string {
  return parts.length < 2 ? parts.join("") : `${parts.slice(0, -1).join(", ")} or ${parts.at(-1)}`;
}

/**
 * What the router itself answers 400 and 422 for on this operation (it never reaches the handler then), each clause
 * with its problem codes: the checks of Router.handler, queryOf and the body readers, under the JSON limits the
 * operation runs with (the router's `json`, then its own), so a code an opt-out rules out is not listed.
 */
export function routerProblems(
  route: RouteInfo,
  parsed: ParsedTemplate,
  json: JsonBodyOptions,
): { 400: string; 422: string | undefined } {
  const limits: JsonBodyOptions = { ...json, ...route.spec.json };
  const formats = bodyFormats(route);
  const bad: string[] = [];
  // Router.handler: a `bad_path` match (RFC 3986 §2.1 encoding, U+0000, maxParamLength).
  if (parsed.params.length > 0) {
    bad.push(
      coded("a path parameter is not percent-encoded UTF-8, decodes to NUL or is too long", [
        "malformed_path",
        "param_too_long",
      ]),
    );
  }
  // Every operation checks the query's encoding and refuses a `__proto__` parameter, with or without a query schema.
  const query = ["is not percent-encoded UTF-8", "holds a NUL"];
  const queryCodes = ["malformed_query"];
  if (route.spec.query !== undefined && !takesOthers(route.spec.query)) {
    query.push("has an unknown parameter");
    queryCodes.push("unknown_query_parameter");
  }
  if (route.spec.query !== undefined) {
    query.push("has an invalid value");
    queryCodes.push("validation_failed");
  }
  if (limits.allowPrototypeKeys !== true) {
    query.push("has a parameter named __proto__");
    queryCodes.push("forbidden_member");
  }
  bad.push(coded(`the query ${either(query)}`, queryCodes));
  if (formats.json || formats.form) {
    // An optional body may be left out (see requestBody): then only a malformed one is refused.
    const optional = route.kind !== "update" && route.spec.body?.safeParse(undefined).success === true;
    const faults = [...(optional ? [] : ["empty"]), "malformed", ...(formats.json ? ["nested too deep"] : [])];
    const codes = [
      ...(optional ? [] : ["body_required"]),
      ...(formats.json ? ["malformed_json"] : []),
      ...(formats.form ? ["malformed_form"] : []),
      ...(formats.json ? ["json_too_deep"] : []),
    ];
    bad.push(coded(`the body is ${either(faults)}`, codes));
  }
  const invalid: string[] = [];
  if (route.spec.params !== undefined) invalid.push(coded("a path parameter fails its schema", ["validation_failed"]));
  if (readsBody(route) && route.spec.body !== undefined) {
    const clause = route.kind === "update" ? "the merged result fails the body schema" : "the body fails its schema";
    invalid.push(coded(clause, ["validation_failed"]));
  }
  // RFC 7493 §2.1: the JSON reader refuses lone surrogates, and both readers NUL unless allowed, schema or not; a
  // form's text is UTF-8 with every escape checked, so it holds no lone surrogate.
  const strings = [...(formats.json ? ["a lone surrogate"] : []), ...(limits.allowNul === true ? [] : ["a NUL"])];
  if ((formats.json || formats.form) && strings.length > 0) {
    invalid.push(coded(`a string in the body holds ${either(strings)}`, ["invalid_string"]));
  }
  // Prototype poisoning: a JSON `__proto__` or `constructor.prototype` member, a form field named `__proto__`.
  if (limits.allowPrototypeKeys !== true && (formats.json || formats.form)) {
    const members = formats.json
      ? `the body has a __proto__ member${formats.form ? " or field" : ""} or a constructor member holding a prototype`
      : "the body has a field named __proto__";
    invalid.push(coded(members, ["forbidden_member"]));
  }
  // RFC 7493 §2.3: a JSON object names each member once; a form's repeated field is a list.
  if (limits.allowDuplicateMembers !== true && formats.json) {
    invalid.push(coded("an object in the body names a member twice", ["duplicate_member"]));
  }
  return {
    400: `Bad Request: ${bad.join("; ")}.`,
    422: invalid.length === 0 ? undefined : `Unprocessable Content: ${invalid.join("; ")}.`,
  };
}
