import { positiveInteger } from "../../options/number-option";
import { isPrintableId } from "./printable-id";

/**
 * A tenant: the customer (account, workspace) that owns an endpoint. Events published for a tenant reach only that
 * tenant's endpoints (and the operator's created with `allTenants`); endpoints without one (`null`) are the
 * operator's own, and receive only events published without a tenant unless created with `allTenants`. Like ids, a tenant is 1 to 255 printable ASCII characters (PostgreSQL refuses NUL, and logs stay plain).
 */
export type Tenant = string;

/**
 * What `declareEndpointApi`'s `tenant` option returns for a request of the operator (every endpoint, new ones without
 * a tenant). A value of its own rather than `undefined`, so that a look-up that finds nothing (a deleted account whose
 * key still passes, `map.get` of a key spelled otherwise) refuses the request instead of granting the operator's view.
 * `Symbol.for`, so the ESM and CommonJS builds of this package, loaded side by side, agree on it.
 */
export const OPERATOR: unique symbol = Symbol.for("rest-webhooks.operator");

/** Whether `value` can name a tenant. */
export const isTenant = (value: unknown): value is Tenant => isPrintableId(value);

/** `value` when it names a tenant (or is `undefined`, no tenant), else a TypeError naming the option. */
export function checkTenant(owner: string, value: unknown): Tenant | undefined {
  if (value === undefined || isTenant(value)) return value;
  throw new TypeError(
    `${owner}: tenant must be 1 to 255 printable ASCII characters, got ${typeof value === "string" ? JSON.stringify(value) : typeof value}.`,
  );
}

/** The most endpoints one tenant may have by default (Stripe's limit per account); the operator's have none. */
export const MAX_ENDPOINTS_PER_TENANT = 16;

/** A limit of endpoints per tenant: a positive integer, or `Infinity` (and `undefined`) for none; else a TypeError. */
export function maxPerTenant(owner: string, value: unknown, name = "maxPerTenant"): number {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  return positiveInteger(owner, name, value, "endpoints");
}

/** A TypeError for an endpoint of a tenant with `allTenants`: only the operator's endpoints receive every tenant's events. */
export function checkAllTenants(endpoint: { readonly tenant?: string | null; readonly allTenants?: boolean }): void {
  if (endpoint.allTenants === true && endpoint.tenant != null) {
    throw new TypeError(
      "EndpointStore.create: only an endpoint without a tenant (the operator's) may have allTenants.",
    );
  }
}

/**
 * Whether `endpoint` receives the events published for `tenant` (`null`: published without one): a tenant's events
 * reach its own endpoints and the operator's with `allTenants`; the operator's reach the operator's endpoints only.
 */
export function receivesFor(
  endpoint: { readonly tenant?: string | null; readonly allTenants?: boolean },
  tenant: string | null,
): boolean {
  const owner = endpoint.tenant ?? null;
  return owner === tenant || (tenant !== null && owner === null && endpoint.allTenants === true);
}
