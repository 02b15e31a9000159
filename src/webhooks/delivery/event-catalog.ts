/**
 * A typed catalog of the events an API sends: one zod schema per `<resource>.<action>` type. From it, events are
 * built type-checked and validated, the endpoint API refuses subscriptions to types that do not exist, the OpenAPI
 * 3.1 `webhooks` object is generated, and consumers get a schema per type for typed handlers.
 */
import { z } from "zod";
import { WebhookDeliveryError } from "./errors";
import { createEvent } from "./event";
import { eventTypeSchema } from "./event-type";

/** The data schema of each event type. */
export type EventSchemas = Readonly<Record<string, z.ZodType<Record<string, unknown>>>>;

/** The envelope of an event of type `T` whose data has type `D` (the JSON body of its deliveries). */
export interface TypedWebhookEvent<T extends string, D> {
  id: string;
  type: T;
  timestamp: string;
  data: D;
}

/** Options of {@link EventCatalog.create}. */
export interface CatalogEventOptions {
  /** @default "evt_" + a random UUID without dashes */
  id?: string;
  /** Epoch ms. @default Date.now() */
  now?: number;
}

/** One event type as an OpenAPI document describes it (the shape `router.openapi` takes under `webhooks`). */
export interface WebhookDescription {
  summary: string;
  /** The JSON body: the whole envelope. */
  body: z.ZodType;
  /** The request headers every delivery carries. */
  headers: readonly { name: string; description: string }[];
}

/** What {@link defineEvents} returns. */
export interface EventCatalog<S extends EventSchemas> {
  /** Every event type, in declaration order. */
  readonly types: readonly (keyof S & string)[];
  /** Whether `type` is in the catalog. */
  has(type: string): type is keyof S & string;
  /** The zod schema of the data of `type` (what `defineEvents` was given for it); `undefined` outside the catalog. */
  data<T extends keyof S & string>(type: T): S[T];
  /**
   * Builds an event of `type`: `data` is type-checked against the type's schema, and validated at run time
   * (a mismatch throws `WebhookDeliveryError` `invalid_event` naming the field). Publish the result.
   * @example await queue.publish(events.create("order.shipped", orderJson));
   */
  create<T extends keyof S & string>(
    type: T,
    data: z.input<S[T]>,
    options?: CatalogEventOptions,
  ): TypedWebhookEvent<T, z.output<S[T]>>;
  /**
   * The zod schema of a whole envelope of `type`, for a consumer: `processor.on(type, events.envelope(type),
   * ({ event }) => event.payload.data …)` types and validates what arrives (a mismatch is dead-lettered as
   * `payload_invalid`). A type outside the catalog is a TypeError.
   */
  envelope<T extends keyof S & string>(
    type: T,
  ): z.ZodType<TypedWebhookEvent<T, z.output<S[T]>>, TypedWebhookEvent<T, z.input<S[T]>>>;
  /**
   * What the OpenAPI 3.1 `webhooks` object (§4.8.1) says of `type`: its envelope and the Standard Webhooks signature
   * headers. Pass the catalog to `router.openapi(info, { webhooks: catalog })`. A type outside the catalog is a
   * TypeError.
   */
  webhook(type: keyof S & string): WebhookDescription;
}

/** The signature headers every delivery carries (Standard Webhooks). */
const SIGNATURE_HEADERS: WebhookDescription["headers"] = [
  { name: "webhook-id", description: "The event id: deduplicate on it." },
  { name: "webhook-timestamp", description: "When it was signed, in Unix seconds: refuse it outside your tolerance." },
  {
    name: "webhook-signature",
    description: "`v1,<base64 HMAC-SHA256 of id.timestamp.body>`, space-separated while keys rotate.",
  },
];

/**
 * Declares the events an API sends, each type with the zod schema of its data.
 * @param schemas `{ "<resource>.<action>": z.object({…}) }`; every key must be a valid event type.
 * @example
 * const events = defineEvents({ "order.created": Order, "order.shipped": Order });
 * await queue.publish(events.create("order.created", order)); // a wrong shape does not compile
 */
export function defineEvents<const S extends EventSchemas>(schemas: S): EventCatalog<S> {
  if (typeof schemas !== "object" || schemas === null) throw new TypeError("defineEvents: pass { type: schema }");
  const types = Object.keys(schemas) as (keyof S & string)[];
  if (types.length === 0) throw new TypeError("defineEvents: the catalog has no event type");
  for (const type of types) {
    if (!eventTypeSchema.safeParse(type).success) {
      throw new TypeError(`defineEvents: "${type}" is not an event type (<resource>.<action>, lower case)`);
    }
    if (typeof schemas[type]?.safeParse !== "function") {
      throw new TypeError(`defineEvents: the data of "${type}" must be a zod schema`);
    }
  }
  // The catalog's own types only: `schemas[type]` would find "constructor" or "toString" on Object.prototype.
  const schemaOf = (type: string): EventSchemas[string] | undefined =>
    Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  const envelopes = new Map<string, z.ZodType>();
  const envelopeOf = (type: string): z.ZodType => {
    let envelope = envelopes.get(type);
    if (envelope === undefined) {
      const data = schemaOf(type);
      if (data === undefined) {
        throw new TypeError(`defineEvents: "${type}" is not in the event catalog (${types.join(", ")}).`);
      }
      envelope = z.object({
        id: z.string().min(1),
        type: z.literal(type),
        timestamp: z.iso.datetime({ offset: true }),
        data,
      });
      envelopes.set(type, envelope);
    }
    return envelope;
  };
  return {
    types,
    has: (type): type is keyof S & string => Object.hasOwn(schemas, type),
    data: (type) => schemaOf(type) as S[typeof type],
    create(type, data, options = {}) {
      const schema = schemaOf(type);
      if (schema === undefined) {
        throw new WebhookDeliveryError("invalid_event", `"${type}" is not in the event catalog (${types.join(", ")}).`);
      }
      const parsed = schema.safeParse(data);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue === undefined || issue.path.length === 0 ? "data" : `data.${issue.path.join(".")}`;
        throw new WebhookDeliveryError("invalid_event", `Invalid ${type} event: ${where}: ${issue?.message}`, {
          cause: parsed.error,
        });
      }
      const event = createEvent({ type, data: parsed.data, ...options });
      return event as TypedWebhookEvent<typeof type, z.output<S[typeof type]>>;
    },
    envelope: (type) => envelopeOf(type) as never,
    webhook: (type) => ({ summary: `The ${type} event`, body: envelopeOf(type), headers: SIGNATURE_HEADERS }),
  };
}
