import { RoutingError } from "./errors";
import type { ParsedTemplate } from "./template";
import type { RouteInfo } from "./types";

/** Where one route is documented: its key in `paths`, and the OpenAPI name of each template parameter. */
export interface PlacedRoute {
  readonly path: string;
  readonly names: ReadonlyMap<string, string>;
}

interface PathItem {
  readonly names: readonly string[];
  readonly routes: Map<string, RouteInfo>;
}

/**
 * The `paths` keys of a route table. OpenAPI 3.1 §4.8.8.1: templated paths that differ only in parameter names
 * are identical and must not both exist, so every template of one OpenAPI shape takes the names of the first
 * (positionally). A `{name*}` or `*` wildcard is a plain `{name}` in OpenAPI, so `{path}` and `{path*}` share a
 * shape there though the router tells them apart; two such routes of one method would be one operation, and are
 * refused (`openapi_path_conflict`) rather than one silently replacing the other.
 */
export class OpenApiPaths {
  readonly #items = new Map<string, PathItem>();

  place(route: RouteInfo, parsed: ParsedTemplate): PlacedRoute {
    const shape = openApiShape(parsed);
    let item = this.#items.get(shape);
    if (item === undefined) {
      // A bare "*" gets a real name: OpenAPI parameter names are not "*".
      const names = parsed.params.map((name) => (name === "*" ? uniqueName("wildcard", parsed.params) : name));
      item = { names, routes: new Map() };
      this.#items.set(shape, item);
    }
    const names = new Map<string, string>();
    parsed.params.forEach((name, i) => {
      names.set(name, item.names[i] as string);
    });
    const path = openApiPath(parsed, names);
    const other = item.routes.get(route.method);
    if (other !== undefined) {
      throw new RoutingError(
        "openapi_path_conflict",
        `${label(other)} and ${label(route)} would both be the operation ${route.method} ${path}: OpenAPI 3.1 ` +
          "§4.8.8.1 gives templates that differ only in parameter names one path, and has no wildcard parameter. " +
          "Give one of them another template.",
      );
    }
    item.routes.set(route.method, route);
    return { path, names };
  }
}

function label(route: RouteInfo): string {
  return `${route.method} ${route.template} (${route.name})`;
}

// The template as OpenAPI sees it: names erased, a wildcard one more parameter.
function openApiShape(parsed: ParsedTemplate): string {
  if (parsed.segments.length === 0) return "/";
  return parsed.segments
    .map((segment) =>
      segment.kind === "static"
        ? `/${segment.value}`
        : segment.kind === "composite"
          ? `/${segment.pattern.shape}`
          : "/{}",
    )
    .join("");
}

function uniqueName(base: string, taken: readonly string[]): string {
  let name = base;
  while (taken.includes(name)) name += "_";
  return name;
}

function openApiPath(parsed: ParsedTemplate, names: ReadonlyMap<string, string>): string {
  if (parsed.segments.length === 0) return "/";
  const name = (param: string) => `{${names.get(param) ?? param}}`;
  return parsed.segments
    .map((segment) =>
      segment.kind === "static"
        ? `/${segment.value}`
        : segment.kind === "composite"
          ? `/${segment.pattern.parts.map((part) => (part.name === undefined ? part.literal : name(part.name))).join("")}`
          : `/${name(segment.name)}`,
    )
    .join("");
}
