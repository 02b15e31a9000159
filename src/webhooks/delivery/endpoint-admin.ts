import { randomBytes } from "node:crypto";
import type { z } from "zod";
import { nonNegativeNumber } from "../../options/number-option";
import { refuseOption } from "../../options/refuse-option";
import { generateSecret as defaultGenerateSecret } from "../signing/standard-keys";
import type { DeliveryErrorKind } from "./attempt";
import { DELIVERY_DEFAULTS } from "./defaults";
import type { DeliveryQueue, DeliveryRecord } from "./delivery-queue";
import { type DisabledReason, rotateSecrets, type WebhookEndpoint } from "./endpoint";
import {
  type CreateEndpointInput,
  createEndpointSchema,
  endpointEventsInput,
  endpointHeadersInput,
  MAX_ENDPOINT_URL_LENGTH,
  MAX_RATE_LIMIT,
  MIN_RATE_LIMIT,
  type UpdateEndpointInput,
} from "./endpoint-schema";
import { ENDPOINT_SECRET_RULE, isEndpointSecret } from "./endpoint-secret";
import type { EndpointPatch, EndpointStore } from "./endpoint-store";
import type { DeliveryStatus } from "./state-machine";
import { PARKED_ERROR_KIND, transition } from "./state-machine";
import { checkTenant, MAX_ENDPOINTS_PER_TENANT, maxPerTenant } from "./tenant";
import { testEvent } from "./test-event";
import {
  type CompiledUrlPolicy,
  checkEndpointUrl,
  checkResolvedEndpointUrl,
  compileUrlPolicy,
  type HostResolver,
  type UrlCheck,
  type UrlPolicy,
  type UrlRefusal,
} from "./url-policy";

/** Options of {@link createEndpointAdmin}. */
export interface EndpointAdminOptions {
  endpoints: EndpointStore;
  queue: DeliveryQueue;
  /** Which URLs may be registered (and reached). @default HTTPS only, public addresses only */
  urlPolicy?: UrlPolicy | CompiledUrlPolicy;
  /**
   * Resolves an endpoint's host name at registration (and on a URL change), so that a name pointing at a forbidden
   * address (loopback, private, link-local…) is refused then with `forbidden_address`, not only at send time (the
   * dispatcher checks every connection either way). Pass `systemResolver` from
   * `rest-webhooks/webhooks/delivery/node` (DNS), your own resolver, or `false` to check IP literals and `localhost`
   * names only. Required, so that the choice is visible.
   */
  resolve: HostResolver | false;
  /**
   * The event catalog (`defineEvents`): `enabled_events` naming a type outside it is refused with
   * `unknown_event_type` (patterns such as `order.*` and `*` are accepted as they are). @default any type
   */
  events?: { has(type: string): boolean; readonly types: readonly string[] };
  /**
   * The most endpoints one tenant may have: a creation past it is refused with `too_many_endpoints` (the API: 409),
   * atomically in the store. Every endpoint a tenant registers multiplies each of its events, so without a limit a
   * tenant could make one event into thousands of requests (to a victim's URL, too). A positive integer, or
   * `Infinity`. The operator's endpoints have no limit. @default 16 (Stripe's)
   */
  maxEndpointsPerTenant?: number;
  /** How long a rotated-out secret keeps signing, in ms. @default 86_400_000 (24 h) */
  secretGraceMs?: number;
  /** @default Date.now */
  now?: () => number;
  /**
   * A new endpoint's id. Never one given before, even to an endpoint since deleted: the queue keeps a deleted
   * endpoint's deliveries and log under its id until they end and expire, and a new endpoint of that id would be
   * sent its pending ones and list them, whoever's tenant it is. With a newId of your own, `create` checks that the
   * queue keeps nothing under the new id (up to two queue reads) and throws a TypeError when it does; the default
   * ids are random and skip that check.
   * @default "we_" + 16 random bytes, base64url
   */
  newId?: () => string;
  /** @default signing's generateSecret() */
  generateSecret?: () => string;
}

/** The outcome of an admin operation that can be refused. */
export type AdminResult<T> =
  | { ok: true; value: T }
  | { ok: false; code: "endpoint_not_found" | "delivery_not_found" | "not_retryable" | "endpoint_disabled" }
  | { ok: false; code: "unknown_event_type"; detail: string; index: number }
  | { ok: false; code: "too_many_endpoints"; detail: string; limit: number }
  | { ok: false; code: "all_tenants_refused"; detail: string }
  | ({ ok: false } & UrlRefusal);

/** What {@link EndpointAdmin.list} reads: a page of endpoints, oldest first. */
export interface EndpointListQuery {
  limit: number;
  /** Id of the last endpoint of the previous page. */
  startingAfter?: string | undefined;
  /** Only this tenant's endpoints; `null`: only those without a tenant. @default every endpoint */
  tenant?: string | null | undefined;
}

/** Options of {@link EndpointAdmin.rotateSecret}. */
export interface RotateSecretOptions {
  /** How long the secrets in use keep signing, ms. @default the admin's `secretGraceMs` (24 h) */
  graceMs?: number;
  /** The new secret: `whsec_` and the base64 of 24 to 64 bytes, else a TypeError. @default a generated one */
  secret?: string;
}

/** The most deliveries one replay call reads and queues again (and its default). */
export const MAX_REPLAY_BATCH = 1000;

/** Options of {@link EndpointAdmin.replay}. */
export interface ReplayOptions {
  /** The most deliveries this call reads and queues again: an integer from 1 to 1000. @default 1000 */
  limit?: number | undefined;
  /** The `next` of the previous call: read on after that delivery (older ones), with the same `status`. */
  startingAfter?: string | undefined;
  /**
   * Which deliveries to queue again (one of {@link REPLAY_STATUSES}): `failed` (waiting for their next attempt),
   * `exhausted` (out of attempts, or parked), `parked` (the exhausted ones parked while the endpoint was disabled:
   * `lastErrorKind` `endpoint_disabled`, those re-enabling retries, whatever their number). Anything else is a
   * TypeError. @default failed and exhausted
   */
  status?: ReplayStatus | undefined;
}

/** What {@link ReplayOptions.status} selects. */
export type ReplayStatus = "failed" | "exhausted" | "parked";

/** Every {@link ReplayStatus}, for schemas. */
export const REPLAY_STATUSES: readonly ReplayStatus[] = ["failed", "exhausted", "parked"];

/** One batch of {@link EndpointAdmin.replay}. */
export interface ReplayBatch {
  /** How many deliveries this call queued again. */
  replayed: number;
  /** Whether deliveries past this batch may still match: call again with `startingAfter: next`. */
  hasMore: boolean;
  /** The last delivery this call read: the `startingAfter` of the next call, when `hasMore`. */
  next?: string | undefined;
}

/** Endpoint management on plain values; the endpoint API (`declareEndpointApi`) is a thin layer over it. */
export interface EndpointAdmin {
  /**
   * Registers an endpoint, owned by `owner.tenant` when given (1 to 255 printable ASCII characters, else a
   * TypeError): it then receives only the events published for that tenant. Without, it is the operator's own, and
   * with `all_tenants` receives every tenant's events too; a tenant's endpoint asking for that is refused
   * (`all_tenants_refused`). `headers` are checked by the API's rules (a name the delivery owns, in any case, or
   * an unsafe value: a TypeError naming `headers/<name>`) and kept with lower-case names; `enabled_events` too (1 to
   * 256 patterns of the grammar, else a TypeError naming `enabled_events/<index>`), kept without repeats; and
   * `description` (text up to 512) and `metadata` (the API's limits, else a TypeError naming `metadata/<key>`).
   */
  create(input: CreateEndpointInput, owner?: { tenant?: string | undefined }): Promise<AdminResult<WebhookEndpoint>>;
  get(id: string): Promise<WebhookEndpoint | undefined>;
  list(query: EndpointListQuery): Promise<WebhookEndpoint[]>;
  /**
   * Updates fields, atomically in the store: a change of status (disabling, re-enabling) is decided on the endpoint
   * as stored when the write lands, never on an earlier read. Re-enabling resumes delivery: the newest
   * {@link MAX_REPLAY_BATCH} deliveries parked while disabled are retried, however many exhausted otherwise are newer
   * (bounded work; `replay` with `status: "parked"` reaches any more).
   * `headers` and `enabled_events` are checked as `create` checks them. A new `url` is checked (and resolved) before
   * the write, and again when a function's result names another one. Re-enabling without a new `url` checks the
   * stored one against the URL policy as it is now (no DNS): refused as `create` refuses it, nothing written.
   * @param input the fields to change, or a function of the endpoint as stored that returns them (a merge patch
   *   applied to it): pure, it may be called more than once; when it throws, nothing is written and `update` rejects
   *   with what it threw.
   * @example await admin.update(id, (current) => ({ metadata: { ...current.metadata, plan: "pro" } }));
   */
  update(
    id: string,
    input: UpdateEndpointInput | ((current: WebhookEndpoint) => UpdateEndpointInput),
  ): Promise<AdminResult<WebhookEndpoint>>;
  /** Disables an endpoint with a reason (`manual`, `gone`, `failing`, `url_refused`). */
  disable(id: string, reason: DisabledReason): Promise<WebhookEndpoint | undefined>;
  /**
   * Deletes an endpoint; `false` when there is no such endpoint.
   * @param options.check refuses the delete by throwing, given the endpoint as stored: checked and deleted
   *   atomically in the store (`EndpointStore.deleteChecked`), so a write landing after the caller's read is never
   *   lost; when it throws, nothing is deleted and `delete` rejects with what it threw. Pure, it may be called more
   *   than once.
   * @example
   * await admin.delete(id, { check: (current) => { if (current.status === "enabled") throw new Error("disable it first"); } });
   */
  delete(id: string, options?: { check?: ((current: WebhookEndpoint) => void) | undefined }): Promise<boolean>;
  /**
   * Adds a new secret, atomically (two rotations at once both keep theirs): `options.secret` (e.g. one another sender
   * gave the consumer), else a generated one. The old ones keep signing for `options.graceMs` (a finite number of 0
   * or more, else a TypeError). At most 10 secrets are kept: the new one and the 9 that expire last.
   */
  rotateSecret(id: string, options?: RotateSecretOptions): Promise<AdminResult<WebhookEndpoint>>;
  /** Retries one delivery now, with a fresh schedule. */
  retry(endpointId: string, deliveryId: string): Promise<AdminResult<DeliveryRecord>>;
  /**
   * Retries the failed or exhausted deliveries of an endpoint created at or after `since` (epoch ms), newest first,
   * one bounded batch per call: at most `options.limit` of them are read and queued again, so a call costs the same
   * with 100,000 failures as with ten. `options.status` narrows them (`parked`: those parked while disabled). `hasMore` says whether more may remain: call again with `startingAfter: next`
   * until it is `false`. Safe to repeat: a delivery queued again is pending, no longer one a replay matches, and one
   * leased by a worker is passed over (the worker decides its fate).
   * @example
   * let page = await admin.replay(id, since);
   * while (page.ok && page.value.hasMore) page = await admin.replay(id, since, { startingAfter: page.value.next });
   */
  replay(endpointId: string, since: number, options?: ReplayOptions): Promise<AdminResult<ReplayBatch>>;
  /**
   * Sends a test event (`webhook_endpoint.test`, data `{ endpoint_id }`, a fresh event id) to one endpoint, whatever
   * its `enabled_events`: one delivery, signed, retried and logged like any other, so that its owner can check the
   * URL, the signature and the handling before real events flow. A disabled endpoint is refused
   * (`endpoint_disabled`): it would get the delivery only once re-enabled.
   */
  sendTest(endpointId: string): Promise<AdminResult<DeliveryRecord>>;
}

// The outcome of an update's fields applied to the endpoint as stored.
type UpdateDecision =
  | { patch: EndpointPatch; reEnabled: boolean }
  | { refused: Extract<AdminResult<never>, { code: "unknown_event_type" }> | ({ ok: false } & UrlRefusal) }
  | { unchecked: string };

const REPLAYABLE: readonly DeliveryStatus[] = ["failed", "exhausted"];

/**
 * Creates the endpoint management service.
 * @example const admin = createEndpointAdmin({ endpoints, queue, resolve: systemResolver });
 */
export function createEndpointAdmin(options: EndpointAdminOptions): EndpointAdmin {
  const { endpoints, queue } = options;
  const policy = compileUrlPolicy(options.urlPolicy);
  const now = options.now ?? Date.now;
  const endpointLimit = maxPerTenant(
    "createEndpointAdmin",
    options.maxEndpointsPerTenant ?? MAX_ENDPOINTS_PER_TENANT,
    "maxEndpointsPerTenant",
  );
  // Only an id of the caller's making can repeat: the reused-id guard in create reads the queue for those alone.
  const customId = options.newId !== undefined;
  const newId = options.newId ?? (() => `we_${randomBytes(16).toString("base64url")}`);
  const newSecret = options.generateSecret ?? (() => defaultGenerateSecret());
  const graceDefault = nonNegativeNumber(
    "createEndpointAdmin",
    "secretGraceMs",
    options.secretGraceMs ?? DELIVERY_DEFAULTS.secretGraceMs,
    "milliseconds",
  );
  if (typeof endpoints?.create !== "function")
    throw new TypeError("createEndpointAdmin: endpoints must be an EndpointStore.");
  // Checked here rather than at the first update: a store written before modify joined the interface.
  if (typeof endpoints.modify !== "function") {
    throw new TypeError(
      "createEndpointAdmin: endpoints must be an EndpointStore with modify(id, next) (atomic read-modify-write).",
    );
  }
  // Likewise deleteChecked: a store written before it fails here, not at the first conditional DELETE (a 500).
  if (typeof endpoints.deleteChecked !== "function") {
    throw new TypeError(
      "createEndpointAdmin: endpoints must be an EndpointStore with deleteChecked(id, check) (atomic conditional delete).",
    );
  }
  if (typeof queue?.publish !== "function") throw new TypeError("createEndpointAdmin: queue must be a DeliveryQueue.");
  const resolve = options.resolve;
  if (resolve !== false && typeof resolve !== "function") {
    throw new TypeError(
      "createEndpointAdmin: resolve must be a HostResolver (systemResolver from rest-webhooks/webhooks/delivery/node) or false.",
    );
  }
  // Whether the queue keeps deliveries or log lines under `id` (a deleted endpoint's).
  const keepsAnything = async (id: string): Promise<boolean> => {
    const [kept] = await queue.list(id, { limit: 1 });
    if (kept !== undefined) return true;
    const [logged] = await queue.attempts({ endpointId: id, limit: 1 });
    return logged !== undefined;
  };
  const checkUrl = async (url: string): Promise<UrlCheck> => {
    let checked = checkEndpointUrl(url, policy);
    if (checked.ok && resolve) checked = await resolvedCheck(url, checked.url.hostname, resolve);
    // Normalizing can make a URL six times longer (ü is %C3%BC): one kept past the limit could not be sent back.
    if (checked.ok && checked.url.href.length > MAX_ENDPOINT_URL_LENGTH) {
      return {
        ok: false,
        code: "invalid_url",
        detail: `The URL is longer than ${MAX_ENDPOINT_URL_LENGTH} characters once normalized (${checked.url.href.length}: non-ASCII characters are percent-encoded).`,
      };
    }
    return checked;
  };

  // What the registrant learns of a host name the provider's resolver looked up: one answer whether the name has no
  // address or resolves to a forbidden one. Told apart, they would say which names exist in the provider's own DNS
  // (split horizon: `db.internal` resolves only inside), a map of its network. What the registrant wrote itself (an
  // IP literal, `localhost`, a denied name) is still named precisely, by checkEndpointUrl before.
  async function resolvedCheck(url: string, host: string, resolver: HostResolver): Promise<UrlCheck> {
    const checked = await checkResolvedEndpointUrl(url, resolver, policy);
    if (checked.ok) return checked;
    return {
      ok: false,
      code: "unresolvable_host",
      host,
      detail: `The host ${host} does not resolve to a public address that may receive webhooks.`,
    };
  }

  // One bounded batch of the matching deliveries, newest first: `limit` read (one more tells whether any remain), so a
  // request's work never grows with the endpoint's backlog. A cursor rather than "the first `limit` still failed": a
  // batch of leased deliveries would otherwise be read again by every call, which would never end. The last error
  // kind is the queue's filter (its index of parked deliveries): picked out of a page of every exhausted one, a page
  // of newer exhausted ones replayed none, and re-enabling missed the parked behind 1000 of them.
  async function retryBatch(
    endpointId: string,
    statuses: readonly DeliveryStatus[],
    since: number,
    batch: { limit: number; startingAfter?: string | undefined },
    only?: DeliveryErrorKind,
  ): Promise<ReplayBatch> {
    const { limit, startingAfter } = batch;
    const page = await queue.list(endpointId, {
      status: statuses,
      since,
      limit: limit + 1,
      startingAfter,
      lastErrorKind: only,
    });
    let replayed = 0;
    for (const delivery of page.slice(0, limit)) {
      // A queue of your own written before `lastErrorKind` ignores it: what it lists of another kind is passed over.
      if (only !== undefined && delivery.state.lastErrorKind !== only) continue;
      const next = transition(delivery.state, { type: "manual_retry" }, now());
      if (await queue.update(delivery.id, statuses, next.state, now())) replayed++;
    }
    const hasMore = page.length > limit;
    return hasMore ? { replayed, hasMore, next: page[limit - 1]?.id } : { replayed, hasMore };
  }

  function replayStatus(given: unknown): ReplayStatus | undefined {
    if (given === undefined || REPLAY_STATUSES.includes(given as ReplayStatus))
      return given as ReplayStatus | undefined;
    return refuseOption("EndpointAdmin.replay", "status", given, `one of ${REPLAY_STATUSES.join(", ")}`);
  }

  function replayLimit(given: unknown): number {
    if (given === undefined) return MAX_REPLAY_BATCH;
    if (typeof given === "number" && Number.isInteger(given) && given >= 1 && given <= MAX_REPLAY_BATCH) return given;
    return refuseOption("EndpointAdmin.replay", "limit", given, `an integer from 1 to ${MAX_REPLAY_BATCH}`);
  }

  // A subscription to a type the catalog does not have would never receive anything: refused, naming the types.
  function checkTypes(
    enabled: readonly string[] | undefined,
  ): { ok: false; code: "unknown_event_type"; detail: string; index: number } | undefined {
    const catalog = options.events;
    if (catalog === undefined || enabled === undefined) return undefined;
    const index = enabled.findIndex((type) => !type.includes("*") && !catalog.has(type));
    if (index === -1) return undefined;
    return {
      ok: false,
      code: "unknown_event_type",
      index,
      detail: `"${enabled[index]}" is not an event this API sends; it sends ${catalog.types.join(", ")} (patterns such as "order.*" are accepted).`,
    };
  }
  // The schemas refuse these; a caller handing the admin unvalidated input would otherwise store a rate the pacer
  // refuses on every admission, holding the endpoint's deliveries for good.
  function checkRate(owner: string, rate: number | null | undefined): void {
    if (rate === undefined || rate === null || (rate >= MIN_RATE_LIMIT && rate <= MAX_RATE_LIMIT)) return;
    throw new TypeError(`${owner}: rate_limit must be from 1/86400 to ${MAX_RATE_LIMIT} per second, got ${rate}.`);
  }

  // The TypeError of a field a schema refused, naming where (`headers/Webhook-Id`) with the API's message.
  function misuse(owner: string, field: string, error: z.ZodError): TypeError {
    const issue = error.issues[0];
    const at = [field, ...(issue?.path ?? []).map(String)].join("/");
    return new TypeError(`${owner}: ${at}: ${issue?.message ?? "invalid"}`);
  }

  // A field as the API's schema reads it, or the TypeError naming where it is refused.
  function checked<T>(owner: string, field: string, schema: z.ZodType<T>, given: unknown): T {
    const parsed = schema.safeParse(given);
    if (parsed.success) return parsed.data;
    throw misuse(owner, field, parsed.error);
  }

  // The API's own check of `headers` (RFC 9110 §5.1 tokens, no field the delivery owns, in any case), and its
  // lower-casing: a caller handing the admin unvalidated input would otherwise store `Webhook-Signature`.
  function checkHeaders(
    owner: string,
    given: Readonly<Record<string, string>> | undefined,
  ): Record<string, string> | undefined {
    return given === undefined ? undefined : checked(owner, "headers", endpointHeadersInput, given);
  }

  // The API's own checks of `description` (text up to 512) and `metadata` (up to 50 text values, keys of 1 to 40 and
  // not reserved): a caller handing the admin unvalidated input would otherwise store what the API would refuse.
  function checkDescription(owner: string, given: unknown): string | undefined {
    return checked(owner, "description", createEndpointSchema.shape.description, given);
  }

  function checkMetadata(owner: string, given: unknown): Record<string, string> | undefined {
    const metadata = checked(owner, "metadata", createEndpointSchema.shape.metadata, given);
    // A copy: the caller's object stays the caller's.
    return metadata === undefined ? undefined : { ...metadata };
  }

  // The API's own check of `enabled_events` (1 to 256 patterns of the grammar), without repeats: a caller handing the
  // admin a string would otherwise store its characters as patterns, and a refused pattern would never match.
  function checkEvents(owner: string, given: unknown): string[] {
    return [...new Set(checked(owner, "enabled_events", endpointEventsInput, given))];
  }

  // What an update does to the endpoint as stored (pure, so the store may call it again): the patch, and whether it
  // re-enables; or why nothing is written, a refusal or a URL not checked yet (`checked`: as given → as stored).
  function decide(
    current: WebhookEndpoint,
    fields: UpdateEndpointInput,
    checked: ReadonlyMap<string, string>,
  ): UpdateDecision {
    checkRate("EndpointAdmin.update", fields.rate_limit);
    const patch: { -readonly [K in keyof EndpointPatch]: EndpointPatch[K] } = {};
    if (fields.url !== undefined) {
      const href = checked.get(fields.url);
      if (href === undefined) return { unchecked: fields.url };
      patch.url = href;
    }
    if (fields.enabled_events !== undefined) {
      const enabledEvents = checkEvents("EndpointAdmin.update", fields.enabled_events);
      // The request's own list: the refusal points at its index there.
      const unknownType = checkTypes(fields.enabled_events);
      if (unknownType !== undefined) return { refused: unknownType };
      patch.enabledEvents = enabledEvents;
    }
    const description = checkDescription("EndpointAdmin.update", fields.description);
    if (description !== undefined) patch.description = description;
    const metadata = checkMetadata("EndpointAdmin.update", fields.metadata);
    if (metadata !== undefined) patch.metadata = metadata;
    const headers = checkHeaders("EndpointAdmin.update", fields.headers);
    if (headers !== undefined) patch.headers = headers;
    if (fields.rate_limit !== undefined) patch.rateLimit = fields.rate_limit;
    const reEnabled = fields.status === "enabled" && current.status === "disabled";
    if (fields.status === "disabled" && current.status === "enabled") {
      Object.assign(patch, { status: "disabled", disabledReason: "manual", disabledAt: now() });
    } else if (reEnabled) {
      // The stored URL against today's policy (the static checks, no DNS: the dispatcher's url_refused causes), so
      // that re-enabling answers the refusal rather than an endpoint disabled again by its first delivery.
      if (patch.url === undefined) {
        const stored = checkEndpointUrl(current.url, policy);
        if (!stored.ok) return { refused: stored };
      }
      Object.assign(patch, { status: "enabled", disabledReason: null, disabledAt: null, failingSince: null });
    }
    return { patch, reEnabled };
  }

  // A secret given by the caller: one the API's schema already checked, or misuse of the admin.
  function checkSecret(owner: string, secret: unknown): void {
    if (secret !== undefined && !isEndpointSecret(secret)) throw new TypeError(`${owner}: ${ENDPOINT_SECRET_RULE}`);
  }

  return {
    async create(input, owner) {
      const tenant = checkTenant("EndpointAdmin.create", owner?.tenant) ?? null;
      checkRate("EndpointAdmin.create", input.rate_limit);
      if (input.all_tenants === true && tenant !== null) {
        return {
          ok: false,
          code: "all_tenants_refused",
          detail: "Only the operator's endpoints may receive every tenant's events.",
        };
      }
      checkSecret("EndpointAdmin.create", input.secret);
      const headers = checkHeaders("EndpointAdmin.create", input.headers) ?? {};
      const description = checkDescription("EndpointAdmin.create", input.description) ?? "";
      const metadata = checkMetadata("EndpointAdmin.create", input.metadata) ?? {};
      const enabledEvents = checkEvents("EndpointAdmin.create", input.enabled_events);
      // The request's own list: the refusal points at its index there.
      const unknownType = checkTypes(input.enabled_events);
      if (unknownType !== undefined) return unknownType;
      const checked = await checkUrl(input.url);
      if (!checked.ok) return checked;
      const id = newId();
      // A deleted endpoint's deliveries and log stay under its id (until they end and expire): a new endpoint of
      // that id, another tenant's too, would be sent its pending deliveries and list them all. The default ids (128
      // random bits) never repeat, so only a newId of your own is checked, with two look-ups; one that repeats is
      // misuse.
      if (customId && (await keepsAnything(id))) {
        throw new TypeError(
          `EndpointAdmin.create: newId gave ${JSON.stringify(id)}, an id the queue keeps deliveries or log lines of (a deleted endpoint's); ids must never repeat.`,
        );
      }
      const endpoint: WebhookEndpoint = {
        id,
        url: checked.url.href,
        enabledEvents,
        secrets: [{ secret: input.secret ?? newSecret(), expiresAt: null }],
        status: "enabled",
        disabledReason: null,
        disabledAt: null,
        description,
        metadata,
        // A copy, lower-cased by the check.
        headers,
        rateLimit: input.rate_limit ?? null,
        failingSince: null,
        createdAt: now(),
        tenant,
        allTenants: input.all_tenants === true,
      };
      // A store of before the limit answers nothing: only `false` is a refusal.
      if ((await endpoints.create(endpoint, { maxPerTenant: endpointLimit })) === false) {
        return {
          ok: false,
          code: "too_many_endpoints",
          limit: endpointLimit,
          detail: `This account has the most webhook endpoints it may have (${endpointLimit}): delete one first.`,
        };
      }
      return { ok: true, value: endpoint };
    },
    get: (id) => endpoints.get(id),
    list: (query) => {
      if (query.tenant !== null) checkTenant("EndpointAdmin.list", query.tenant);
      return endpoints.list(query);
    },
    async update(id, input) {
      const fieldsOf = typeof input === "function" ? input : () => input;
      // Before any read, as create does: a rate the pacer cannot run is misuse, whatever is stored.
      if (typeof input !== "function") {
        checkRate("EndpointAdmin.update", input.rate_limit);
        checkHeaders("EndpointAdmin.update", input.headers);
        checkDescription("EndpointAdmin.update", input.description);
        checkMetadata("EndpointAdmin.update", input.metadata);
        if (input.enabled_events !== undefined) checkEvents("EndpointAdmin.update", input.enabled_events);
      }
      const checked = new Map<string, string>();
      for (;;) {
        const round: { decision?: UpdateDecision } = {};
        const updated = await endpoints.modify(id, (current) => {
          // The last call is the one whose patch was written (or that wrote nothing).
          round.decision = decide(current, fieldsOf(current), checked);
          return "patch" in round.decision ? round.decision.patch : {};
        });
        const { decision } = round;
        if (updated === undefined || decision === undefined) return { ok: false, code: "endpoint_not_found" };
        if ("refused" in decision) return decision.refused;
        if ("unchecked" in decision) {
          // Resolved outside the store's write; the next round writes it if the endpoint still asks for it.
          const result = await checkUrl(decision.unchecked);
          if (!result.ok) return result;
          checked.set(decision.unchecked, result.url.href);
          continue;
        }
        // The newest batch of parked deliveries, however many others were exhausted since; a replay with
        // `status: "parked"` reaches the rest (docs/webhooks-providers.md), so an update's work stays bounded however
        // long the endpoint was off.
        if (decision.reEnabled) await retryBatch(id, ["exhausted"], 0, { limit: MAX_REPLAY_BATCH }, PARKED_ERROR_KIND);
        return { ok: true, value: updated };
      }
    },
    disable: (id, reason) => endpoints.update(id, { status: "disabled", disabledReason: reason, disabledAt: now() }),
    delete: (id, options) =>
      options?.check === undefined ? endpoints.delete(id) : endpoints.deleteChecked(id, options.check),
    async rotateSecret(id, options = {}) {
      // NaN or a negative grace would expire the old secrets at once while the rotation reports success.
      const grace = nonNegativeNumber(
        "EndpointAdmin.rotateSecret",
        "graceMs",
        options.graceMs ?? graceDefault,
        "milliseconds",
      );
      checkSecret("EndpointAdmin.rotateSecret", options.secret);
      const secret = options.secret ?? newSecret();
      const at = now();
      // In the store, atomically: a read here and a write later would lose a concurrent rotation's secret.
      const updated = await endpoints.modify(id, (current) => ({
        secrets: rotateSecrets(current.secrets, secret, at, grace),
      }));
      return updated === undefined ? { ok: false, code: "endpoint_not_found" } : { ok: true, value: updated };
    },
    async retry(endpointId, deliveryId) {
      const delivery = await queue.get(deliveryId);
      if (delivery === undefined || delivery.endpointId !== endpointId)
        return { ok: false, code: "delivery_not_found" };
      if (delivery.state.status === "delivered") return { ok: false, code: "not_retryable" };
      const next = transition(delivery.state, { type: "manual_retry" }, now());
      const from: readonly DeliveryStatus[] = ["pending", "failed", "exhausted"];
      if (!(await queue.update(deliveryId, from, next.state, now()))) return { ok: false, code: "not_retryable" };
      return { ok: true, value: { ...delivery, state: next.state } };
    },
    async replay(endpointId, since, options = {}) {
      const limit = replayLimit(options.limit);
      if ((await endpoints.get(endpointId)) === undefined) return { ok: false, code: "endpoint_not_found" };
      const status = replayStatus(options.status);
      const batch = { limit, startingAfter: options.startingAfter };
      if (status === "parked")
        return { ok: true, value: await retryBatch(endpointId, ["exhausted"], since, batch, PARKED_ERROR_KIND) };
      const statuses = status === undefined ? REPLAYABLE : [status];
      return { ok: true, value: await retryBatch(endpointId, statuses, since, batch) };
    },
    async sendTest(endpointId) {
      const endpoint = await endpoints.get(endpointId);
      if (endpoint === undefined) return { ok: false, code: "endpoint_not_found" };
      if (endpoint.status !== "enabled") return { ok: false, code: "endpoint_disabled" };
      const at = now();
      // To the endpoint alone, and only as its tenant's event: the queue checks again that it is enabled and whose.
      const { deliveryIds } = await queue.publish(testEvent(endpoint.id, at), {
        now: at,
        endpointId: endpoint.id,
        tenant: endpoint.tenant ?? undefined,
      });
      const delivery = deliveryIds[0] === undefined ? undefined : await queue.get(deliveryIds[0]);
      if (delivery !== undefined) return { ok: true, value: delivery };
      // Disabled or deleted since it was read.
      return { ok: false, code: (await endpoints.get(endpointId)) ? "endpoint_disabled" : "endpoint_not_found" };
    },
  };
}
