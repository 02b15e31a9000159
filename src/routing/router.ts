import { isToken } from "../http/media-type";
import type { Handler, HttpRequest, HttpResponse, ResponseHeaders } from "../http/message";
import { isHttpProblem, problem } from "../http/problem";
import { mountPointOf } from "../http/received-target";
import { utf8Length } from "../http/utf8-length";
import { acceptedMediaTypes } from "./accepted-media";
import { RoutingError } from "./errors";
import type { MatchResult } from "./match-result";
import { allowList, compileMatcher, type Matcher } from "./matcher";
import { type OpenApiDocument, type OpenApiExtra, type OpenApiInfo, openApiDocument } from "./openapi";
import { attachMatch, checkSpec, operationHandler, type UntypedHandler } from "./operation";
import { type Declaration, ResourceBuilder } from "./resource";
import { type ParsedTemplate, parseTemplate } from "./template";
import type { BodyContext, Middleware, OperationSpec, Reply, RouteInfo, RouterOptions } from "./types";
import { buildPath } from "./url";

interface Built {
  readonly matcher: Matcher<RouteInfo>;
  readonly runs: Map<RouteInfo, Handler>;
  readonly allowAll: string;
}

function label(declaration: Pick<RouteInfo, "method" | "template" | "name">): string {
  return `${declaration.method} ${declaration.template} (${declaration.name})`;
}

// RFC 9110 §9.3.2: the same status and header fields as GET, no content. A spread, so the GET's after-send callback
// (a symbol-keyed own property, rest-webhooks/http withAfterSend) goes with the HEAD that answers in its place.
function headOf(response: HttpResponse): HttpResponse {
  if (response.body == null) return response;
  const headers = { ...response.headers };
  if (headers["content-length"] === undefined) {
    const length = typeof response.body === "string" ? utf8Length(response.body) : response.body.byteLength;
    headers["content-length"] = String(length);
  }
  return { ...response, headers, body: null };
}

// RFC 5789 §3.1: Accept-Patch SHOULD be in the OPTIONS answer of a resource that takes PATCH; W3C LDP §4.2.3.14
// asks the same of Accept-Post for one that takes POST. Each lists what the operation's 415 would name.
function optionsHeaders(matcher: Matcher<RouteInfo>, path: string, allow: readonly string[]): ResponseHeaders {
  const headers: Record<string, string> = { allow: allow.join(", ") };
  for (const [method, field] of [
    ["POST", "accept-post"],
    ["PATCH", "accept-patch"],
  ] as const) {
    let found = allow.includes(method) ? matcher.match(method, path) : undefined;
    // OPTIONS on a path the other methods are redirected from names what they take at the redirect's target.
    if (found?.kind === "redirect") found = matcher.match(method, found.location);
    const accepted = found?.kind === "found" ? acceptedMediaTypes(found.route) : [];
    if (accepted.length > 0) headers[field] = accepted.join(", ");
  }
  return headers;
}

/**
 * A router built from declared resources: matches, validates, enforces the method rules,
 * and describes itself as OpenAPI 3.1.
 * @example
 * const router = createRouter().resource("/users/{user_id}", (users) => {
 *   users.read({ response: User }, ({ params }) => json(200, db.get(params.user_id)));
 * });
 * createServer(router.handler()).listen(3000);
 */
export class Router {
  readonly options: Readonly<RouterOptions>;
  readonly #declarations: Declaration[] = [];
  readonly #parsed = new Map<string, ParsedTemplate>();
  readonly #infos = new Map<string, RouteInfo>();
  readonly #use: Middleware[] = [];
  #built: Built | undefined;

  constructor(options: RouterOptions = {}) {
    this.options = { ...options };
  }

  #declare = (declaration: Declaration): void => {
    if (!isToken(declaration.method)) {
      throw new RoutingError("invalid_method", `"${declaration.method}" is not an HTTP method token (RFC 9110 §9.1).`);
    }
    const parsed = parseTemplate(declaration.template);
    const existing = this.#infos.get(declaration.name);
    if (existing !== undefined) {
      throw new RoutingError(
        "duplicate_name",
        `Route name "${declaration.name}" is used by ${label(existing)} and ${label(declaration)}.`,
      );
    }
    checkSpec(declaration, parsed.params, declaration.spec);
    const info: RouteInfo = Object.freeze({
      name: declaration.name,
      method: declaration.method,
      template: declaration.template,
      kind: declaration.kind,
      resource: declaration.resource,
      spec: declaration.spec,
    });
    this.#declarations.push(declaration);
    this.#parsed.set(declaration.name, parsed);
    this.#infos.set(declaration.name, info);
    this.#built = undefined;
  };

  /**
   * Adds middleware around every route's operation (outermost first). The router's own answers (404, 405, the
   * automatic OPTIONS, the 308, a malformed path's 400) bypass it: wrap `handler()` for what must see every request.
   */
  use(...middleware: Middleware[]): this {
    this.#use.push(...middleware);
    this.#built = undefined;
    return this;
  }

  /**
   * Declares a resource by its item template; the collection is the template without its last segment.
   * @example router.resource("/users/{user_id}", (users) => { users.list({}, list); users.read({}, read); })
   */
  resource<T extends string>(template: T, build: (resource: ResourceBuilder<T>) => void): this {
    build(new ResourceBuilder(template, undefined, this.#declare));
    return this;
  }

  /**
   * Declares one route outside any resource (the router routes it and applies no method rule).
   * @param spec its schemas; `name` defaults to `"<METHOD> <template>"`.
   */
  route<T extends string, S extends OperationSpec>(
    method: string,
    template: T,
    spec: S & { name?: string },
    handler: (context: BodyContext<T, S>) => Reply,
  ): this {
    this.#declare({
      method,
      template,
      kind: "custom",
      name: spec.name ?? `${method} ${template}`,
      resource: undefined,
      spec,
      handler: handler as unknown as UntypedHandler,
      collection: undefined,
      layers: [],
    });
    return this;
  }

  /** Every declared route, in declaration order. */
  routes(): RouteInfo[] {
    return [...this.#infos.values()];
  }

  /**
   * The path of a named route with its parameters filled in and percent-encoded.
   * @throws RoutingError `unknown_route` for an unknown name or a missing parameter.
   * @example router.url("users.orders.read", { user_id: "u 1", order_id: 7 }) // "/users/u%201/orders/7"
   */
  url = (name: string, params?: Readonly<Record<string, string | number>>): string => {
    const parsed = this.#parsed.get(name);
    if (parsed === undefined) throw new RoutingError("unknown_route", `url(): no route is named "${name}".`);
    return buildPath(name, parsed, params);
  };

  /**
   * Compiles the routes now, so declaration errors (`duplicate_route`, `ambiguous_route`) surface here.
   * Declaring more routes afterwards is allowed and recompiles on next use.
   */
  build(): this {
    this.#build();
    return this;
  }

  #build(): Built {
    if (this.#built !== undefined) return this.#built;
    const routes = this.#declarations.map((declaration) => {
      const info = this.#infos.get(declaration.name) as RouteInfo;
      return { method: info.method, template: info.template, route: info, label: label(info) };
    });
    const matcher = compileMatcher(routes, this.options);
    const runs = new Map<RouteInfo, Handler>();
    for (const declaration of this.#declarations) {
      const info = this.#infos.get(declaration.name) as RouteInfo;
      const core = operationHandler({
        info,
        kind: declaration.kind,
        spec: declaration.spec,
        handler: declaration.handler,
        collection: declaration.collection,
        url: this.url,
        validateResponses: this.options.validateResponses ?? false,
        json: this.options.json,
        accepted: acceptedMediaTypes(info),
      });
      const layers = [this.#use, ...declaration.layers, declaration.spec.use ?? []].flat();
      runs.set(
        info,
        layers.reduceRight<Handler>((next, middleware) => middleware(next), core),
      );
    }
    const allowAll = allowList(this.#declarations.map((declaration) => declaration.method)).join(", ");
    this.#built = { matcher, runs, allowAll };
    return this.#built;
  }

  /** The compiled matcher: `match(method, path)` without running anything. */
  matcher(): Matcher<RouteInfo> {
    return this.#build().matcher;
  }

  /** Matches a method and a percent-encoded path (see {@link MatchResult}). */
  match(method: string, path: string): MatchResult<RouteInfo> {
    return this.#build().matcher.match(method, path);
  }

  /** The router as one {@link Handler}, for `adapt` from `rest-webhooks/node` or `rest-webhooks/fetch`. */
  handler(): Handler {
    const { matcher, runs, allowAll } = this.#build();
    return (request) => {
      const result = matcher.match(request.method, request.path);
      switch (result.kind) {
        case "found": {
          attachMatch(request, result);
          const run = runs.get(result.route) as Handler;
          // Declared for another method: HEAD answered by GET, without content (RFC 9110 §9.3.2).
          if (result.route.method !== request.method) return head(run, request);
          return run(request);
        }
        case "method_not_allowed": {
          const allow = result.allow.join(", ");
          // RFC 9110 §9.3.7: OPTIONS answers the allowed methods unless declared.
          if (request.method === "OPTIONS") {
            return { status: 204, headers: optionsHeaders(matcher, request.path, result.allow), body: null };
          }
          // RFC 9110 §15.5.6: a 405 must list the allowed methods.
          return problem({
            status: 405,
            code: "method_not_allowed",
            // The detail does not name the method, so a HEAD gets the same headers as a GET (RFC 9110 §9.3.2).
            detail: `The method is not allowed here; allowed: ${allow}.`,
            headers: { allow },
          });
        }
        case "redirect": {
          // RFC 9110 §15.4.9: 308 keeps the method and body.
          // Inside a framework's mount, the redirect stays inside it.
          const target = `${mountPointOf(request)}${result.location}`;
          const location = request.search === "" ? target : `${target}?${request.search}`;
          return { status: 308, headers: { location }, body: null };
        }
        case "bad_path":
          return problem({
            status: 400,
            code: result.code,
            detail:
              result.code === "malformed_path"
                ? `Path parameter "${result.param}" is not percent-encoded UTF-8 (RFC 3986 §2.1), or decodes to U+0000.`
                : `Path parameter "${result.param}" is longer than ${this.options.maxParamLength ?? 100} characters.`,
            extensions: { param: result.param },
          });
        default:
          // RFC 9110 §9.3.7: "OPTIONS *" asks about the server as a whole.
          if (request.method === "OPTIONS" && request.path === "*") {
            return { status: 204, headers: { allow: allowAll }, body: null };
          }
          return problem({ status: 404, code: "not_found", detail: `Nothing at ${request.path}.` });
      }
    };
  }

  /** The OpenAPI 3.1 document describing every route, built from the zod schemas. */
  openapi(info: OpenApiInfo, extra: OpenApiExtra = {}): OpenApiDocument {
    const layers = new Map(
      this.#declarations.map((d) => [d.name, [this.#use, ...d.layers, d.spec.use ?? []].flat()] as const),
    );
    return openApiDocument(
      this.routes().map((route) => ({
        route,
        parsed: this.#parsed.get(route.name) as ParsedTemplate,
        middleware: layers.get(route.name) ?? [],
        json: this.options.json,
      })),
      info,
      extra,
      this.options.maxParamLength ?? 100,
    );
  }
}

async function head(run: Handler, request: HttpRequest): Promise<HttpResponse> {
  try {
    return headOf(await run(request));
  } catch (error) {
    if (isHttpProblem(error)) return headOf(error.toResponse());
    throw error;
  }
}

/** Creates an empty {@link Router}. */
export function createRouter(options: RouterOptions = {}): Router {
  return new Router(options);
}
