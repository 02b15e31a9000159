import { type MediaType, parseMediaType } from "../http/media-type";
import { RoutingError } from "./errors";

const FORM = "application/x-www-form-urlencoded";

// What the body reader parses: JSON (`application/json`, any `+json` type, RFC 6839 §3.1) and, when the spec takes
// forms, a form. A type outside these would be declared, then refused by the reader whatever the declaration said.
const readable = (media: MediaType, form: boolean): boolean =>
  media.type === "application" &&
  (media.subtype === "json" || media.suffix === "json" || (form && `${media.type}/${media.subtype}` === FORM));

/**
 * An operation's `requestMediaTypes`, checked when it is declared: a non-empty list of media types without parameters
 * that the body reader parses (JSON or a `+json` type; `application/x-www-form-urlencoded` with `form: true`), for an
 * operation that reads a body other than an update's merge patch. Else a RoutingError naming the operation.
 */
export function checkRequestMediaTypes(name: string, given: unknown, form: boolean, reads: boolean): void {
  if (given === undefined) return;
  const refuse = (why: string) => {
    throw new RoutingError("invalid_schema", `${name}: requestMediaTypes ${why}.`);
  };
  if (!reads) refuse("needs an operation that reads a request body (an update takes merge patches)");
  if (!Array.isArray(given) || given.length === 0) refuse("must be a non-empty list of media types");
  for (const type of given as unknown[]) {
    const media = typeof type === "string" ? parseMediaType(type) : undefined;
    if (media === undefined || Object.keys(media.parameters).length > 0 || type !== String(type).toLowerCase()) {
      refuse(`must be lower-case media types without parameters, got ${JSON.stringify(type)}`);
    }
    if (!readable(media as MediaType, form)) {
      refuse(`lists ${JSON.stringify(type)}, which the body reader does not parse (JSON, a +json type, or a form)`);
    }
  }
}

/** Whether a request's `Content-Type` is one of `types` (type and subtype, case-insensitive, parameters aside). */
export function takesMediaType(types: readonly string[], contentType: string | undefined): boolean {
  const media = parseMediaType(contentType ?? "");
  return media !== undefined && types.includes(`${media.type}/${media.subtype}`);
}
