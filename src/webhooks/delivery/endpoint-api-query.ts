import { z } from "zod";
import { queryInteger } from "../../routing/query-integer";
import { MAX_REPLAY_BATCH, REPLAY_STATUSES, type ReplayStatus } from "./endpoint-admin";
import { sinceBodySchema, sinceQuerySchema } from "./since";
import { DELIVERY_STATUSES } from "./state-machine";

// The query and body schemas of the endpoint API's operations (beside the endpoint's own, in endpoint-schema.ts).

const limit = queryInteger(
  z.int({ error: "Expected an integer from 1 to 100, in decimal digits." }).min(1).max(100).default(10),
);
const startingAfter = (what: string) =>
  z
    .string()
    .max(255)
    .optional()
    .meta({
      description: `The id of the last ${what} of the previous page: the page after it. One that names no ${what} (deleted, or forgotten) is a 400 invalid_cursor, never a shorter list.`,
    });
export const listQuery = z.object({ limit, starting_after: startingAfter("endpoint") });
export const deliveriesQuery = z.object({
  limit,
  status: z.enum(DELIVERY_STATUSES).optional(),
  since: sinceQuerySchema,
  event_id: z.string().max(255).optional().meta({
    description:
      "Only the delivery of this event: whether, and how, an event reached the endpoint. At most one, but on an all_tenants endpoint one per tenant that published the id.",
  }),
  starting_after: startingAfter("delivery"),
});
export const attemptsQuery = z.object({
  limit,
  delivery_id: z.string().max(255).optional(),
  starting_after: z.string().max(255).optional().meta({
    description:
      "The id of the last line of the previous page: the lines older than it, even once that line itself is no longer kept. One that is no line id at all is a 400 invalid_cursor.",
  }),
});
// A replay's batch: bounded, so one request never walks an endpoint's whole backlog (MAX_REPLAY_BATCH).
const REPLAY_LIMIT = `The most deliveries this request reads and queues again, from 1 to ${MAX_REPLAY_BATCH} (the default).`;
const replayLimit = z
  .int({ error: `Expected an integer from 1 to ${MAX_REPLAY_BATCH}.` })
  .min(1)
  .max(MAX_REPLAY_BATCH)
  .optional()
  .meta({ description: REPLAY_LIMIT });
const replayAfter = z.string().max(255).optional().meta({
  description:
    "The next_starting_after of the previous answer: the batch after it (older deliveries), with the same since. One that names no delivery of the endpoint is a 400 invalid_cursor.",
});
const replayStatus = z
  .enum(REPLAY_STATUSES as [ReplayStatus, ...ReplayStatus[]])
  .optional()
  .meta({
    description:
      "Which deliveries to queue again: failed, exhausted, or parked (the exhausted deliveries that came due while the endpoint was disabled, last_error_kind endpoint_disabled). Default: failed and exhausted. Keep it the same while paging with starting_after.",
  });
// Strict, as every body of the API: a member it does not take (a filter such as event_type) is refused, not dropped
// while every failed delivery is queued again.
export const replayBody = z
  .strictObject({ since: sinceBodySchema, limit: replayLimit, starting_after: replayAfter, status: replayStatus })
  .optional();
export const replayQuery = z.object({
  since: sinceQuerySchema,
  limit: queryInteger(replayLimit),
  starting_after: replayAfter,
  status: replayStatus,
});
