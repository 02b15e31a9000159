import { z } from "zod";
import { createEvent, type WebhookEvent } from "./event";

/**
 * The type of the event `EndpointAdmin.sendTest` sends (the endpoint API's `POST /{endpoint_id}/test`): an endpoint's
 * owner asks for one to check the URL, the signature and the handling before real events flow, as Stripe's "Send test
 * webhook" and GitHub's ping. It reaches that endpoint alone, whatever its `enabled_events`; a consumer with no handler
 * for it marks it done (the processor's default).
 */
export const TEST_EVENT_TYPE = "webhook_endpoint.test";

/**
 * The data of a test event: the endpoint it was sent to, and nothing of anyone else's. Put it in your catalog to have
 * OpenAPI list the event: `defineEvents({ …, [TEST_EVENT_TYPE]: testEventDataSchema })`.
 */
export const testEventDataSchema = z.object({ endpoint_id: z.string() }).meta({ id: "WebhookTestEventData" });

/** The data of a test event. */
export type TestEventData = z.output<typeof testEventDataSchema>;

/** A new test event for an endpoint (a fresh event id, so each request sends one). */
export function testEvent(endpointId: string, now: number): WebhookEvent {
  return createEvent({ type: TEST_EVENT_TYPE, data: { endpoint_id: endpointId } satisfies TestEventData, now });
}
