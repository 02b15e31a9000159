import { describe, expect, it, vi } from "vitest";
import { type Handler, HttpProblem, type HttpResponse, json, text } from "../../src/http";
import {
  IdempotencyError,
  type IdempotencyOptions,
  type IdempotencyStore,
  idempotency,
  MemoryIdempotencyStore,
  scopedKey,
} from "../../src/idempotency";
import { legacyRequestFingerprint } from "../../src/idempotency/fingerprint";
import { bodyText, deferred, fakeClock, problemCode, request } from "./support";

const enc = (text: string) => new TextEncoder().encode(text);

function setup(
  options: Partial<IdempotencyOptions> = {},
  respond?: (n: number) => HttpResponse | Promise<HttpResponse>,
) {
  const clock = fakeClock();
  const store = new MemoryIdempotencyStore({ now: clock.now });
  let runs = 0;
  const handler: Handler = async () => {
    runs++;
    return respond ? respond(runs) : json(201, { order: runs }, { location: `/orders/${runs}`, "set-cookie": "s=1" });
  };
  const protect = idempotency({ store, identify: (req) => req.headers["x-account"] ?? "anonymous", ...options });
  return { clock, store, handle: protect(handler), runs: () => runs };
}

describe("idempotency middleware", () => {
  describe("first request and replay", () => {
    it("runs the handler once and replays the stored response byte for byte", async () => {
      const { handle, runs } = setup();
      const first = await handle(request({ key: '"k-1"' }));
      expect(first.status).toBe(201);
      expect(first.headers["idempotent-replayed"]).toBeUndefined();
      const second = await handle(request({ key: '"k-1"' }));
      expect(runs()).toBe(1);
      expect(second.status).toBe(201);
      expect(second.headers["idempotent-replayed"]).toBe("true");
      expect(second.headers["content-type"]).toBe("application/json");
      expect(second.headers.location).toBe("/orders/1");
      expect(bodyText(second.body)).toBe(bodyText(first.body));
    });

    it("accepts the bare form by default and treats it as the same key as the quoted form", async () => {
      const { handle, runs } = setup();
      await handle(request({ key: "k-1" }));
      const again = await handle(request({ key: '"k-1"' }));
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(runs()).toBe(1);
    });

    it("does not replay set-cookie or other unselected fields; replayHeaders chooses", async () => {
      const { handle } = setup();
      await handle(request({ key: '"k"' }));
      expect((await handle(request({ key: '"k"' }))).headers["set-cookie"]).toBeUndefined();
      const custom = setup({ replayHeaders: ["Set-Cookie"] });
      await custom.handle(request({ key: '"k"' }));
      const replay = await custom.handle(request({ key: '"k"' }));
      expect(replay.headers["set-cookie"]).toBe("s=1");
      expect(replay.headers["content-type"]).toBeUndefined();
    });

    // Regression: a replayed 405 had no Allow, a 401 no WWW-Authenticate (RFC 9110 MUSTs), and the router's 415 lost
    // the Accept-Post and Accept-Patch that say what to send instead.
    it.each<[number, Record<string, string>]>([
      [401, { "www-authenticate": 'Bearer realm="api"' }],
      [405, { allow: "GET, HEAD" }],
      [407, { "proxy-authenticate": 'Basic realm="proxy"' }],
      [415, { "accept-post": "application/json", "accept-patch": "application/merge-patch+json" }],
      [415, { "accept-encoding": "identity" }],
      [416, { "content-range": "bytes */100" }],
      [200, { "content-disposition": 'attachment; filename="invoice.pdf"' }],
    ])("replays a %i with the header fields its status calls for: %j", async (status, fields) => {
      // 401 and 407 are released by default; an API that chooses to store them replays them whole.
      const { handle, runs } = setup({ storeOutcome: () => true }, () => ({
        status,
        headers: { ...fields, date: "x", "x-trace": "1" },
        body: "",
      }));
      await handle(request({ key: '"k"' }));
      const replay = await handle(request({ key: '"k"' }));
      expect(runs()).toBe(1);
      expect(replay.headers).toEqual({ ...fields, "idempotent-replayed": "true" });
    });

    // Regression: the stored body was a view of the handler's Buffer, so reusing it changed the replay.
    it("replays the first body even when the handler reuses its Node Buffer", async () => {
      const scratch = Buffer.from("order-1 created");
      const { handle } = setup({}, () => ({ status: 201, headers: {}, body: scratch }));
      await handle(request({ key: '"k"' }));
      scratch.write("XXXXXXXXXXXXXXX");
      expect(bodyText((await handle(request({ key: '"k"' }))).body)).toBe("order-1 created");
    });

    // Regression: every replay from the memory store sent its one stored buffer, so a middleware or an adapter that
    // wrote into a replayed body changed what every later replay sent.
    it("replays the first body even when something writes into an earlier replay's body", async () => {
      const { handle } = setup();
      const first = bodyText((await handle(request({ key: '"k"' }))).body);
      const replay = await handle(request({ key: '"k"' }));
      expect(replay.body).toBeInstanceOf(Uint8Array);
      (replay.body as Uint8Array).fill(0x58);
      expect(bodyText((await handle(request({ key: '"k"' }))).body)).toBe(first);
    });

    it("replays an empty body as no body", async () => {
      const { handle } = setup({}, () => ({ status: 204, headers: {}, body: null }));
      await handle(request({ key: '"k"' }));
      const replay = await handle(request({ key: '"k"' }));
      expect(replay.status).toBe(204);
      expect(replay.body).toBeNull();
    });

    it("forgets the response after the TTL: the handler runs again", async () => {
      const { handle, clock, runs } = setup({ ttlMs: 60_000 });
      await handle(request({ key: '"k"' }));
      clock.advance(60_001);
      expect((await handle(request({ key: '"k"' }))).headers["idempotent-replayed"]).toBeUndefined();
      expect(runs()).toBe(2);
    });
  });

  describe("conflicts", () => {
    it("answers 409 with Retry-After while the first request runs, then replays", async () => {
      const gate = deferred();
      const { handle, runs } = setup({ leaseMs: 2500 }, async () => {
        await gate.promise;
        return json(201, { ok: true });
      });
      const first = handle(request({ key: '"k"' }));
      await vi.waitFor(() => expect(runs()).toBe(1));
      const busy = await handle(request({ key: '"k"' }));
      expect(busy.status).toBe(409);
      expect(busy.headers["content-type"]).toBe("application/problem+json");
      expect(busy.headers["retry-after"]).toBe("3");
      expect(problemCode(busy.body)).toBe("idempotency_key_in_use");
      gate.resolve();
      await first;
      expect((await handle(request({ key: '"k"' }))).headers["idempotent-replayed"]).toBe("true");
    });

    it.each([
      ["body", { body: '{"sku":"b"}' }],
      ["path", { path: "/payments" }],
      ["query", { search: "dry_run=1" }],
      ["method", { method: "PATCH" }],
    ])("answers 422 when the key is reused with another %s", async (_, change) => {
      const { handle, runs } = setup();
      await handle(request({ key: '"k"' }));
      const reused = await handle(request({ key: '"k"', ...change }));
      expect(reused.status).toBe(422);
      expect(problemCode(reused.body)).toBe("idempotency_key_reused");
      expect(runs()).toBe(1);
    });

    // RFC 9110 §10.2.3: Retry-After is delay-seconds (1*DIGIT). A store of the user's answering a lease left that is
    // no finite number, or one of 1e21 ms or more, once sent `Retry-After: NaN`, `Infinity` or `1e+21`.
    it.each([
      [Number.NaN, "3"],
      [Number.POSITIVE_INFINITY, "3"],
      [1e24, "2147483647"],
      [-5, "1"],
    ])("answers a 409 with delay-seconds when the store says the lease left is %s", async (left, seconds) => {
      const store: IdempotencyStore = {
        begin: (_key, fingerprint) => ({ kind: "in-progress", fingerprint, retryAfterMs: left }),
        complete: () => true,
        release: () => true,
      };
      const handle = idempotency({ store, identify: () => "a", leaseMs: 2500 })(() => json(201, {}));
      const busy = await handle(request({ key: '"k"' }));
      expect(busy.status).toBe(409);
      expect(busy.headers["retry-after"]).toBe(seconds);
    });

    it("answers 422, not 409, for another request while the first is still running", async () => {
      const gate = deferred();
      const { handle, runs } = setup({}, async () => {
        await gate.promise;
        return json(201, {});
      });
      const first = handle(request({ key: '"k"' }));
      await vi.waitFor(() => expect(runs()).toBe(1));
      expect((await handle(request({ key: '"k"', body: "{}" }))).status).toBe(422);
      gate.resolve();
      await first;
    });

    it("scopes keys per caller: another caller's identical key runs separately", async () => {
      const { handle, runs } = setup();
      await handle(request({ key: '"k"', caller: "acct_1" }));
      const other = await handle(request({ key: '"k"', caller: "acct_2" }));
      expect(other.headers["idempotent-replayed"]).toBeUndefined();
      expect(runs()).toBe(2);
    });

    // Regression: identities are hashed as UTF-8, which wrote U+FFFD for a lone surrogate, so a caller whose identity
    // (a token's claim, say) held one was replayed the response of the caller with U+FFFD in its place.
    it("never replays to a caller whose identity differs from the first's only by a lone surrogate", async () => {
      const { handle, runs } = setup();
      await handle(request({ key: '"k"', caller: "acct_\uFFFD" }));
      const other = await handle(request({ key: '"k"', caller: "acct_\uD800" }));
      expect(other.headers["idempotent-replayed"]).toBeUndefined();
      expect(runs()).toBe(2);
    });
  });

  describe("what the fingerprint covers", () => {
    // Regression: a JSON body sent without Content-Type got a 415 that was stored under the key; the client fixed the
    // header and retried with the same key and bytes, and was replayed the 415 for 24 h instead of told (422) that
    // the key belonged to another request. RFC 9110 §8.3: the media type is part of what the body means.
    it("answers 422 to a retry that adds the missing Content-Type after a stored 415", async () => {
      let runs = 0;
      const handle = idempotency({ store: new MemoryIdempotencyStore(), identify: () => "acct_1" })((req) => {
        runs++;
        return req.headers["content-type"] === "application/json"
          ? json(201, { id: "ord_1" })
          : json(415, { code: "unsupported_media_type" });
      });
      const unlabelled = await handle(request({ key: '"k"', headers: { "content-type": undefined } }));
      expect(unlabelled.status).toBe(415);
      const fixed = await handle(request({ key: '"k"' }));
      expect(fixed.status).toBe(422);
      expect(problemCode(fixed.body)).toBe("idempotency_key_reused");
      // The first request, sent again unchanged, still gets its own stored answer.
      const again = await handle(request({ key: '"k"', headers: { "content-type": undefined } }));
      expect(again.status).toBe(415);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(runs).toBe(1);
    });

    it.each([
      ["another Content-Type", { "content-type": "text/plain" }],
      ["Content-Type parameters added", { "content-type": "application/json; charset=utf-8" }],
      ["Content-Type left out", { "content-type": undefined }],
      ["an empty Content-Type", { "content-type": "" }],
      ["a Content-Encoding", { "content-encoding": "gzip" }],
    ])("answers 422 when the key is reused with %s", async (_, headers) => {
      const { handle, runs } = setup();
      await handle(request({ key: '"k"' }));
      const reused = await handle(request({ key: '"k"', headers }));
      expect(reused.status).toBe(422);
      expect(problemCode(reused.body)).toBe("idempotency_key_reused");
      expect(runs()).toBe(1);
    });

    it("tells a request without Content-Type from one with an empty Content-Type", async () => {
      const { handle, runs } = setup();
      await handle(request({ key: '"k"', headers: { "content-type": undefined } }));
      expect((await handle(request({ key: '"k"', headers: { "content-type": "" } }))).status).toBe(422);
      expect(runs()).toBe(1);
    });

    it("replays a retry with the same Content-Type and Content-Encoding; other fields do not count", async () => {
      const { handle, runs } = setup();
      const labelled = { "content-type": "application/json", "content-encoding": "gzip" };
      await handle(request({ key: '"k"', headers: { ...labelled, "user-agent": "sdk/1" } }));
      const retry = await handle(request({ key: '"k"', headers: { ...labelled, "user-agent": "sdk/1 (retry 2)" } }));
      expect(retry.headers["idempotent-replayed"]).toBe("true");
      expect(runs()).toBe(1);
    });
  });

  // 0.1 stored fingerprints of method, target, caller and body only (43 characters, no "v2." prefix). A retry that
  // finds such a record after the upgrade is compared with its own fingerprint in that form.
  describe("records written by 0.1 (the legacy fingerprint)", () => {
    const body = '{"sku":"a"}';
    const legacy = (text = body) =>
      legacyRequestFingerprint({ method: "POST", target: "/orders", caller: "anonymous", body: enc(text) });
    const stored = { status: 201, headers: { "content-type": "application/json" }, body: enc('{"order":0}') };

    function withLegacyRecord(complete: boolean) {
      const s = setup();
      const key = scopedKey("anonymous", "k");
      const found = s.store.begin(key, legacy(), 60_000);
      if (found.kind !== "acquired") throw new Error(found.kind);
      if (complete) s.store.complete(key, found.leaseToken, stored, 86_400_000);
      return s;
    }

    it("replays a completed record to the same request", async () => {
      const { handle, runs } = withLegacyRecord(true);
      const replay = await handle(request({ key: '"k"', body }));
      expect(replay.status).toBe(201);
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(bodyText(replay.body)).toBe('{"order":0}');
      expect(runs()).toBe(0);
    });

    it("replays it whatever the Content-Type, as 0.1 did: its fingerprint never covered the field", async () => {
      const { handle, runs } = withLegacyRecord(true);
      const replay = await handle(request({ key: '"k"', body, headers: { "content-type": "text/plain" } }));
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(runs()).toBe(0);
    });

    it("answers 422 to another request, and 409 to the same one while the record is in progress", async () => {
      const completed = withLegacyRecord(true);
      expect((await completed.handle(request({ key: '"k"', body: '{"sku":"b"}' }))).status).toBe(422);
      const leased = withLegacyRecord(false);
      expect((await leased.handle(request({ key: '"k"', body }))).status).toBe(409);
      expect((await leased.handle(request({ key: '"k"', body: '{"sku":"b"}' }))).status).toBe(422);
      expect(completed.runs() + leased.runs()).toBe(0);
    });

    it("files the handler's answer under the current fingerprint once the record has expired", async () => {
      const { handle, runs, store, clock } = withLegacyRecord(true);
      clock.advance(86_400_000);
      expect((await handle(request({ key: '"k"', body }))).headers["idempotent-replayed"]).toBeUndefined();
      expect(runs()).toBe(1);
      const found = store.begin(scopedKey("anonymous", "k"), "probe", 60_000);
      expect(found.kind === "completed" && found.fingerprint.startsWith("v2.")).toBe(true);
    });
  });

  describe("the key field", () => {
    it.each([['""'], ['"a", "b"'], ["two words"], [`"${"x".repeat(256)}"`]])("answers 400 for %j", async (key) => {
      const { handle, runs } = setup();
      const res = await handle(request({ key }));
      expect(res.status).toBe(400);
      expect(problemCode(res.body)).toBe("idempotency_key_invalid");
      expect(runs()).toBe(0);
    });

    // Regression: the bare form was cut with String.prototype.trim, so "\u00a0k-1" (a 0xA0 byte read as latin1 by
    // node:http) or "\vk-1" (a Fetch Headers value) named the key "k-1" and was replayed its response.
    it.each([["\u00a0k-1"], ["k-1\u00a0"], ["\u000bk-1"], ["\ufeffk-1"]])(
      "answers 400 for %j, never replaying the key inside the spaces",
      async (key) => {
        const { handle, runs } = setup();
        expect((await handle(request({ key: '"k-1"' }))).status).toBe(201);
        const res = await handle(request({ key }));
        expect(res.status).toBe(400);
        expect(problemCode(res.body)).toBe("idempotency_key_invalid");
        expect(runs()).toBe(1);
      },
    );

    it("answers 400 for the bare form in strict mode", async () => {
      const { handle } = setup({ strict: true });
      expect(problemCode((await handle(request({ key: "k-1" }))).body)).toBe("idempotency_key_invalid");
      expect((await handle(request({ key: '"k-1"' }))).status).toBe(201);
    });

    it("lets a request without a key through unless the key is required", async () => {
      const optional = setup();
      await optional.handle(request({}));
      await optional.handle(request({}));
      expect(optional.runs()).toBe(2);
      const required = setup({ required: true });
      const res = await required.handle(request({}));
      expect(res.status).toBe(400);
      expect(problemCode(res.body)).toBe("idempotency_key_missing");
      expect(required.runs()).toBe(0);
    });

    it("takes a per-route requirement", async () => {
      const { handle, runs } = setup({ required: (req) => req.path.startsWith("/payments") });
      expect((await handle(request({ path: "/payments" }))).status).toBe(400);
      expect((await handle(request({ path: "/orders" }))).status).toBe(201);
      expect(runs()).toBe(1);
    });

    // Regression: a Promise is truthy, so an async `required` required the key on every request, whatever it resolved.
    it("takes a requirement decided asynchronously (a function returning a Promise of a boolean)", async () => {
      const { handle, runs } = setup({ required: async (req) => req.path.startsWith("/payments") });
      expect(problemCode((await handle(request({ path: "/payments" }))).body)).toBe("idempotency_key_missing");
      expect((await handle(request({ path: "/orders" }))).status).toBe(201);
      expect(runs()).toBe(1);
    });

    it("refuses a required function's answer that is no boolean, naming the option", async () => {
      const { handle, runs } = setup({ required: (() => "yes") as never });
      // Thrown synchronously (no promise on that path): the adapter answers 500 either way.
      expect(() => handle(request({}))).toThrow(/options\.required/);
      const later = setup({ required: (async () => 1) as never });
      await expect(later.handle(request({}))).rejects.toThrow(/options\.required/);
      expect(runs() + later.runs()).toBe(0);
    });

    it("keeps the synchronous path free of promises: a handler's answer is passed on as it came", () => {
      const answer = json(201, {});
      const handle = idempotency({ store: new MemoryIdempotencyStore(), identify: () => "a", required: () => false })(
        () => answer,
      );
      expect(handle(request({}))).toBe(answer);
    });

    it("leaves methods it does not protect alone, key or not", async () => {
      const { handle, runs } = setup({ required: true });
      await handle(request({ method: "GET", key: '"k"' }));
      await handle(request({ method: "GET", key: '"k"' }));
      await handle(request({ method: "PUT" }));
      expect(runs()).toBe(3);
      const put = setup({ methods: ["put"] });
      await put.handle(request({ method: "PUT", key: '"k"' }));
      expect((await put.handle(request({ method: "PUT", key: '"k"' }))).headers["idempotent-replayed"]).toBe("true");
    });

    // RFC 9110 §9.2.2, from the method table: what is not idempotent is protected by default.
    it.each([
      ["POST", true],
      ["PATCH", true],
      ["PURGE", true],
      ["GET", false],
      ["HEAD", false],
      ["PUT", false],
      ["DELETE", false],
      ["OPTIONS", false],
    ])("protects %s by default: %s", async (method, protectedByDefault) => {
      const { handle, runs } = setup();
      await handle(request({ method, key: '"k"' }));
      const again = await handle(request({ method, key: '"k"' }));
      expect(again.headers["idempotent-replayed"] === "true").toBe(protectedByDefault);
      expect(runs()).toBe(protectedByDefault ? 1 : 2);
    });

    it("takes a predicate for the methods it protects", async () => {
      const { handle, runs } = setup({ methods: (method) => method === "DELETE" });
      await handle(request({ method: "DELETE", key: '"k"' }));
      await handle(request({ method: "DELETE", key: '"k"' }));
      await handle(request({ method: "POST", key: '"k"' }));
      await handle(request({ method: "POST", key: '"k"' }));
      expect(runs()).toBe(3);
    });
  });

  describe("which outcomes are kept", () => {
    it("stores 2xx and 4xx by default and replays them", async () => {
      for (const status of [200, 201, 400, 404, 409, 422]) {
        const { handle, runs } = setup({}, () => text(status, `s${status}`));
        await handle(request({ key: '"k"' }));
        const again = await handle(request({ key: '"k"' }));
        expect([again.status, again.headers["idempotent-replayed"], runs()]).toEqual([status, "true", 1]);
      }
    });

    it("releases the key on 5xx, 408, 425 and 429: a retry runs the handler", async () => {
      for (const status of [500, 503, 408, 425, 429]) {
        const { handle, runs } = setup({}, () => text(status, "try again"));
        await handle(request({ key: '"k"' }));
        const again = await handle(request({ key: '"k"' }));
        expect([again.status, again.headers["idempotent-replayed"], runs()]).toEqual([status, undefined, 2]);
      }
    });

    // Regression: a 401 was stored, so a retry with a refreshed token (same caller) replayed the stale 401 for 24 h.
    it("releases the key on 401, 403 and 407: credentials and permissions change, and nothing was done", async () => {
      for (const status of [401, 403, 407]) {
        const { handle, runs } = setup({}, () => text(status, "not you"));
        await handle(request({ key: '"k"' }));
        const again = await handle(request({ key: '"k"' }));
        expect([again.status, again.headers["idempotent-replayed"], runs()]).toEqual([status, undefined, 2]);
      }
    });

    // Regression: the fingerprint leaves the preconditions out, so a retry with the fresh ETag in If-Match got the
    // stored 412 of the stale one.
    it("releases the key on 412: a retry with updated preconditions runs the handler", async () => {
      let runs = 0;
      const protect = idempotency({ store: new MemoryIdempotencyStore(), identify: () => "acct" });
      const handle = protect(async (req) => {
        runs++;
        return req.headers["if-match"] === '"2"' ? text(200, "patched") : text(412, "stale");
      });
      const stale = await handle(request({ key: '"k"', headers: { "if-match": '"1"' } }));
      const fresh = await handle(request({ key: '"k"', headers: { "if-match": '"2"' } }));
      expect([stale.status, fresh.status, fresh.headers["idempotent-replayed"], runs]).toEqual([
        412,
        200,
        undefined,
        2,
      ]);
    });

    it("releases the key when the handler throws, and rethrows", async () => {
      const { handle, runs } = setup({}, (n) => {
        if (n === 1) throw new Error("boom");
        return json(201, { n });
      });
      await expect(handle(request({ key: '"k"' }))).rejects.toThrow("boom");
      expect((await handle(request({ key: '"k"' }))).status).toBe(201);
      expect(runs()).toBe(2);
    });

    it("judges a thrown HttpProblem by its status: a 422 is stored and replayed", async () => {
      const { handle, runs } = setup({}, () => {
        throw new HttpProblem({ status: 422, code: "validation_failed" });
      });
      const first = await handle(request({ key: '"k"' }));
      const again = await handle(request({ key: '"k"' }));
      expect([first.status, again.status, again.headers["idempotent-replayed"], runs()]).toEqual([422, 422, "true", 1]);
      expect(bodyText(again.body)).toBe(bodyText(first.body));
    });

    it("follows a custom storeOutcome", async () => {
      const { handle, runs } = setup({ storeOutcome: (s) => s < 300 || s >= 500 }, (n) =>
        n === 1 ? text(500, "x") : text(201, "y"),
      );
      await handle(request({ key: '"k"' }));
      expect((await handle(request({ key: '"k"' }))).status).toBe(500);
      const { handle: h2, runs: runs2 } = setup({ storeOutcome: (s) => s < 300 }, () => text(400, "bad"));
      await h2(request({ key: '"k"' }));
      await h2(request({ key: '"k"' }));
      expect([runs(), runs2()]).toEqual([1, 2]);
    });
  });

  describe("leases", () => {
    it("lets a retry take over an expired lease and fences the late first attempt", async () => {
      const gates = [deferred(), deferred()];
      const onStoreError = vi.fn();
      const { handle, clock, runs } = setup({ leaseMs: 1000, onStoreError }, async (n) => {
        await gates[n - 1]?.promise;
        return json(201, { attempt: n });
      });
      const first = handle(request({ key: '"k"' }));
      await vi.waitFor(() => expect(runs()).toBe(1));
      clock.advance(1001);
      const second = handle(request({ key: '"k"' }));
      await vi.waitFor(() => expect(runs()).toBe(2));
      gates[0]?.resolve();
      expect(bodyText((await first).body)).toBe('{"attempt":1}');
      // The late first attempt is fenced, and reported: its lease ran out while its handler ran.
      expect(onStoreError.mock.calls.map(([error]) => (error as { code?: unknown }).code)).toEqual([
        "idempotency_lease_lost",
      ]);
      gates[1]?.resolve();
      await second;
      const replay = await handle(request({ key: '"k"' }));
      expect(bodyText(replay.body)).toBe('{"attempt":2}');
    });
  });

  // Regression: a complete or release refused because the lease ran out while the handler ran was silent: nothing was
  // recorded, the next retry ran the handler again, and the operator never learnt that leaseMs was too short.
  describe("a lease that ran out while the handler ran", () => {
    // A handler that takes `took` ms of the fake clock (the lease ends at leaseMs exactly).
    function slow(status: number, leaseMs = 1000, took = leaseMs) {
      const onStoreError = vi.fn();
      let advance: (ms: number) => void = () => undefined;
      const s = setup({ leaseMs, onStoreError }, () => {
        advance(took);
        return json(status, { ok: 1 });
      });
      advance = s.clock.advance;
      return { ...s, onStoreError };
    }

    it("reports the refused complete as idempotency_lease_lost and answers the handler's response", async () => {
      const { handle, runs, onStoreError } = slow(201);
      const res = await handle(request({ key: '"k"' }));
      expect([res.status, bodyText(res.body)]).toEqual([201, '{"ok":1}']);
      expect(onStoreError).toHaveBeenCalledOnce();
      expect(onStoreError.mock.calls[0]?.[0]).toMatchObject({
        name: "IdempotencyError",
        code: "idempotency_lease_lost",
      });
      expect(onStoreError.mock.calls[0]?.[1]).toMatchObject({ method: "POST", path: "/orders" });
      // Nothing was recorded: the retry runs the handler again, which is what the report warns of.
      await handle(request({ key: '"k"' }));
      expect(runs()).toBe(2);
    });

    it("reports the refused release after a 5xx as idempotency_lease_lost", async () => {
      const { handle, onStoreError } = slow(503);
      const res = await handle(request({ key: '"k"' }));
      expect(res.status).toBe(503);
      expect(onStoreError.mock.calls.map(([error]) => (error as { code?: unknown }).code)).toEqual([
        "idempotency_lease_lost",
      ]);
    });

    it("reports the refused release after a thrown error, and rethrows it", async () => {
      const clock = fakeClock();
      const onStoreError = vi.fn();
      const store = new MemoryIdempotencyStore({ now: clock.now });
      const handle = idempotency({ store, identify: () => "a", leaseMs: 1000, onStoreError })(() => {
        clock.advance(1000);
        throw new Error("handler failed");
      });
      await expect(handle(request({ key: '"k"' }))).rejects.toThrow("handler failed");
      expect(onStoreError.mock.calls[0]?.[0]).toMatchObject({ code: "idempotency_lease_lost" });
    });

    it("reports it for a store answering with promises too", async () => {
      const inner = new MemoryIdempotencyStore();
      const store: IdempotencyStore = {
        begin: (...args) => Promise.resolve(inner.begin(...args)),
        complete: () => Promise.resolve(false),
        release: () => Promise.resolve(false),
      };
      for (const status of [201, 503]) {
        const onStoreError = vi.fn();
        const res = await idempotency({ store, identify: () => "a", onStoreError })(() => json(status, {}))(
          request({ key: `"k${status}"` }),
        );
        expect(res.status).toBe(status);
        expect(onStoreError.mock.calls[0]?.[0]).toMatchObject({ code: "idempotency_lease_lost" });
      }
    });

    it("reports nothing while the lease holds, to its last millisecond", async () => {
      for (const status of [201, 503]) {
        const { handle, onStoreError } = slow(status, 1000, 999);
        expect((await handle(request({ key: '"k"' }))).status).toBe(status);
        expect(onStoreError).not.toHaveBeenCalled();
      }
    });
  });

  // The memory store refuses a response it cannot hold under maxBytes; the effect has happened, so the client gets it
  // and the key stays leased, as after any failed write (releasing it would let a retry repeat the effect at once).
  describe("a response the memory store cannot hold", () => {
    it("is answered, reported as idempotency_response_too_large, and its key stays leased", async () => {
      const clock = fakeClock();
      const store = new MemoryIdempotencyStore({ maxBytes: 1024, now: clock.now });
      const onStoreError = vi.fn();
      let runs = 0;
      const handle = idempotency({ store, identify: () => "a", leaseMs: 1000, onStoreError })(() => {
        runs++;
        return text(201, "x".repeat(2048));
      });
      const res = await handle(request({ key: '"k"' }));
      expect([res.status, bodyText(res.body).length]).toEqual([201, 2048]);
      expect(onStoreError.mock.calls[0]?.[0]).toMatchObject({ code: "idempotency_response_too_large" });
      expect((await handle(request({ key: '"k"' }))).status).toBe(409);
      expect(runs).toBe(1);
      expect(store.bytes).toBeLessThanOrEqual(1024);
    });
  });

  describe("store failures", () => {
    it("still answers with the handler's response when complete fails, and reports it", async () => {
      const inner = new MemoryIdempotencyStore();
      const store: IdempotencyStore = {
        begin: (...args) => inner.begin(...args),
        complete: () => Promise.reject(new Error("store down")),
        release: (...args) => inner.release(...args),
      };
      const onStoreError = vi.fn();
      const handle = idempotency({ store, identify: () => "a", onStoreError })(() => json(201, { ok: 1 }));
      const res = await handle(request({ key: '"k"' }));
      expect(res.status).toBe(201);
      expect(onStoreError).toHaveBeenCalledOnce();
    });

    // Regression: a storeOutcome that threw, or a replayed header toStoredResponse could not copy (a number from a
    // JavaScript handler), threw after the handler ran: the client got a 500 for a request whose effect had happened,
    // and its retry found the key still leased (409), then ran the handler again.
    it.each<[string, Partial<IdempotencyOptions>, HttpResponse]>([
      [
        "storeOutcome throws",
        {
          storeOutcome: () => {
            throw new Error("no rule for 201");
          },
        },
        json(201, { ok: 1 }),
      ],
      ["a replayed header cannot be copied", {}, json(201, { ok: 1 }, { etag: 5 as never })],
      ["a replayed header's list holds a number", {}, json(201, { ok: 1 }, { vary: ["accept", 5] as never })],
    ])("answers with the handler's response when %s after it ran, and reports it", async (_, options, answer) => {
      const onStoreError = vi.fn();
      const { handle, runs } = setup({ ...options, onStoreError }, () => answer);
      const res = await handle(request({ key: '"k"' }));
      expect([res.status, runs()]).toEqual([201, 1]);
      expect(onStoreError).toHaveBeenCalledOnce();
    });

    // A store refuses a kept header field holding U+0000 or a lone surrogate, which no store can keep (a TypeError from
    // complete): the client still gets the handler's response, and the key's lease runs out as after any failed write.
    it.each([
      ["U+0000", "v\u0000"],
      ["a lone surrogate", "v\ud800"],
    ])("answers with the handler's response when the store refuses a kept header holding %s", async (_, etag) => {
      const onStoreError = vi.fn();
      const { handle, runs, clock } = setup({ onStoreError, leaseMs: 1000 }, () => json(201, { ok: 1 }, { etag }));
      const res = await handle(request({ key: '"k"' }));
      expect([res.status, res.headers.etag, runs()]).toEqual([201, etag, 1]);
      expect(onStoreError).toHaveBeenCalledOnce();
      const [refusal] = onStoreError.mock.calls[0] ?? [];
      expect(refusal).toBeInstanceOf(TypeError);
      expect((refusal as TypeError).message).toMatch(/\bresponse\.headers\b/);
      expect((await handle(request({ key: '"k"' }))).status).toBe(409);
      clock.advance(1000);
      expect((await handle(request({ key: '"k"' }))).status).toBe(201);
      expect(runs()).toBe(2);
    });

    it("logs with console.error when no onStoreError is given", async () => {
      const store: IdempotencyStore = {
        begin: () => Promise.resolve({ kind: "acquired", leaseToken: "t" }),
        complete: () => Promise.reject(new Error("store down")),
        release: () => Promise.resolve(true),
      };
      const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        const res = await idempotency({ store, identify: () => "a" })(() => json(201, {}))(request({ key: '"k"' }));
        expect(res.status).toBe(201);
        expect(log).toHaveBeenCalledOnce();
        expect(log.mock.calls[0]?.[1]).toMatchObject({ message: "store down" });
      } finally {
        log.mockRestore();
      }
    });

    // A record the store cannot decode is read again by every retry until it expires: no outage, so no 503.
    it("lets a begin that finds an undecodable record propagate (the adapter answers 500)", async () => {
      const store: IdempotencyStore = {
        begin: () => Promise.reject(new IdempotencyError("idempotency_record_invalid", "bad record")),
        complete: () => Promise.resolve(true),
        release: () => Promise.resolve(true),
      };
      const handler = vi.fn(() => json(201, {}));
      const onStoreError = vi.fn();
      const handle = idempotency({ store, identify: () => "a", onStoreError })(handler);
      await expect(handle(request({ key: '"k"' }))).rejects.toThrow("bad record");
      expect(onStoreError).not.toHaveBeenCalled();
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe("a store that answers at once", () => {
    // The contract lets an in-process store return plain values; failures then arrive as throws, not rejections.
    const throwing = (message: string) => () => {
      throw new Error(message);
    };

    it("replays through a store whose every answer is a plain value", async () => {
      const inner = new MemoryIdempotencyStore();
      const calls: string[] = [];
      const store: IdempotencyStore = {
        begin: (...args) => {
          calls.push("begin");
          return inner.begin(...args);
        },
        complete: (...args) => {
          calls.push("complete");
          return inner.complete(...args);
        },
        release: (...args) => inner.release(...args),
      };
      let runs = 0;
      const handle = idempotency({ store, identify: () => "a" })(() => json(201, { run: ++runs }));
      const first = await handle(request({ key: '"k"' }));
      const again = await handle(request({ key: '"k"' }));
      expect(bodyText(again.body)).toBe(bodyText(first.body));
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(runs).toBe(1);
      expect(calls).toEqual(["begin", "complete", "begin"]);
    });

    it("answers with the handler's response when complete throws, and reports it", async () => {
      const inner = new MemoryIdempotencyStore();
      const store: IdempotencyStore = {
        begin: (...args) => inner.begin(...args),
        complete: throwing("store down"),
        release: (...args) => inner.release(...args),
      };
      const onStoreError = vi.fn();
      const res = await idempotency({ store, identify: () => "a", onStoreError })(() => json(201, {}))(
        request({ key: '"k"' }),
      );
      expect(res.status).toBe(201);
      expect(onStoreError).toHaveBeenCalledOnce();
      expect(onStoreError.mock.calls[0]?.[0]).toMatchObject({ message: "store down" });
    });

    it("reports a release that throws after a 5xx, and still answers the 5xx", async () => {
      const inner = new MemoryIdempotencyStore();
      const store: IdempotencyStore = {
        begin: (...args) => inner.begin(...args),
        complete: (...args) => inner.complete(...args),
        release: throwing("store down"),
      };
      const onStoreError = vi.fn();
      const res = await idempotency({ store, identify: () => "a", onStoreError })(() => json(503, {}))(
        request({ key: '"k"' }),
      );
      expect(res.status).toBe(503);
      expect(onStoreError).toHaveBeenCalledOnce();
    });

    // Regression: a store option given as an async function of the request (say one that opens a transaction) failed
    // at first use: the middleware called begin on the Promise.
    it("takes a store function that resolves the store asynchronously", async () => {
      const inner = new MemoryIdempotencyStore();
      let runs = 0;
      const handle = idempotency({ store: async () => inner, identify: () => "a" })(() => json(201, { run: ++runs }));
      await handle(request({ key: '"k"' }));
      const again = await handle(request({ key: '"k"' }));
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(runs).toBe(1);
    });

    it("refuses a store function's answer that is no IdempotencyStore, naming the option, before the handler runs", async () => {
      const handler = vi.fn(() => json(201, {}));
      for (const store of [() => ({}), async () => undefined]) {
        const handle = idempotency({ store: store as never, identify: () => "a" })(handler);
        await expect(handle(request({ key: '"k"' }))).rejects.toThrow(/options\.store/);
      }
      expect(handler).not.toHaveBeenCalled();
    });

    // RFC 9110 §15.6.4: nothing ran, so the client is told to retry (it got the adapter's 500 before), and the
    // operator hears of the outage through onStoreError. Regression: a store function that failed (one opening a
    // transaction on an unreachable database) reached the adapter as a 500, where the same failure in begin is a 503.
    const beginRejects: IdempotencyStore = {
      begin: () => Promise.reject(new Error("pool exhausted")),
      complete: () => Promise.resolve(true),
      release: () => Promise.resolve(true),
    };
    it.each<[string, IdempotencyOptions["store"]]>([
      ["whose begin rejects", beginRejects],
      ["function that throws", throwing("pool exhausted")],
      ["function that rejects", () => Promise.reject(new Error("pool exhausted"))],
    ])("answers 503 with Retry-After to a store %s, reporting it, without running the handler", async (_, store) => {
      const handler = vi.fn(() => json(201, {}));
      const onStoreError = vi.fn();
      const req = request({ key: '"k"' });
      const res = await idempotency({ store, identify: () => "a", onStoreError })(handler)(req);
      expect(res.status).toBe(503);
      expect(res.headers["retry-after"]).toBe("1");
      expect(res.headers["content-type"]).toBe("application/problem+json");
      expect(problemCode(res.body)).toBe("idempotency_store_unavailable");
      expect(onStoreError).toHaveBeenCalledOnce();
      expect(onStoreError.mock.calls[0]?.[0]).toMatchObject({ message: "pool exhausted" });
      expect(onStoreError.mock.calls[0]?.[1]).toBe(req);
      expect(handler).not.toHaveBeenCalled();
    });

    it("answers 503 to a begin that throws, without running the handler", async () => {
      const store: IdempotencyStore = { begin: throwing("store down"), complete: () => true, release: () => true };
      const handler = vi.fn(() => json(201, {}));
      const onStoreError = vi.fn();
      const res = await idempotency({ store, identify: () => "a", onStoreError })(handler)(request({ key: '"k"' }));
      expect(res.status).toBe(503);
      expect(problemCode(res.body)).toBe("idempotency_store_unavailable");
      expect(onStoreError).toHaveBeenCalledOnce();
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe("misuse", () => {
    const store = new MemoryIdempotencyStore();
    const identify = () => "a";
    it.each<[string, Partial<IdempotencyOptions>]>([
      ["no store", { identify }],
      ["no identify", { store }],
      ["ttl 0", { store, identify, ttlMs: 0 }],
      ["fractional lease", { store, identify, leaseMs: 1.5 }],
      ["a list of statuses as storeOutcome", { store, identify, storeOutcome: [200, 201] as never }],
      ["an object as onStoreError", { store, identify, onStoreError: console as never }],
      ['"false" as required', { store, identify, required: "false" as never }],
      ['"false" as strict', { store, identify, strict: "false" as never }],
      ["one method as a string", { store, identify, methods: "POST" as never }],
      ["a method that is not a string", { store, identify, methods: ["POST", 1] as never }],
      ["one header name as a string", { store, identify, replayHeaders: "etag" as never }],
      ["a header name that is not a string", { store, identify, replayHeaders: ["etag", null] as never }],
    ])("throws TypeError for %s", (_, options) => {
      expect(() => idempotency(options as IdempotencyOptions)).toThrow(TypeError);
    });

    // Regression: storeOutcome and onStoreError were first called after the handler ran. A list of statuses given as
    // storeOutcome threw there: the effect had happened, the client got a 500, and the key stayed leased, so the
    // client's retry got 409 and then ran the handler a second time.
    it("refuses a storeOutcome that is not a function before any handler runs", () => {
      const handler = vi.fn(() => json(201, {}));
      expect(() => idempotency({ store, identify, storeOutcome: [200, 201] as never })(handler)).toThrow(
        /storeOutcome/,
      );
      expect(handler).not.toHaveBeenCalled();
    });

    it("throws TypeError when identify returns something other than a string", async () => {
      const handle = idempotency({ store, identify: () => undefined as unknown as string })(() => json(200, {}));
      await expect(handle(request({ key: '"k"' }))).rejects.toThrow(TypeError);
    });
  });
});
