import { beforeEach, describe, expect, it } from "vitest";
import type { Handler, HttpRequest, HttpResponse } from "../../../src/http/message";
import { isHttpProblem } from "../../../src/http/problem";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { transition } from "../../../src/webhooks/delivery/state-machine";

const KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";
const enc = new TextEncoder();

function req(method: string, path: string, body?: string | object, headers: Record<string, string> = {}): HttpRequest {
  const [p, search = ""] = path.split("?");
  const query = Object.fromEntries(new URLSearchParams(search));
  const isForm = typeof body === "string";
  return {
    method,
    path: p as string,
    search,
    query,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body === undefined
        ? {}
        : { "content-type": isForm ? "application/x-www-form-urlencoded" : "application/json" }),
      ...headers,
    },
    body: body === undefined ? new Uint8Array(0) : enc.encode(isForm ? body : JSON.stringify(body)),
  };
}

/** What an adapter does with a thrown problem: answers it. */
function answered(handler: Handler): Handler {
  return async (request) => {
    try {
      return await handler(request);
    } catch (error) {
      if (isHttpProblem(error)) return error.toResponse();
      throw error;
    }
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON documents.
const parse = (res: HttpResponse) => JSON.parse(String(res.body)) as Record<string, any>;

describe("webhook endpoint API", () => {
  let now: number;
  let endpoints: ReturnType<typeof createMemoryEndpointStore>;
  let queue: ReturnType<typeof createMemoryDeliveryQueue>;
  let handler: Handler;
  beforeEach(() => {
    now = 1_700_000_000_000;
    endpoints = createMemoryEndpointStore();
    queue = createMemoryDeliveryQueue({ endpoints });
    handler = answered(
      declareEndpointApi(createRouter(), {
        endpoints,
        queue,
        apiKeys: [KEY],
        resolve: false,
        now: () => now,
      }).handler(),
    );
  });
  const create = async (url = "https://hooks.example.com/in") =>
    parse(await handler(req("POST", "/v1/webhook_endpoints", { url, enabled_events: ["order.*"] })));

  describe("authentication (RFC 6750)", () => {
    it.each([
      ["no header", {}],
      ["wrong key", { authorization: "Bearer sk_test_wrong" }],
      ["basic scheme", { authorization: "Basic dXNlcjpwYXNz" }],
    ])("%s → 401 with WWW-Authenticate: Bearer", async (_name, headers) => {
      const request = req("GET", "/v1/webhook_endpoints");
      const res = await handler({ ...request, headers: { ...headers } });
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(res.headers["content-type"]).toBe("application/problem+json");
      expect(parse(res).code).toBe("unauthorized");
    });
  });

  describe("POST /v1/webhook_endpoints", () => {
    it("accepts a form with repeated enabled_events[] and answers 201 with the secret, shown once", async () => {
      const form = `url=${encodeURIComponent("https://hooks.example.com/in")}&enabled_events[]=order.created&enabled_events[]=order.updated&description=shop`;
      const res = await handler(req("POST", "/v1/webhook_endpoints", form));
      expect(res.status).toBe(201);
      const body = parse(res);
      expect(body).toMatchObject({
        object: "webhook_endpoint",
        url: "https://hooks.example.com/in",
        enabled_events: ["order.created", "order.updated"],
        status: "enabled",
        description: "shop",
      });
      expect(body.secret).toMatch(/^whsec_/);
      expect(res.headers.location).toBe(`/v1/webhook_endpoints/${body.id}`);
      const fetched = parse(await handler(req("GET", `/v1/webhook_endpoints/${body.id}`)));
      expect(fetched.secret).toBeUndefined();
      expect(fetched.id).toBe(body.id);
    });

    it("accepts JSON with * and a rate limit", async () => {
      const res = await handler(
        req("POST", "/v1/webhook_endpoints", { url: "https://a.example/h", enabled_events: ["*"], rate_limit: 5 }),
      );
      expect(res.status).toBe(201);
      expect(parse(res)).toMatchObject({ enabled_events: ["*"], rate_limit: 5 });
    });

    it.each([
      ["https://127.0.0.1/h", "forbidden_address"],
      ["https://[::1]/h", "forbidden_address"],
      ["https://10.0.0.8/h", "forbidden_address"],
      ["https://169.254.169.254/h", "forbidden_address"],
      ["http://hooks.example.com/h", "insecure_scheme"],
    ])("refuses %s with 422 %s", async (url, code) => {
      const res = await handler(req("POST", "/v1/webhook_endpoints", { url, enabled_events: ["*"] }));
      expect(res.status).toBe(422);
      expect(parse(res).code).toBe(code);
      expect(parse(res).errors[0].pointer).toBe("/url");
    });

    it("422 with field errors for a bad event type or unknown field", async () => {
      const res = await handler(
        req("POST", "/v1/webhook_endpoints", { url: "https://a.example/h", enabled_events: ["Order Created"], x: 1 }),
      );
      expect(res.status).toBe(422);
      const pointers = parse(res).errors.map((e: { pointer: string }) => e.pointer);
      expect(pointers).toContain("/enabled_events/0");
      expect(pointers).toContain("");
    });

    it("415 for another media type, 400 for malformed JSON", async () => {
      const xml = await handler(req("POST", "/v1/webhook_endpoints", undefined, { "content-type": "application/xml" }));
      expect([400, 415]).toContain(xml.status);
      const bad = { ...req("POST", "/v1/webhook_endpoints", {}), body: enc.encode("{") };
      expect((await handler(bad)).status).toBe(400);
    });
  });

  it("lists with paging", async () => {
    const a = await create();
    const b = await create();
    const first = parse(await handler(req("GET", "/v1/webhook_endpoints?limit=1")));
    expect(first).toMatchObject({ object: "list", has_more: true });
    expect(first.data.map((e: { id: string }) => e.id)).toEqual([a.id]);
    const second = parse(await handler(req("GET", `/v1/webhook_endpoints?limit=1&starting_after=${a.id}`)));
    expect(second.data.map((e: { id: string }) => e.id)).toEqual([b.id]);
    expect(second.has_more).toBe(false);
    expect((await handler(req("GET", "/v1/webhook_endpoints?limit=0"))).status).toBe(400);
  });

  it("updates, disables and re-enables; re-enabling resumes the deliveries parked while disabled", async () => {
    const e = await create();
    const updated = parse(await handler(req("POST", `/v1/webhook_endpoints/${e.id}`, "enabled_events[]=order.paid")));
    expect(updated.enabled_events).toEqual(["order.paid"]);
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.paid", data: {} }), { now });
    const disabled = parse(await handler(req("PATCH", `/v1/webhook_endpoints/${e.id}`, { status: "disabled" })));
    expect(disabled).toMatchObject({ status: "disabled", disabled_reason: "manual" });
    // A worker finds the endpoint disabled and parks the delivery.
    const [claim] = await queue.claim({ limit: 1, now, leaseMs: 1_000 });
    await queue.complete(claim!, transition(claim!.state, { type: "endpoint_disabled" }, now).state);
    expect((await queue.get(deliveryIds[0]!))?.state.status).toBe("exhausted");
    const enabled = parse(await handler(req("POST", `/v1/webhook_endpoints/${e.id}`, "status=enabled")));
    expect(enabled).toMatchObject({ status: "enabled", disabled_reason: null });
    expect((await queue.get(deliveryIds[0]!))?.state).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("re-checks the URL on update", async () => {
    const e = await create();
    const res = await handler(req("POST", `/v1/webhook_endpoints/${e.id}`, { url: "https://192.168.1.1/x" }));
    expect(res.status).toBe(422);
  });

  it("rotates the secret: the new one is shown once, the old one keeps signing for the grace period", async () => {
    const e = await create();
    const rotated = parse(await handler(req("POST", `/v1/webhook_endpoints/${e.id}/rotate_secret`)));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(e.secret);
    const stored = await endpoints.get(e.id);
    expect(stored?.secrets.map((s) => s.secret)).toEqual([e.secret, rotated.secret]);
    expect(stored?.secrets[0]?.expiresAt).toBe(now + 86_400_000);
  });

  it("deletes", async () => {
    const e = await create();
    expect(parse(await handler(req("DELETE", `/v1/webhook_endpoints/${e.id}`)))).toMatchObject({ deleted: true });
    expect((await handler(req("GET", `/v1/webhook_endpoints/${e.id}`))).status).toBe(404);
    expect((await handler(req("DELETE", `/v1/webhook_endpoints/${e.id}`))).status).toBe(404);
  });

  it("shows deliveries and the attempt log; retries one delivery; replays failed ones since a time", async () => {
    const e = await create();
    const published = await queue.publish(createEvent({ type: "order.created", data: {} }), { now });
    const id = published.deliveryIds[0]!;
    const [claim] = await queue.claim({ limit: 1, now, leaseMs: 1_000 });
    const result = { kind: "response" as const, status: 500, durationMs: 12, body: "oops" };
    const next = transition(claim!.state, { type: "attempt", result }, now);
    await queue.complete(
      claim!,
      { ...next.state, status: "exhausted", nextAttemptAt: null },
      {
        deliveryId: id,
        endpointId: e.id,
        eventId: claim!.eventId,
        attempt: 1,
        startedAt: now,
        durationMs: 12,
        status: 500,
        errorKind: "http_status",
        response: "oops",
      },
    );
    const deliveries = parse(await handler(req("GET", `/v1/webhook_endpoints/${e.id}/deliveries?status=exhausted`)));
    expect(deliveries.data).toHaveLength(1);
    expect(deliveries.data[0]).toMatchObject({ id, status: "exhausted", last_status: 500 });
    const log = parse(await handler(req("GET", `/v1/webhook_endpoints/${e.id}/attempts`)));
    expect(log.data[0]).toMatchObject({
      delivery_id: id,
      status: 500,
      error_kind: "http_status",
      response: "oops",
      duration_ms: 12,
    });
    const retried = await handler(req("POST", `/v1/webhook_endpoints/${e.id}/deliveries/${id}/retry`));
    expect(retried.status).toBe(202);
    expect(parse(retried)).toMatchObject({ status: "pending", attempts: 0 });
    // Retrying a delivered delivery is refused: it is never sent again.
    const [c2] = await queue.claim({ limit: 1, now, leaseMs: 1_000 });
    await queue.complete(
      c2!,
      transition(c2!.state, { type: "attempt", result: { kind: "response", status: 200, durationMs: 1 } }, now).state,
    );
    expect((await handler(req("POST", `/v1/webhook_endpoints/${e.id}/deliveries/${id}/retry`))).status).toBe(409);
    // Replay picks up failed/exhausted ones created since the time given.
    const more = await queue.publish(createEvent({ type: "order.created", data: {} }), { now: now + 5_000 });
    const [c3] = await queue.claim({ limit: 1, now: now + 5_000, leaseMs: 1_000 });
    await queue.complete(c3!, transition(c3!.state, { type: "endpoint_disabled" }, now + 5_000).state);
    const replay = await handler(
      req("POST", `/v1/webhook_endpoints/${e.id}/replay`, { since: new Date(now + 1_000).toISOString() }),
    );
    expect(parse(replay)).toMatchObject({ replayed: 1 });
    expect((await queue.get(more.deliveryIds[0]!))?.state.status).toBe("pending");
    expect((await handler(req("POST", `/v1/webhook_endpoints/${e.id}/replay`, { since: "soon" }))).status).toBe(422);
  });

  it("404 and 405 problems", async () => {
    expect((await handler(req("GET", "/v1/webhook_endpoints/we_missing"))).status).toBe(404);
    expect((await handler(req("GET", "/v1/webhook_endpoints/we_missing/deliveries"))).status).toBe(404);
    expect((await handler(req("GET", "/v1/other"))).status).toBe(404);
    const put = await handler(req("PUT", "/v1/webhook_endpoints"));
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe("GET, HEAD, POST, OPTIONS");
    const options = await handler(req("OPTIONS", "/v1/webhook_endpoints/we_x"));
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe("GET, HEAD, POST, DELETE, OPTIONS, PATCH");
  });

  describe("hostile input: a 4xx problem, never a 5xx, never a value a store cannot keep", () => {
    it.each(["/v1/webhook_endpoints/we%00x", "/v1/webhook_endpoints/we%20x", "/v1/webhook_endpoints/%E2%82%AC"])(
      "an id no endpoint can have (%s) is 404 without asking the store",
      async (path) => {
        const res = await handler(req("GET", path));
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(res.headers["content-type"]).toBe("application/problem+json");
      },
    );

    it("a delivery id with trailing characters finds nothing", async () => {
      const e = await create();
      const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }), { now });
      const id = deliveryIds[0] as string;
      expect((await handler(req("GET", `/v1/webhook_endpoints/${e.id}/deliveries/${id}`))).status).toBe(200);
      for (const odd of [`${id}x`, `${id}%20`, `${id}0`]) {
        expect((await handler(req("GET", `/v1/webhook_endpoints/${e.id}/deliveries/${odd}`))).status).toBe(404);
        expect((await handler(req("POST", `/v1/webhook_endpoints/${e.id}/deliveries/${odd}/retry`))).status).toBe(404);
      }
      // A NUL is refused at the boundary (400 malformed_path): no store looks it up (issue 16).
      for (const method of ["GET", "POST"]) {
        const tail = method === "POST" ? "/retry" : "";
        const res = await handler(req(method, `/v1/webhook_endpoints/${e.id}/deliveries/${id}%00${tail}`));
        expect(res.status).toBe(400);
        expect(parse(res).code).toBe("malformed_path");
      }
    });

    it.each([
      ["since=99999999999999999999", 400],
      ["since=1e20", 400],
      ["since=-5", 400],
      ["since=soon", 400],
      ["limit=1e3", 400],
      ["limit=101", 400],
      ["status=lost", 400],
      ["filter=x", 400],
    ])("deliveries?%s → %d", async (query, status) => {
      const e = await create();
      const res = await handler(req("GET", `/v1/webhook_endpoints/${e.id}/deliveries?${query}`));
      expect(res.status).toBe(status);
      expect(res.headers["content-type"]).toBe("application/problem+json");
    });

    it.each([{ since: 1e20 }, { since: "99999999999999999999" }, { since: -1 }, { since: 1.5 }])(
      "replay with %j → 422",
      async (body) => {
        const e = await create();
        expect((await handler(req("POST", `/v1/webhook_endpoints/${e.id}/replay`, body))).status).toBe(422);
      },
    );

    it("replay takes since from the query or the body, and needs one", async () => {
      const e = await create();
      expect((await handler(req("POST", `/v1/webhook_endpoints/${e.id}/replay?since=0`))).status).toBe(202);
      expect((await handler(req("POST", `/v1/webhook_endpoints/${e.id}/replay`, "since=0"))).status).toBe(202);
      expect((await handler(req("POST", `/v1/webhook_endpoints/${e.id}/replay`))).status).toBe(422);
    });
  });

  it("answers HEAD as GET (RFC 9110 §9.3.2)", async () => {
    const e = (await create()) as { id: string };
    for (const path of [
      "/v1/webhook_endpoints",
      `/v1/webhook_endpoints/${e.id}`,
      `/v1/webhook_endpoints/${e.id}/deliveries`,
    ]) {
      const get = await handler(req("GET", path));
      const head = await handler(req("HEAD", path));
      expect(head.status).toBe(200);
      expect(head.status).toBe(get.status);
      // RFC 9110 §9.3.2, §8.6: the same fields, and the length GET's content would have had.
      const { "content-length": length, ...rest } = head.headers;
      expect(rest).toStrictEqual(get.headers);
      expect(Number(length)).toBe(new TextEncoder().encode(String(get.body)).byteLength);
    }
  });
});
