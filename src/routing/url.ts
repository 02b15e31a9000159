import { RoutingError } from "./errors";
import type { ParsedTemplate } from "./template";

/**
 * Builds a path from a parsed template: parameters are percent-encoded (RFC 3986 §3.3), a wildcard
 * keeps its "/" separators.
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
    else if (segment.kind === "param") path += `/${encodeURIComponent(paramValue(name, params, segment.name))}`;
    else if (segment.kind === "wildcard") {
      path += `/${paramValue(name, params, segment.name, true).split("/").map(encodeURIComponent).join("/")}`;
    } else {
      path += "/";
      for (const part of segment.pattern.parts) {
        path += part.name === undefined ? part.literal : encodeURIComponent(paramValue(name, params, part.name));
      }
    }
  }
  return path;
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
