import { z } from "zod";
import { HttpProblem } from "../../http/problem";
import type { Router } from "../../routing/router";
import type { Middleware } from "../../routing/types";
import { taggedJson } from "./endpoint-api-preconditions";
import { listJsonSchema } from "./endpoint-schema";

/** An event catalog as the event-type routes read it: `defineEvents` gives one. */
export interface DescribedEvents {
  readonly types: readonly string[];
  /** The zod schema of the data of `type`. */
  data(type: string): z.ZodType;
}

/** The public JSON of an event type. */
export const eventTypeJsonSchema = z
  .object({
    object: z.literal("event_type"),
    type: z.string().meta({ description: "What enabled_events names to receive it: <resource>.<action>." }),
    description: z.string().nullable().meta({ description: "The description of its data schema, if it has one." }),
    schema: z.record(z.string(), z.unknown()).meta({
      description: "The JSON Schema (draft 2020-12) of its data: the `data` member of every delivery of this type.",
    }),
  })
  .meta({ id: "WebhookEventType" });

type EventTypeJson = z.output<typeof eventTypeJsonSchema>;

/** What the event-type routes share with the endpoint API that declares them. */
export interface EventTypeRoutesContext {
  events: DescribedEvents;
  /** The API key check and the tenant scope, as on every route of the API. */
  use: Middleware[];
  /** The reads' middleware: a 304 for an If-None-Match matching the ETag of what they answer. */
  revalidated: Middleware;
  tags: string[];
}

/**
 * `GET <path>` (every event type an endpoint can subscribe to, with the JSON Schema of its data) and
 * `GET <path>/{event_type}`: what a dashboard offers for `enabled_events`, as Svix's event-type API. The catalog is
 * fixed when the API is declared, so both answers are built once and carry a strong ETag (a 304 when unchanged).
 */
export function declareEventTypeRoutes(router: Router, path: string, context: EventTypeRoutesContext): Router {
  const { events, use, revalidated, tags } = context;
  const described = new Map<string, EventTypeJson>(
    events.types.map((type) => [type, describe(type, events.data(type))]),
  );
  const list = { object: "list" as const, data: [...described.values()], has_more: false };
  return router.resource(`${path}/{event_type}`, (eventTypes) => {
    eventTypes.use(...use);
    eventTypes.list(
      {
        response: listJsonSchema(eventTypeJsonSchema),
        tags,
        summary: "List the event types",
        description:
          "Every event type an endpoint can name in enabled_events, in the catalog's order, all in one page.",
        use: [revalidated],
      },
      () => taggedJson(list),
    );
    eventTypes.read(
      {
        response: eventTypeJsonSchema,
        responses: { 404: { description: "No such event type (event_type_not_found)." } },
        tags,
        summary: "Get an event type",
        use: [revalidated],
      },
      ({ params }) => {
        const found = described.get(params.event_type);
        if (found === undefined) {
          throw new HttpProblem({ status: 404, code: "event_type_not_found", detail: "No such event type." });
        }
        return taggedJson(found);
      },
    );
  });
}

function describe(type: string, data: z.ZodType): EventTypeJson {
  const { $schema: _, ...schema } = z.toJSONSchema(data, {
    io: "output",
    unrepresentable: "any",
    target: "draft-2020-12",
  }) as Record<string, unknown>;
  return { object: "event_type", type, description: data.description ?? null, schema };
}
