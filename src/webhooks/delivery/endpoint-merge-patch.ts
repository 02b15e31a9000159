import type { z } from "zod";
import { mergePatch } from "../../routing/merge-patch";
import type { WebhookEndpoint } from "./endpoint";
import { type UpdateEndpointInput, updateEndpointSchema } from "./endpoint-schema";

/** The outcome of {@link mergeEndpointPatch}: the fields that change, or why the merged endpoint is refused. */
export type EndpointMergeResult = { ok: true; input: UpdateEndpointInput } | { ok: false; error: z.ZodError };

// What a member removed by the patch becomes: its empty value, or null for a required one (which the schema refuses,
// pointing at it).
const REMOVED: Readonly<Record<string, unknown>> = {
  url: null,
  enabled_events: null,
  description: "",
  metadata: {},
  headers: {},
  rate_limit: null,
  status: null,
};

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Applies a JSON Merge Patch (RFC 7396 §2) to an endpoint's changeable state as the API shows it (`url`,
 * `enabled_events`, `description`, `metadata`, `headers`, `rate_limit`, `status`) and returns the fields that differ, validated
 * as an update: a patch that leaves `url` alone does not have it checked (and resolved) again. A removed member
 * takes its empty value (`description` "", `metadata` {}, `rate_limit` none); removing `url`, `enabled_events` or
 * `status` is refused.
 * @example mergeEndpointPatch(endpoint, { metadata: { plan: null } }) // { ok: true, input: { metadata: { …the rest } } }
 * @see https://www.rfc-editor.org/rfc/rfc7396#section-2
 */
export function mergeEndpointPatch(endpoint: WebhookEndpoint, patch: unknown): EndpointMergeResult {
  const current: Record<string, unknown> = {
    url: endpoint.url,
    enabled_events: [...endpoint.enabledEvents],
    description: endpoint.description,
    metadata: endpoint.metadata,
    headers: endpoint.headers,
    rate_limit: endpoint.rateLimit,
    status: endpoint.status,
  };
  const merged = mergePatch(current, patch);
  let changed: unknown = merged;
  if (merged !== null && typeof merged === "object" && !Array.isArray(merged)) {
    const fields = merged as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, now] of Object.entries(current)) {
      const value = Object.hasOwn(fields, key) ? fields[key] : REMOVED[key];
      if (!same(value, now)) out[key] = value;
    }
    // A member the state does not have stays, for the strict schema to refuse by name.
    for (const key of Object.keys(fields)) if (!Object.hasOwn(current, key)) out[key] = fields[key];
    changed = out;
  }
  const parsed = updateEndpointSchema.safeParse(changed);
  return parsed.success ? { ok: true, input: parsed.data } : { ok: false, error: parsed.error };
}
