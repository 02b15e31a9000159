import { describeMiddleware } from "../../http/described";
import type { HttpRequest } from "../../http/message";
import { HttpProblem } from "../../http/problem";
import { optionalFunction } from "../../options/function-option";
import type { Middleware } from "../../routing/types";
import { checkTenant, OPERATOR, type Tenant } from "./tenant";

/**
 * Names the tenant a request of the endpoint API acts for, or {@link OPERATOR} for the operator's. `undefined` or
 * `null` (no tenant found: typed, so that a look-up's miss is returned as it is, never turned into `OPERATOR` to
 * please the compiler) refuses the request with `403 tenant_unknown`; a value that cannot name a tenant is a
 * TypeError (a 500).
 */
export type TenantOf = (request: HttpRequest) => TenantOfRequest | Promise<TenantOfRequest>;

/** What {@link TenantOf} returns. */
export type TenantOfRequest = Tenant | typeof OPERATOR | null | undefined;

// Fail closed: the function found no tenant for an authenticated caller (its account deleted, its key spelled
// otherwise than the look-up's), which must never read as the operator's view of every endpoint.
const tenantUnknown = () =>
  new HttpProblem({
    status: 403,
    code: "tenant_unknown",
    detail: "The credentials are valid but act for no account: nothing else was checked.",
  });

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
  const decide = async (request: HttpRequest): Promise<string | undefined> => {
    if (tenantOf === undefined) return undefined;
    const tenant: unknown = await tenantOf(request);
    if (tenant === OPERATOR) return undefined;
    if (tenant === undefined || tenant === null) throw tenantUnknown();
    return checkTenant("declareEndpointApi: tenant(request)", tenant);
  };
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
          description:
            "The tenant option refused the request (the HttpProblem it threw, or tenant_unknown when it named no " +
            "tenant): nothing else was checked.",
        },
      },
    }),
    scope: async (request) => (decided.has(request) ? decided.get(request) : await decide(request)),
  };
}
