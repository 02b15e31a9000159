import { expectTypeOf, test } from "vitest";
import { z } from "zod";
import type { SqlClient } from "../../../src/postgres/index";
import { createWebhookConsumer, createWebhookProcessor, type InboxEvent } from "../../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../../src/webhooks/consumer/memory/index";
import { createPostgresInbox } from "../../../src/webhooks/consumer/postgres/index";

declare const pool: import("pg").Pool;

test("a schema types the handler's payload", () => {
  const processor = createWebhookProcessor({ inbox: createMemoryInbox() });
  processor.on("order.shipped", z.object({ order: z.string(), carrier: z.string().default("post") }), ({ event }) => {
    expectTypeOf(event.payload).toEqualTypeOf<{ order: string; carrier: string }>();
    expectTypeOf(event.id).toEqualTypeOf<string>();
  });
  processor.on("order.*", ({ event, attempt, signal }) => {
    expectTypeOf(event).toEqualTypeOf<InboxEvent<unknown>>();
    expectTypeOf(attempt).toEqualTypeOf<number>();
    expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
  });
});

test("a PostgreSQL processor hands handlers the transaction's client; a memory one does not", () => {
  createWebhookProcessor({ inbox: createPostgresInbox({ client: pool }) }).on("*", ({ client }) => {
    expectTypeOf(client).toEqualTypeOf<SqlClient>();
  });
  // @ts-expect-error the memory inbox has no client
  createWebhookProcessor({ inbox: createMemoryInbox() }).on("*", ({ client }) => client);
});

test("the consumer needs an inbox and secrets", () => {
  // @ts-expect-error secrets missing
  createWebhookConsumer({ inbox: createMemoryInbox() });
  expectTypeOf(createWebhookConsumer({ inbox: createMemoryInbox(), secrets: "whsec_x" })).toBeFunction();
});
