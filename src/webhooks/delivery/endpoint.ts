import { DELIVERY_DEFAULTS } from "./defaults";

/** One signing secret of an endpoint; a rotated-out secret keeps signing until `expiresAt`. */
export interface EndpointSecret {
  /** `whsec_…` (Standard Webhooks). */
  readonly secret: string;
  /** Epoch ms after which it no longer signs; `null` for the current secret. */
  readonly expiresAt: number | null;
}

/** Every {@link DisabledReason}: the one list the endpoint API's schema and the PostgreSQL rows read with. Internal. */
export const DISABLED_REASONS = ["manual", "gone", "failing", "url_refused"] as const;

/**
 * Why an endpoint was disabled: by its owner, by a 410 Gone, after failing for too long, or because the URL policy
 * now refuses its URL itself (changed since registration: `url_refused`).
 */
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** A registered webhook endpoint. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  /** Event types it receives; `*` for all, `order.*` for every action of a resource. */
  readonly enabledEvents: readonly string[];
  /** Newest last; every unexpired secret signs each attempt. */
  readonly secrets: readonly EndpointSecret[];
  readonly status: "enabled" | "disabled";
  readonly disabledReason: DisabledReason | null;
  /** Epoch ms. */
  readonly disabledAt: number | null;
  readonly description: string;
  readonly metadata: Readonly<Record<string, string>>;
  /** Header fields added to every request to it (names in lower case): a gateway's key, routing hints. Not signed. */
  readonly headers: Readonly<Record<string, string>>;
  /** Deliveries per second this endpoint accepts; `null` for no limit. */
  readonly rateLimit: number | null;
  /** Epoch ms of the first failure since the last success. */
  readonly failingSince: number | null;
  /** Epoch ms. */
  readonly createdAt: number;
  /**
   * The tenant (customer, account) that owns it: it receives only the events published for that tenant
   * (`publish(event, { tenant })`). `null`: the operator's own, receiving only events published without a tenant.
   * Set at creation and never changed.
   */
  readonly tenant: string | null;
  /**
   * An operator's endpoint (no tenant) that receives every tenant's events besides the operator's own, as Stripe's
   * Connect endpoints do: an audit trail, a data warehouse. Only the operator's endpoints may; set at creation and
   * never changed.
   */
  readonly allTenants: boolean;
}

/**
 * The most secrets an endpoint keeps, and signs with: Standard Webhooks verifiers (ours included,
 * `MAX_SIGNATURES_PER_VERSION` in signing/standard-webhooks.ts) refuse a header with more than 10 signatures of one
 * version, so an 11th secret would make every delivery fail verification.
 */
export const MAX_ENDPOINT_SECRETS = 10;

/** The secrets that sign an attempt at `now`: the current one and any still in its grace period (at most 10). */
export function activeSecrets(endpoint: Pick<WebhookEndpoint, "secrets">, now: number): string[] {
  const out: string[] = [];
  for (const entry of endpoint.secrets) if (entry.expiresAt === null || entry.expiresAt > now) out.push(entry.secret);
  if (out.length <= MAX_ENDPOINT_SECRETS) return out;
  // An endpoint stored before rotation kept at most 10 may hold more: its deliveries must still verify.
  const active = endpoint.secrets.filter((entry) => entry.expiresAt === null || entry.expiresAt > now);
  return expiringLast(active, MAX_ENDPOINT_SECRETS).map((entry) => entry.secret);
}

/**
 * The secret list after a rotation: the new secret becomes current; the previous ones keep signing for `graceMs`
 * (0 = drop them now); already-expired ones are dropped, and so are the ones that expire soonest past
 * {@link MAX_ENDPOINT_SECRETS} in all (the new one and the 9 that expire last stay). A secret still in the list that is
 * given again becomes the current one, listed once.
 */
export function rotateSecrets(
  secrets: readonly EndpointSecret[],
  secret: string,
  now: number,
  graceMs: number = DELIVERY_DEFAULTS.secretGraceMs,
): EndpointSecret[] {
  const kept: EndpointSecret[] = [];
  for (const entry of secrets) {
    if (entry.secret === secret) continue;
    const expiresAt = Math.min(entry.expiresAt ?? Number.POSITIVE_INFINITY, now + graceMs);
    if (expiresAt > now) kept.push({ secret: entry.secret, expiresAt });
  }
  const out = expiringLast(kept, MAX_ENDPOINT_SECRETS - 1);
  out.push({ secret, expiresAt: null });
  return out;
}

// The `max` entries that expire last (`null`, never, is last of all; a tie keeps the newer), in their order.
function expiringLast(entries: readonly EndpointSecret[], max: number): EndpointSecret[] {
  if (entries.length <= max) return entries.slice();
  const end = (entry: EndpointSecret) => entry.expiresAt ?? Number.POSITIVE_INFINITY;
  const keep = entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => end(b.entry) - end(a.entry) || b.index - a.index)
    .slice(0, max)
    .map((kept) => kept.index)
    .sort((a, b) => a - b);
  return keep.map((index) => entries[index] as EndpointSecret);
}
