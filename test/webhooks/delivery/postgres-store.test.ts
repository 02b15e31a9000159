import pg from "pg";
import { describe, expect, it } from "vitest";
import { createEvent } from "../../../src/webhooks/delivery/event";
import {
  createPostgresDeliveryQueue,
  createPostgresEndpointStore,
  migrateWebhookQueue,
} from "../../../src/webhooks/postgres/queue/index";
import { databaseUrl, skipWithoutPostgres, uniqueName } from "../../support/services";
import { endpointFixture, storeContract } from "./store-contract";

describe.skipIf(skipWithoutPostgres())("postgres webhook queue", () => {
  storeContract("postgres", async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    const schema = uniqueName("whq").toLowerCase();
    await migrateWebhookQueue(pool, { schema });
    return {
      endpoints: createPostgresEndpointStore({ pool, schema }),
      queue: createPostgresDeliveryQueue({ pool, schema }),
      close: async () => {
        await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
        await pool.end();
      },
    };
  });

  it("publish runs in the caller's transaction: a rollback leaves no delivery (transactional outbox)", async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    const schema = uniqueName("whq").toLowerCase();
    try {
      await migrateWebhookQueue(pool, { schema });
      await migrateWebhookQueue(pool, { schema }); // idempotent
      const endpoints = createPostgresEndpointStore({ pool, schema });
      const queue = createPostgresDeliveryQueue({ pool, schema });
      const e = endpointFixture();
      await endpoints.create(e);
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const rolledBack = createEvent({ type: "order.created", data: { id: 1 } });
        expect((await queue.publish(rolledBack, { client })).deliveryIds).toHaveLength(1);
        await client.query("ROLLBACK");
        await client.query("BEGIN");
        const committed = createEvent({ type: "order.created", data: { id: 2 } });
        const { deliveryIds } = await queue.publish(committed, { client });
        // Not visible to workers until the caller commits.
        expect(await queue.claim({ limit: 10, now: Date.now() + 1_000, leaseMs: 1_000 })).toEqual([]);
        await client.query("COMMIT");
        const claimed = await queue.claim({ limit: 10, now: Date.now() + 1_000, leaseMs: 1_000 });
        expect(claimed.map((c) => c.id)).toEqual(deliveryIds);
      } finally {
        client.release();
      }
    } finally {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    }
  });

  it("two workers claiming at once never get the same delivery (SKIP LOCKED)", async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 6 });
    const schema = uniqueName("whq").toLowerCase();
    try {
      await migrateWebhookQueue(pool, { schema });
      const endpoints = createPostgresEndpointStore({ pool, schema });
      const queue = createPostgresDeliveryQueue({ pool, schema });
      await endpoints.create(endpointFixture());
      for (let i = 0; i < 60; i++) await queue.publish(createEvent({ type: "x.created", data: { i } }), { now: 0 });
      const batches = await Promise.all([1, 2, 3, 4].map(() => queue.claim({ limit: 20, now: 1, leaseMs: 60_000 })));
      const ids = batches.flat().map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(60);
    } finally {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    }
  });
});
