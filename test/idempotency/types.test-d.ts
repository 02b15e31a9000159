import type { Redis } from "ioredis";
import type pg from "pg";
import type { createClient, createClientPool, createCluster } from "redis";
import type { createClient as createClient4, createCluster as createCluster4 } from "redis-4";
import type { createClient as createClient5, createCluster as createCluster5 } from "redis-5";
import { describe, expectTypeOf, it } from "vitest";
import type { Handler } from "../../src/http";
import {
  type BeginResult,
  type Decision,
  decide,
  type FingerprintInput,
  type IdempotencyErrorCode,
  type IdempotencyStore,
  idempotency,
  MemoryIdempotencyStore,
  requestFingerprint,
} from "../../src/idempotency";
import type { PostgresIdempotencyStore } from "../../src/idempotency/postgres";
import { RedisIdempotencyStore, type RedisScriptClient, type RedisStoreClient } from "../../src/idempotency/redis";
import type { SqlClient } from "../../src/postgres";

describe("idempotency types", () => {
  it("accepts the users' own ioredis and pg objects structurally", () => {
    expectTypeOf<Redis>().toMatchTypeOf<RedisScriptClient>();
    expectTypeOf<pg.Pool>().toMatchTypeOf<SqlClient>();
    expectTypeOf<pg.PoolClient>().toMatchTypeOf<SqlClient>();
    expectTypeOf<pg.Client>().toMatchTypeOf<SqlClient>();
  });

  it("accepts node-redis 4, 5 and 6 clients, pools and clusters", () => {
    expectTypeOf<Redis>().toMatchTypeOf<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createClient>>().toMatchTypeOf<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createClientPool>>().toMatchTypeOf<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createCluster>>().toMatchTypeOf<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createClient5>>().toMatchTypeOf<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createCluster5>>().toMatchTypeOf<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createClient4>>().toMatchTypeOf<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createCluster4>>().toMatchTypeOf<RedisStoreClient>();
    // @ts-expect-error a client needs a way to send commands
    new RedisIdempotencyStore({ get: async () => null });
  });

  it("has every store implement one interface", () => {
    expectTypeOf<MemoryIdempotencyStore>().toMatchTypeOf<IdempotencyStore>();
    expectTypeOf<RedisIdempotencyStore>().toMatchTypeOf<IdempotencyStore>();
    expectTypeOf<PostgresIdempotencyStore>().toMatchTypeOf<IdempotencyStore>();
  });

  it("returns handler middleware and discriminated results", () => {
    const protect = idempotency({ store: new MemoryIdempotencyStore(), identify: () => "a" });
    expectTypeOf(protect).toEqualTypeOf<(handler: Handler) => Handler>();
    expectTypeOf<BeginResult["kind"]>().toEqualTypeOf<"acquired" | "in-progress" | "completed">();
    expectTypeOf<Decision["kind"]>().toEqualTypeOf<
      "execute" | "replay" | "conflict-in-progress" | "fingerprint-mismatch"
    >();
    expectTypeOf<"idempotency_key_in_use">().toMatchTypeOf<IdempotencyErrorCode>();
    expectTypeOf<
      "idempotency_lease_lost" | "idempotency_response_too_large" | "idempotency_store_full"
    >().toMatchTypeOf<IdempotencyErrorCode>();
    // @ts-expect-error identify is required: keys must be scoped per caller
    idempotency({ store: new MemoryIdempotencyStore() });
  });

  it("fingerprints the two fields only when given, and decides with or without the legacy fingerprint", () => {
    expectTypeOf<FingerprintInput["contentType"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<FingerprintInput["contentEncoding"]>().toEqualTypeOf<string | undefined>();
    requestFingerprint({ method: "POST", target: "/", caller: "a", body: new Uint8Array(0) });
    const found: BeginResult = { kind: "acquired", leaseToken: "t" };
    expectTypeOf(decide("key", "v2.fp", found)).toEqualTypeOf<Decision>();
    expectTypeOf(decide("key", "v2.fp", found, "legacy-fp")).toEqualTypeOf<Decision>();
    // @ts-expect-error the legacy fingerprint is a string
    decide("key", "v2.fp", found, 1);
  });

  it("bounds the memory store by entries and bytes", () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 10, maxBytes: Number.POSITIVE_INFINITY });
    expectTypeOf(store.bytes).toEqualTypeOf<number>();
    // @ts-expect-error bytes is read-only
    store.bytes = 0;
    // @ts-expect-error maxBytes is a number of bytes
    new MemoryIdempotencyStore({ maxBytes: "64MiB" });
  });

  it("takes the protected methods as a list or a test", () => {
    const store = new MemoryIdempotencyStore();
    idempotency({ store, identify: () => "a", methods: ["POST"] });
    idempotency({ store, identify: () => "a", methods: (method) => method === "POST" });
    // @ts-expect-error a test takes the method and answers a boolean
    idempotency({ store, identify: () => "a", methods: (method: number) => method > 0 });
  });
});
