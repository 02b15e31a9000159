import { DELIVERY_DEFAULTS } from "./defaults";

/** One signing secret of an endpoint; a rotated-out secret keeps signing until `expiresAt`. */
export interface EndpointSecret {
  /** `whsec_…` (Standard Webhooks). */
  readonly secret: string;
  /** Epoch ms after which it no longer signs; `null` for the current secret. */
  readonly expiresAt: number | null;
}

/** Why an endpoint was disabled: by its owner, by a 410 Gone, or after failing for too long. */
export type DisabledReason = "manual" | "gone" | "failing";

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
  /** Deliveries per second this endpoint accepts; `null` for no limit. */
  readonly rateLimit: number | null;
  /** Epoch ms of the first failure since the last success. */
  readonly failingSince: number | null;
  /** Epoch ms. */
  readonly createdAt: number;
}

/** The secrets that sign an attempt at `now`: the current one and any still in its grace period. */
export function activeSecrets(endpoint: Pick<WebhookEndpoint, "secrets">, now: number): string[] {
  const out: string[] = [];
  for (const entry of endpoint.secrets) if (entry.expiresAt === null || entry.expiresAt > now) out.push(entry.secret);
  return out;
}

/**
 * The secret list after a rotation: the new secret becomes current; the previous ones keep signing for `graceMs`
 * (0 = drop them now); already-expired ones are dropped.
 */
export function rotateSecrets(
  secrets: readonly EndpointSecret[],
  secret: string,
  now: number,
  graceMs: number = DELIVERY_DEFAULTS.secretGraceMs,
): EndpointSecret[] {
  const kept: EndpointSecret[] = [];
  for (const entry of secrets) {
    const expiresAt = Math.min(entry.expiresAt ?? Number.POSITIVE_INFINITY, now + graceMs);
    if (expiresAt > now) kept.push({ secret: entry.secret, expiresAt });
  }
  kept.push({ secret, expiresAt: null });
  return kept;
}
