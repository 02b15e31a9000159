import type { CompositePart } from "./composite";
import { RoutingError } from "./errors";
import type { ParsedTemplate } from "./template";

/**
 * Builds a path from a parsed template: parameters are percent-encoded (RFC 3986 §3.3), a wildcard
 * keeps its "/" separators. What the router matches back is the value given: a value that would be a
 * dot segment is encoded (see dotless), and in a composite segment a value never holds the literal
 * that ends it (see compositeValue).
 */
export function buildPath(
  name: string,
  parsed: ParsedTemplate,
  params: Readonly<Record<string, string | number>> = {},
): string {
  if (parsed.segments.length === 0) return "/";
  let path = "";
  for (const segment of parsed.segments) {
    if (segment.kind === "static") path += `/${segment.value}`;
    else if (segment.kind === "param")
      path += `/${dotless(encodeURIComponent(paramValue(name, params, segment.name)))}`;
    else if (segment.kind === "wildcard") {
      const value = paramValue(name, params, segment.name, true);
      path += `/${value
        .split("/")
        .map((part) => dotless(encodeURIComponent(part)))
        .join("/")}`;
    } else {
      const parts = segment.pattern.parts;
      let built = "";
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i] as CompositePart;
        built +=
          part.name === undefined
            ? part.literal
            : compositeValue(encodeURIComponent(paramValue(name, params, part.name)), parts, i);
      }
      // A leading or trailing "." literal and a "." value: encode the value's dots instead (the literal is compared
      // as sent).
      if (built === "..") {
        built = parts
          .map((part) =>
            part.name === undefined
              ? part.literal
              : encodeURIComponent(paramValue(name, params, part.name)).replace(/\./g, "%2E"),
          )
          .join("");
      }
      path += `/${built}`;
    }
  }
  return path;
}

/**
 * A percent-encoded path segment that a client will not remove: "." and ".." as `%2E` and `%2E%2E`.
 * RFC 3986 §5.2.4: a "." or ".." segment is removed by the client resolving the reference (fetch, browsers, curl),
 * so the request would reach another path. Percent-encoded, it is a segment like any other to such clients and
 * decodes back to the value here. (The WHATWG URL parser also treats "%2E" and "%2E%2E" as dot segments: a value
 * "." or ".." cannot reach a server through it in any spelling; refuse such ids in the params schema.)
 * @param encoded one segment, already percent-encoded (`encodeURIComponent`).
 * @example dotless(encodeURIComponent("..")) // "%2E%2E"
 */
export function dotless(encoded: string): string {
  return encoded === "." ? "%2E" : encoded === ".." ? "%2E%2E" : encoded;
}

// A composite parameter ends at the first occurrence of the literal after it (unless that literal ends the
// segment: then the value may hold it): every character of the value that could start that literal is
// percent-encoded, both cases of a letter (a case-insensitive table folds them), so the match ends where it should.
// A literal that starts with a "%" triplet is left to chance: the value's own triplets cannot be spelt otherwise.
function compositeValue(encoded: string, parts: readonly CompositePart[], index: number): string {
  const next = parts[index + 1];
  if (next === undefined || index + 2 === parts.length) return encoded;
  const first = (next.literal as string)[0] as string;
  if (first === "%") return encoded;
  let out = "";
  for (const character of encoded) {
    out += character.toLowerCase() === first.toLowerCase() ? percentEncoded(character) : character;
  }
  return out;
}

// "%" + the character's code in hex: only ever a pchar here (an encodeURIComponent result), so one ASCII byte.
function percentEncoded(character: string): string {
  return `%${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(2, "0")}`;
}

function paramValue(
  route: string,
  params: Readonly<Record<string, string | number>>,
  name: string,
  mayBeEmpty = false,
): string {
  const value = Object.hasOwn(params, name) ? params[name] : undefined;
  if (value === undefined || (!mayBeEmpty && String(value) === "")) {
    throw new RoutingError("unknown_route", `url("${route}"): parameter "${name}" is missing.`);
  }
  return String(value);
}
