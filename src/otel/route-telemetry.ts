import { context, trace } from "@opentelemetry/api";
import { routeOf } from "../routing/operation";
import type { Middleware } from "../routing/types";
import { ATTRIBUTES as A } from "./names";
import { isConventionMethod, quietly } from "./telemetry";

/**
 * Router middleware that names the matched route on the active span (your HTTP server instrumentation's span):
 * `http.route` is the route's template (`/users/{user_id}/orders`), and the span is renamed `{method} {route}`, as
 * the HTTP semantic conventions name a server span once the route is known ("HTTP server span name"; an unknown
 * method reads `HTTP`). An instrumentation of node:http alone only knows the path, whose ids give every URL a name
 * of its own; with the route, traces and request metrics group by operation.
 *
 * Mount it with `router.use`: the router runs it for routed requests only (a 404 or 405 has no route). Nothing is
 * recorded outside a span, and a span that throws changes nothing of the answer.
 *
 * @see docs/observability.md
 * @example router.use(tracedRoute());
 */
export function tracedRoute(): Middleware {
  return (next) => (request) => {
    const span = trace.getSpan(context.active());
    const match = span === undefined ? undefined : routeOf(request);
    if (span === undefined || match === undefined) return next(request);
    const template = match.route.template;
    // Semantic conventions: `{method} {target}`, the method only when it is one they know.
    const method = isConventionMethod(request.method) ? request.method : "HTTP";
    quietly(() => {
      span.setAttribute(A.httpRoute, template);
      span.updateName(`${method} ${template}`);
    });
    return next(request);
  };
}
