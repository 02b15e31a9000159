import { describe, expect, it } from "vitest";
import type { HttpRequest, HttpResponse } from "../../../src/http/message";
import { createRouter } from "../../../src/routing/index";
import type { AttemptResult } from "../../../src/webhooks/delivery/attempt";
import { createEndpointAdmin } from "../../../src/webhooks/delivery/endpoint-admin";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { transition } from "../../../src/webhooks/delivery/state-machine";
import { answered } from "./delivery-stores";

// Regression: registration answers `unresolvable_host` alike for a name with no address and one resolving to a
// forbidden address, but the delivery log then told them apart (`dns` vs `ssrf_blocked`, "resolves to an address that
// is private" vs "ENOTFOUND", and the look-up's time), so any registrant could map the provider's internal DNS.

const T0 = 1_700_000_000_000;
const KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";

function get(path: string): HttpRequest {
  const [p, search = ""] = path.split("?");
  return {
    method: "GET",
    path: p as string,
    search,
    query: Object.fromEntries(new URLSearchParams(search)),
    headers: { authorization: `Bearer ${KEY}` },
    body: new Uint8Array(0),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON documents.
const parse = (res: HttpResponse) => JSON.parse(String(res.body)) as Record<string, any>;

// What the dispatcher logs for each (node/dispatcher.ts): the provider's queue keeps the precise reason.
const internalName: AttemptResult = {
  kind: "error",
  errorKind: "ssrf_blocked",
  message: "The host db.internal resolves to an address that is private; it may not receive webhooks.",
  durationMs: 2,
};
const noSuchName: AttemptResult = {
  kind: "error",
  errorKind: "dns",
  message: "getaddrinfo ENOTFOUND nope.internal",
  durationMs: 37,
};

async function setup() {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints, now: () => T0 });
  const options = { endpoints, queue, resolve: false as const, now: () => T0, apiKeys: [KEY] };
  const admin = createEndpointAdmin(options);
  const created = await admin.create({ url: "https://hooks.example.com/in", enabled_events: ["*"] });
  if (!created.ok) throw new Error(created.code);
  const id = created.value.id;
  const results = [internalName, noSuchName];
  for (const [i] of results.entries()) {
    await queue.publish(createEvent({ id: `evt_${i}`, type: "order.created", data: { i } }), { now: T0 + i });
  }
  const claims = await queue.claim({ limit: 2, now: T0 + 1, leaseMs: 60_000 });
  for (const claim of claims) {
    const result = claim.eventId === "evt_0" ? internalName : noSuchName;
    const next = transition(claim.state, { type: "attempt", result }, T0);
    const message = result.kind === "error" ? (result.message ?? null) : null;
    await queue.complete(claim, next.state, {
      deliveryId: claim.id,
      endpointId: id,
      eventId: claim.eventId,
      attempt: 1,
      startedAt: T0,
      durationMs: result.durationMs,
      status: null,
      errorKind: next.state.lastErrorKind,
      response: message,
    });
  }
  const router = createRouter();
  declareEndpointApi(router, options);
  return { id, queue, handler: answered(router.handler()) };
}

// What tells two lines apart beyond their own ids.
const shown = ({ id: _, delivery_id: __, event_id: ___, ...rest }: Record<string, unknown>) => rest;
// next_attempt_at: the same schedule for both kinds, with its random jitter.
const shownDelivery = ({
  id: _,
  event_id: __,
  created_at: ___,
  next_attempt_at: ____,
  ...rest
}: Record<string, unknown>) => rest;

describe("the endpoint API does not tell a name without address from one resolving to a forbidden address", () => {
  it("the delivery log shows both as one dns line: the same error_kind, text and duration", async () => {
    const { id, handler } = await setup();
    const log = parse(await handler(get(`/v1/webhook_endpoints/${id}/attempts`)));
    expect(log.data).toHaveLength(2);
    const [a, b] = log.data as Record<string, unknown>[];
    expect(shown(a as Record<string, unknown>)).toEqual(shown(b as Record<string, unknown>));
    expect(a).toMatchObject({ error_kind: "dns", status: null, duration_ms: 0 });
    expect(String(a?.["response"])).not.toMatch(/private|ENOTFOUND|internal/);
  });

  it("the deliveries show the same last_error_kind", async () => {
    const { id, handler } = await setup();
    const list = parse(await handler(get(`/v1/webhook_endpoints/${id}/deliveries`)));
    const [a, b] = list.data as Record<string, unknown>[];
    expect(shownDelivery(a as Record<string, unknown>)).toEqual(shownDelivery(b as Record<string, unknown>));
    expect(a?.["last_error_kind"]).toBe("dns");
    const one = parse(await handler(get(`/v1/webhook_endpoints/${id}/deliveries/${a?.["id"]}`)));
    expect(one["last_error_kind"]).toBe("dns");
  });

  it("the provider's queue keeps the precise reason", async () => {
    const { id, queue } = await setup();
    const kinds = (await queue.attempts({ endpointId: id })).map((line) => line.errorKind).sort();
    expect(kinds).toEqual(["dns", "ssrf_blocked"]);
  });
});

describe("a URL the policy refuses by itself (url_refused) names only what the registrant wrote", () => {
  it("is shown as url_refused with its text; the endpoint as disabled url_refused", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints, now: () => T0 });
    const options = { endpoints, queue, resolve: false as const, now: () => T0, apiKeys: [KEY] };
    const admin = createEndpointAdmin(options);
    const created = await admin.create({ url: "https://hooks.example.com:8443/in", enabled_events: ["*"] });
    if (!created.ok) throw new Error(created.code);
    const id = created.value.id;
    await queue.publish(createEvent({ type: "order.created", data: {} }), { now: T0 });
    const [claim] = await queue.claim({ limit: 1, now: T0, leaseMs: 60_000 });
    const message = "Webhooks are not sent to port 8443; the URL's port must be one of 443.";
    const result: AttemptResult = { kind: "error", errorKind: "url_refused", message, durationMs: 0 };
    const next = transition(claim!.state, { type: "attempt", result }, T0);
    await queue.complete(claim!, next.state, {
      deliveryId: claim!.id,
      endpointId: id,
      eventId: claim!.eventId,
      attempt: 1,
      startedAt: T0,
      durationMs: 0,
      status: null,
      errorKind: "url_refused",
      response: message,
    });
    await admin.disable(id, "url_refused");
    const router = createRouter();
    declareEndpointApi(router, options);
    const handler = answered(router.handler());
    const log = parse(await handler(get(`/v1/webhook_endpoints/${id}/attempts`)));
    expect(log.data).toMatchObject([{ error_kind: "url_refused", response: message }]);
    const endpoint = parse(await handler(get(`/v1/webhook_endpoints/${id}`)));
    expect(endpoint).toMatchObject({ status: "disabled", disabled_reason: "url_refused" });
    const list = parse(await handler(get(`/v1/webhook_endpoints/${id}/deliveries`)));
    expect(list.data).toMatchObject([{ status: "exhausted", last_error_kind: "endpoint_disabled" }]);
  });
});
