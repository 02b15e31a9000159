/**
 * The contract every IdempotencyStore passes (memory, Redis, PostgreSQL): one suite, a factory per store.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json } from "../../src/http";
import {
  type FingerprintInput,
  type IdempotencyStore,
  idempotency,
  requestFingerprint,
  type StoredResponse,
  scopedKey,
} from "../../src/idempotency";
import { legacyRequestFingerprint } from "../../src/idempotency/fingerprint";
import { toStoredResponse } from "../../src/idempotency/stored-response";
import { bodyText, request } from "./support";

/** A store under test and the way to move its clock forward. */
export interface StoreHarness {
  store: IdempotencyStore;
  /** Moves the store's clock by `ms`: a fake clock steps, a real store's is waited for. */
  advance(ms: number): Promise<void>;
  close?(): Promise<void>;
}

/** Timings of a run: real stores need short real leases, a fake clock takes any. */
export interface ContractTimings {
  leaseMs: number;
  ttlMs: number;
  /**
   * Whether `advance` moves the store's clock by exactly the milliseconds asked (an injected fake clock): the cases at
   * the very instant a lease ends run only then. A real store is waited for, with a margin, as the other cases do.
   */
  exactClock?: boolean;
}

// Leases and lifetimes of the cases that do not test expiry: long enough that a loaded machine
// (real stores wait in real time) never lets them run out mid-case.
const HOLD_MS = 60_000;
const KEEP_MS = 600_000;

const response: StoredResponse = {
  status: 201,
  headers: { "content-type": "application/json", location: "/orders/1", link: ["</a>; rel=a", "</b>; rel=b"] },
  body: new TextEncoder().encode('{"id":1}'),
};

const binary: StoredResponse = {
  status: 200,
  headers: { "content-type": "application/octet-stream" },
  body: Uint8Array.from({ length: 256 * 4 }, (_, i) => i % 256),
};

// Large enough for stores that write large values another way (Redis stages them with a plain SET).
const large: StoredResponse = {
  status: 200,
  headers: { "content-type": "application/octet-stream" },
  body: Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 256),
};

/** Runs the shared store contract against the stores `factory` makes. */
export function describeStoreContract(
  name: string,
  factory: () => Promise<StoreHarness>,
  { leaseMs, ttlMs, exactClock = false }: ContractTimings,
): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    let h: StoreHarness;
    let store: IdempotencyStore;
    const key = () => `k-${randomUUID()}`;
    const acquire = async (k: string, fingerprint = "fp-1", lease = HOLD_MS) => {
      const found = await store.begin(k, fingerprint, lease);
      if (found.kind !== "acquired") throw new Error(`expected acquired, got ${found.kind}`);
      return found.leaseToken;
    };
    // A sync throw (the memory store) and a rejection (the others) alike: a TypeError naming the argument.
    const refused = async (call: () => unknown, argument: string) => {
      const error = await Promise.resolve()
        .then(call)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(TypeError);
      expect((error as TypeError).message).toMatch(new RegExp(`\\b${argument}\\b`));
    };

    beforeAll(async () => {
      h = await factory();
      store = h.store;
    });
    afterAll(async () => {
      await h?.close?.();
    });

    describe("begin", () => {
      it("acquires a fresh key with a lease token", async () => {
        const found = await store.begin(key(), "fp-1", HOLD_MS);
        expect(found.kind).toBe("acquired");
        expect(found.kind === "acquired" && found.leaseToken.length).toBeGreaterThan(0);
      });

      it("reports a leased key in progress with its fingerprint and the lease left", async () => {
        const k = key();
        await acquire(k);
        const found = await store.begin(k, "fp-2", HOLD_MS);
        expect(found).toMatchObject({ kind: "in-progress", fingerprint: "fp-1" });
        if (found.kind !== "in-progress") return;
        expect(found.retryAfterMs).toBeGreaterThan(0);
        expect(found.retryAfterMs).toBeLessThanOrEqual(HOLD_MS);
      });

      it("keeps keys independent", async () => {
        const a = key();
        await acquire(a);
        expect((await store.begin(key(), "fp-1", HOLD_MS)).kind).toBe("acquired");
      });

      it("lets exactly one of many concurrent begins acquire", async () => {
        const k = key();
        const found = await Promise.all(Array.from({ length: 25 }, () => store.begin(k, "fp-1", HOLD_MS)));
        expect(found.filter((f) => f.kind === "acquired")).toHaveLength(1);
        expect(found.filter((f) => f.kind === "in-progress")).toHaveLength(24);
      });
    });

    describe("complete", () => {
      it("stores the response byte for byte under the original fingerprint", async () => {
        const k = key();
        const token = await acquire(k, "fp-orig");
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(true);
        const found = await store.begin(k, "fp-other", HOLD_MS);
        expect(found.kind).toBe("completed");
        if (found.kind !== "completed") return;
        expect(found.fingerprint).toBe("fp-orig");
        expect(found.response.status).toBe(201);
        expect(found.response.headers).toEqual(response.headers);
        expect(Buffer.from(found.response.body).equals(Buffer.from(response.body))).toBe(true);
      });

      it("keeps binary, large and empty bodies exactly", async () => {
        for (const stored of [binary, large, { status: 204, headers: {}, body: new Uint8Array(0) }]) {
          const k = key();
          expect(await store.complete(k, await acquire(k), stored, KEEP_MS)).toBe(true);
          const found = await store.begin(k, "fp-1", HOLD_MS);
          if (found.kind !== "completed") throw new Error(`${stored.body.byteLength} bytes: found ${found.kind}`);
          expect(found.response.status).toBe(stored.status);
          expect(Buffer.from(found.response.body).equals(Buffer.from(stored.body))).toBe(true);
        }
      });

      // Every store keeps a field's values in order; PostgreSQL alone may reorder the fields (jsonb orders an object's
      // names), which RFC 9110 §5.3 makes insignificant: docs/idempotency.md, "PostgreSQL".
      it("keeps each header field's values in their order, an empty list and non-ASCII values too", async () => {
        const k = key();
        const headers = { vary: ["b", "a", "b"], link: [], "content-language": "ü-€", allow: "" };
        const stored = { status: 200, headers, body: new Uint8Array(0) };
        expect(await store.complete(k, await acquire(k), stored, KEEP_MS)).toBe(true);
        const found = await store.begin(k, "fp-1", HOLD_MS);
        expect(found).toMatchObject({ kind: "completed", response: { status: 200, headers } });
        expect(found.kind === "completed" && Object.keys(found.response.headers).sort()).toEqual(
          Object.keys(headers).sort(),
        );
      });

      // Regression: the memory store handed every begin its one stored buffer, so a replay written into (by a handler,
      // a middleware, an adapter) changed what every later replay sent.
      it("hands each begin a body of its own: writing into one changes no later replay", async () => {
        const k = key();
        const given = { ...binary, body: Uint8Array.from(binary.body) };
        expect(await store.complete(k, await acquire(k), given, KEEP_MS)).toBe(true);
        const first = await store.begin(k, "fp-1", HOLD_MS);
        if (first.kind !== "completed") throw new Error(`found ${first.kind}`);
        first.response.body.fill(0x58);
        const again = await store.begin(k, "fp-1", HOLD_MS);
        if (again.kind !== "completed") throw new Error(`found ${again.kind}`);
        expect(Buffer.from(again.response.body).equals(Buffer.from(binary.body))).toBe(true);
      });

      it("refuses a wrong token and leaves the lease in place", async () => {
        const k = key();
        const token = await acquire(k);
        expect(await store.complete(k, `${token}x`, response, KEEP_MS)).toBe(false);
        expect(await store.complete(k, `${token}x`, large, KEEP_MS)).toBe(false);
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("in-progress");
        expect(await store.complete(k, token, large, KEEP_MS)).toBe(true);
      });

      it("refuses a second complete and an unknown key", async () => {
        const k = key();
        const token = await acquire(k);
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(true);
        expect(await store.complete(k, token, binary, KEEP_MS)).toBe(false);
        expect(await store.complete(key(), token, response, KEEP_MS)).toBe(false);
        const found = await store.begin(k, "fp-1", HOLD_MS);
        expect(found.kind === "completed" && found.response.status).toBe(201);
      });
    });

    describe("release", () => {
      it("frees the key for a new lease with a new token", async () => {
        const k = key();
        const token = await acquire(k);
        expect(await store.release(k, token)).toBe(true);
        const again = await acquire(k, "fp-2");
        expect(again).not.toBe(token);
      });

      it("refuses a wrong token, a completed record and an unknown key", async () => {
        const k = key();
        const token = await acquire(k);
        expect(await store.release(k, `${token}x`)).toBe(false);
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(true);
        expect(await store.release(k, token)).toBe(false);
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("completed");
        expect(await store.release(key(), token)).toBe(false);
      });
    });

    describe("expiry", () => {
      it("hands an expired lease to the next begin and fences the old holder", async () => {
        const k = key();
        const old = await acquire(k, "fp-1", leaseMs);
        await h.advance(leaseMs + 60);
        const next = await acquire(k, "fp-2");
        expect(next).not.toBe(old);
        expect(await store.complete(k, old, binary, KEEP_MS)).toBe(false);
        expect(await store.complete(k, old, large, KEEP_MS)).toBe(false);
        expect(await store.release(k, old)).toBe(false);
        expect(await store.complete(k, next, response, KEEP_MS)).toBe(true);
        const found = await store.begin(k, "fp-2", HOLD_MS);
        expect(found.kind === "completed" && found.response.status).toBe(201);
      });

      it("refuses to complete on an expired lease nobody took over", async () => {
        const k = key();
        const token = await acquire(k, "fp-1", leaseMs);
        await h.advance(leaseMs + 60);
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(false);
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("acquired");
      });

      // Regression: memory and PostgreSQL released a lease that had run out (true), Redis did not (false).
      it("refuses to release an expired lease nobody took over, as complete does", async () => {
        const k = key();
        const token = await acquire(k, "fp-1", leaseMs);
        await h.advance(leaseMs + 60);
        expect(await store.release(k, token)).toBe(false);
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(false);
        expect((await store.begin(k, "fp-2", HOLD_MS)).kind).toBe("acquired");
      });

      // Only where the test sets the store's clock to the millisecond (registered nowhere else, so never skipped).
      if (exactClock)
        it("ends a lease at exactly leaseMs: release and complete hold until then, not at it", async () => {
          const [released, completed, ended] = [key(), key(), key()];
          const tokens = [await acquire(released, "fp-1", leaseMs), await acquire(completed, "fp-1", leaseMs)];
          const token = await acquire(ended, "fp-1", leaseMs);
          await h.advance(leaseMs - 1);
          expect(await store.begin(ended, "fp-1", HOLD_MS)).toMatchObject({ kind: "in-progress", retryAfterMs: 1 });
          expect(await store.release(released, tokens[0] as string)).toBe(true);
          expect(await store.complete(completed, tokens[1] as string, response, KEEP_MS)).toBe(true);
          await h.advance(1);
          expect(await store.release(ended, token)).toBe(false);
          expect(await store.complete(ended, token, response, KEEP_MS)).toBe(false);
          expect((await store.begin(ended, "fp-2", HOLD_MS)).kind).toBe("acquired");
        });

      it("forgets a completed response after its TTL", async () => {
        const k = key();
        await store.complete(k, await acquire(k), response, ttlMs);
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("completed");
        await h.advance(ttlMs + 60);
        expect((await store.begin(k, "fp-3", HOLD_MS)).kind).toBe("acquired");
      });
    });

    // A store keeps the fingerprint it was given as it was given: both the current form ("v2." and 43 characters) and
    // the one 0.1 wrote (43 characters), which records still hold for one TTL after an upgrade.
    describe("fingerprints", () => {
      const body = '{"sku":"a"}';
      const input: FingerprintInput = {
        method: "POST",
        target: "/orders",
        caller: "acct_1",
        body: new TextEncoder().encode(body),
        contentType: "application/json",
      };

      it("returns both fingerprint forms exactly, in progress and completed", async () => {
        for (const fingerprint of [requestFingerprint(input), legacyRequestFingerprint(input)]) {
          const k = key();
          const token = await acquire(k, fingerprint);
          expect(await store.begin(k, "fp-other", HOLD_MS)).toMatchObject({ kind: "in-progress", fingerprint });
          expect(await store.complete(k, token, response, KEEP_MS)).toBe(true);
          expect(await store.begin(k, "fp-other", HOLD_MS)).toMatchObject({ kind: "completed", fingerprint });
        }
      });

      it("serves the middleware a record under 0.1's fingerprint: the same request replayed, another 422", async () => {
        const idempotencyKey = key();
        const scoped = scopedKey(input.caller, idempotencyKey);
        await store.complete(scoped, await acquire(scoped, legacyRequestFingerprint(input)), response, KEEP_MS);
        let runs = 0;
        const handle = idempotency({ store, identify: () => input.caller })(() => json(201, { run: ++runs }));
        const replay = await handle(request({ key: idempotencyKey, body }));
        expect(replay.status).toBe(201);
        expect(replay.headers["idempotent-replayed"]).toBe("true");
        expect(bodyText(replay.body)).toBe('{"id":1}');
        expect((await handle(request({ key: idempotencyKey, body: '{"sku":"b"}' }))).status).toBe(422);
        expect(runs).toBe(0);
      });
    });

    // Regression: a status the adapters refuse to send (outside 200..599) was stored, by default any below 500. Redis
    // and PostgreSQL then could not read a record outside 100..599 back, so every retry of the key got a 500
    // (idempotency_record_invalid) until the TTL ran out; memory replayed a status no adapter sends (a 500 each time).
    describe("statuses no adapter sends", () => {
      for (const [status, storeOutcome] of [
        [0, undefined],
        [99, undefined],
        [100, undefined],
        [600, () => true],
        [999, () => true],
        [201.5, () => true],
      ] as const) {
        it(`releases the key after a ${status}: the retry runs the handler again`, async () => {
          let runs = 0;
          const handle = idempotency({ store, identify: () => "acct_1", storeOutcome })(() => ({
            status: ++runs === 1 ? status : 201,
            headers: {},
            body: `run ${runs}`,
          }));
          const idempotencyKey = key();
          expect((await handle(request({ key: idempotencyKey }))).status).toBe(status);
          const retry = await handle(request({ key: idempotencyKey }));
          expect([retry.status, bodyText(retry.body), runs]).toEqual([201, "run 2", 2]);
          const replay = await handle(request({ key: idempotencyKey }));
          expect([replay.status, bodyText(replay.body), runs]).toEqual([201, "run 2", 2]);
        });
      }
    });

    // Regression: memory and PostgreSQL took 0 or -5 as a dead lease, Redis threw a ReplyError, memory alone kept 1.5,
    // NaN and Infinity (a 409 with Retry-After: Infinity).
    describe("arguments", () => {
      const durations = [
        0,
        -5,
        1.5,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        "60000",
        undefined,
      ];
      const bad = durations as unknown as number[];

      it("refuses a leaseMs that is not a positive integer of milliseconds, and changes nothing", async () => {
        const free = key();
        const held = key();
        await acquire(held);
        for (const lease of bad) {
          await refused(() => store.begin(free, "fp-1", lease), "leaseMs");
          await refused(() => store.begin(held, "fp-2", lease), "leaseMs");
        }
        expect((await store.begin(free, "fp-1", HOLD_MS)).kind).toBe("acquired");
        expect(await store.begin(held, "fp-2", HOLD_MS)).toMatchObject({ kind: "in-progress", fingerprint: "fp-1" });
      });

      it("refuses a ttlMs that is not a positive integer of milliseconds, and changes nothing", async () => {
        const k = key();
        const token = await acquire(k);
        for (const ttl of bad) {
          await refused(() => store.complete(k, token, response, ttl), "ttlMs");
          await refused(() => store.complete(k, token, large, ttl), "ttlMs");
          await refused(() => store.complete(key(), token, response, ttl), "ttlMs");
        }
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("in-progress");
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(true);
      });

      // Regression: memory kept any status; Redis and PostgreSQL wrote one outside 100..599 and then threw
      // idempotency_record_invalid from every begin on the key until the record expired.
      it("refuses a response status outside 100..599, and changes nothing", async () => {
        const k = key();
        const token = await acquire(k);
        for (const status of [0, 99, 600, 999, 201.5, Number.NaN, "201"]) {
          await refused(() => store.complete(k, token, { ...response, status: status as number }, KEEP_MS), "status");
          await refused(() => store.complete(k, token, { ...large, status: status as number }, KEEP_MS), "status");
        }
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("in-progress");
        expect(await store.complete(k, token, { ...response, status: 599 }, KEEP_MS)).toBe(true);
        expect(await store.begin(k, "fp-1", HOLD_MS)).toMatchObject({ kind: "completed", response: { status: 599 } });
      });
    });

    // Regression: PostgreSQL cannot keep U+0000 in text or jsonb (an error from the database) and reads a lone
    // surrogate in text as U+FFFD, refusing it in jsonb, where the memory store kept both and Redis read a lone
    // surrogate back as U+FFFD in keys and fingerprints: every store now refuses such text with a TypeError.
    describe("text no store can keep", () => {
      const faulty = ["k\u0000", "\u0000", "k\ud800", "\udc00k", "k\ud800\u0000"];

      it("refuses a key holding U+0000 or a lone surrogate in begin, complete and release", async () => {
        const k = key();
        const token = await acquire(k);
        for (const bad of faulty) {
          await refused(() => store.begin(bad, "fp-1", HOLD_MS), "key");
          await refused(() => store.complete(bad, token, response, KEEP_MS), "key");
          await refused(() => store.complete(bad, token, large, KEEP_MS), "key");
          await refused(() => store.release(bad, token), "key");
        }
        expect(await store.begin(k, "fp-2", HOLD_MS)).toMatchObject({ kind: "in-progress", fingerprint: "fp-1" });
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(true);
        // The well-formed neighbours of refused text stay keys like any other.
        for (const good of ["k\ud83d\ude00", "k\ufffd", "k\u0001"]) {
          expect((await store.begin(`${k}${good}`, "fp-1", HOLD_MS)).kind).toBe("acquired");
        }
      });

      it("refuses a fingerprint holding U+0000 or a lone surrogate, and changes nothing", async () => {
        const free = key();
        const held = key();
        await acquire(held);
        for (const bad of faulty) {
          await refused(() => store.begin(free, bad, HOLD_MS), "fingerprint");
          await refused(() => store.begin(held, bad, HOLD_MS), "fingerprint");
        }
        expect((await store.begin(free, "fp-\ud83d\ude00", HOLD_MS)).kind).toBe("acquired");
        expect(await store.begin(free, "fp-1", HOLD_MS)).toMatchObject({ fingerprint: "fp-\ud83d\ude00" });
        expect(await store.begin(held, "fp-2", HOLD_MS)).toMatchObject({ kind: "in-progress", fingerprint: "fp-1" });
      });

      it("refuses a lease token holding U+0000 or a lone surrogate in complete and release", async () => {
        const k = key();
        const token = await acquire(k);
        for (const bad of faulty) {
          await refused(() => store.complete(k, `${token}${bad}`, response, KEEP_MS), "leaseToken");
          await refused(() => store.release(k, bad), "leaseToken");
        }
        expect(await store.begin(k, "fp-2", HOLD_MS)).toMatchObject({ kind: "in-progress", fingerprint: "fp-1" });
        expect(await store.release(k, token)).toBe(true);
      });

      it("refuses a response header name holding U+0000 or a lone surrogate, and changes nothing", async () => {
        const k = key();
        const token = await acquire(k);
        for (const bad of faulty) {
          const headers = { ...response.headers, [bad]: "v" };
          await refused(() => store.complete(k, token, { ...response, headers }, KEEP_MS), "headers");
          await refused(() => store.complete(k, token, { ...large, headers }, KEEP_MS), "headers");
        }
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("in-progress");
        expect(await store.complete(k, token, response, KEEP_MS)).toBe(true);
      });

      it("refuses a response header value holding U+0000 or a lone surrogate, alone or in a list", async () => {
        const k = key();
        const token = await acquire(k);
        for (const bad of faulty) {
          for (const value of [bad, ["ok", bad], [bad, "ok"]]) {
            const headers = { ...response.headers, "x-value": value };
            await refused(() => store.complete(k, token, { ...response, headers }, KEEP_MS), "headers");
            await refused(() => store.complete(k, token, { ...large, headers }, KEEP_MS), "headers");
          }
        }
        expect((await store.begin(k, "fp-1", HOLD_MS)).kind).toBe("in-progress");
        const headers = { "x-value": ["caf\u00e9 \ud83d\ude00", "\u0001"] };
        expect(await store.complete(k, token, { ...response, headers }, KEEP_MS)).toBe(true);
        expect(await store.begin(k, "fp-1", HOLD_MS)).toMatchObject({ kind: "completed", response: { headers } });
      });

      // Bytes are binary-safe everywhere: a text body's U+0000 is kept, a lone surrogate was U+FFFD once encoded.
      it("keeps a text body holding U+0000 or a lone surrogate as toStoredResponse encoded it", async () => {
        for (const text of faulty) {
          const k = key();
          const token = await acquire(k);
          const stored = toStoredResponse(
            { status: 200, headers: { "content-type": "text/plain" }, body: text },
            new Set(["content-type"]),
          );
          expect(await store.complete(k, token, stored, KEEP_MS)).toBe(true);
          const found = await store.begin(k, "fp-1", HOLD_MS);
          if (found.kind !== "completed") throw new Error(`expected completed, got ${found.kind}`);
          expect(new Uint8Array(found.response.body)).toEqual(new TextEncoder().encode(text));
        }
      });
    });
  });
}
