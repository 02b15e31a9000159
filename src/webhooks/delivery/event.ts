import { randomUUID } from "node:crypto";
import { z } from "zod";
import { WebhookDeliveryError } from "./errors";
import { eventTypeSchema } from "./event-type";

/** The envelope every webhook carries: a unique id, a `<resource>.<action>` type, a timestamp and the data. */
export const webhookEventSchema = z.object({
  id: z.string().min(1).max(128),
  type: eventTypeSchema,
  timestamp: z.iso.datetime({ offset: true }),
  data: z.record(z.string(), z.unknown()),
});

/** A webhook event envelope (the JSON body of every delivery). */
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/** Input of {@link createEvent}. */
export interface CreateEventInput {
  type: string;
  data: Record<string, unknown>;
  /** @default "evt_" + a random UUID without dashes */
  id?: string;
  /** Epoch ms. @default Date.now() */
  now?: number;
}

/**
 * Builds and validates an event envelope; throws `invalid_event` on a bad type or data (programmer error). The
 * result is what {@link webhookEventSchema} outputs for the envelope: the data is a shallow copy.
 * @example createEvent({ type: "order.created", data: { id: "ord_1" } })
 */
export function createEvent(input: CreateEventInput): WebhookEvent {
  const time = new Date(input.now ?? Date.now());
  const candidate = {
    id: input.id ?? `evt_${randomUUID().replaceAll("-", "")}`,
    type: input.type,
    // An invalid time becomes a timestamp the schema refuses, with its message.
    timestamp: Number.isNaN(time.getTime()) ? String(input.now) : time.toISOString(),
    data: input.data,
  };
  const parsed = webhookEventSchema.safeParse(candidate);
  if (!parsed.success) {
    throw new WebhookDeliveryError("invalid_event", `Invalid webhook event: ${parsed.error.issues[0]?.message}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
