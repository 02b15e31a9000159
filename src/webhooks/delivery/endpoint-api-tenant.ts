import { describeMiddleware } from "../../http/described";
import type { HttpRequest } from "../../http/message";
import { optionalFunction } from "../../options/function-option";
import type { Middleware } from "../../routing/types";
import { checkTenant } from "./tenant";

/** Names the tenant a request of the endpoint API acts for; `undefined`: the operator. */
export type TenantOf = (request: HttpRequest) => string | undefined | Promise<string | undefined>;

/**
 * The endpoint API's tenant of each request, decided once: `scoped` runs right after the key check, before the
 * body's validation and any idempotency key, so a caller `tenantOf` refuses (a thrown 403) learns nothing else, not
 * even whether an endpoint exists; `scope` reads what it decided (and decides again for a request object a `use`
 * middleware replaced). A value that cannot name a tenant is a TypeError.
 */
export function tenantScope(tenantOf: TenantOf | undefined): {
  scoped: Middleware | undefined;
  scope: (request: HttpRequest) => Promise<string | undefined>;
} {
  // Checked here, not at the first request: a value that is no function (a fixed tenant's name) would fail them all.
  optionalFunction("declareEndpointApi", "tenant", tenantOf, "a function of the request naming its tenant");
  const decide = async (request: HttpRequest): Promise<string | undefined> =>
    tenantOf === undefined ? undefined : checkTenant("declareEndpointApi: tenant(request)", await tenantOf(request));
  if (tenantOf === undefined) return { scoped: undefined, scope: decide };
  const decided = new WeakMap<HttpRequest, string | undefined>();
  const scoped: Middleware = (next) => async (request) => {
    decided.set(request, await decide(request));
    return next(request);
  };
  return {
    // OpenAPI lists the refusal on every operation, as it lists the key check's 401.
    scoped: describeMiddleware(scoped, {
      responses: {
        403: {
          description: "The tenant option refused the request (the HttpProblem it threw): nothing else was checked.",
        },
      },
    }),
    scope: async (request) => (decided.has(request) ? decided.get(request) : await decide(request)),
  };
}
