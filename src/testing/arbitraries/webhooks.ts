import fc from "fast-check";
import { sign } from "../../webhooks/signing/index";

/** A webhook event envelope: `<resource>.<action>` type, unique id, ISO timestamp, JSON data. */
export interface EventEnvelope {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

const resource = fc.constantFrom("user", "order", "invoice", "item", "customer_profile");
const action = fc.constantFrom("created", "updated", "deleted", "shipped", "cancelled", "paid");

/** Event envelopes with distinct-looking ids, dotted types and JSON payloads. */
export function eventEnvelope(): fc.Arbitrary<EventEnvelope> {
  return fc.record({
    id: fc.uuid().map((uuid) => `evt_${uuid.replaceAll("-", "")}`),
    type: fc.tuple(resource, action).map(([r, a]) => `${r}.${a}`),
    timestamp: fc
      .date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2030-01-01T00:00:00Z"), noInvalidDate: true })
      .map((d) => d.toISOString()),
    data: fc.dictionary(
      fc.constantFrom("id", "status", "total", "name", "note"),
      fc.oneof(fc.string({ maxLength: 16 }), fc.integer(), fc.boolean()),
      { maxKeys: 4 },
    ),
  });
}

/** The ways a signed delivery can be built; only `valid` and `rotated` verify. */
export type SignedKind =
  | "valid"
  | "rotated"
  | "tampered-body"
  | "tampered-id"
  | "tampered-timestamp"
  | "tampered-signature"
  | "expired"
  | "future"
  | "unknown-secret";

/** A Standard Webhooks delivery: body bytes, headers, and whether a correct verifier accepts it. */
export interface SignedWebhook {
  kind: SignedKind;
  event: EventEnvelope;
  body: string;
  headers: Record<string, string>;
  shouldVerify: boolean;
}

/** Options for {@link signedWebhook}. */
export interface SignedWebhookOptions {
  /** The secrets the consumer trusts now; the first signs `valid` deliveries. */
  secrets: readonly string[];
  /** A secret the consumer does not know (signs `unknown-secret` deliveries). */
  foreignSecret: string;
  /**
   * The consumer's clock, in ms. `valid` deliveries verify until `toleranceSeconds` after it; `expired` and
   * `future` ones are 600 s (10 minutes) beyond the tolerance, so they keep their label while the
   * tests run on.
   * @default Date.now() when the arbitrary is built
   */
  now?: number;
  /** The consumer's tolerance in seconds, both ways. @default 300 */
  toleranceSeconds?: number;
  /** Which kinds to generate. @default all */
  kinds?: readonly SignedKind[];
}

/**
 * How far beyond the tolerance `expired` and `future` deliveries are signed: a `future` one signed just past
 * it would verify a second later (`now` is fixed when the arbitrary is built), and shrinking goes to the edge.
 */
const LABEL_MARGIN_SECONDS = 600;

function flipOne(text: string, index: number): string {
  const i = index % text.length;
  const code = text.charCodeAt(i);
  // Stay printable and inside the same character class where possible, so only the value changes.
  const replacement = code === 0x41 ? "B" : code === 0x30 ? "1" : "A";
  return text.slice(0, i) + replacement + text.slice(i + 1);
}

/**
 * Signed deliveries for a consumer that trusts `secrets`: valid ones, ones signed with a rotated
 * (second) secret, and ones tampered, expired, from the future or signed with an unknown secret.
 */
export function signedWebhook(options: SignedWebhookOptions): fc.Arbitrary<SignedWebhook> {
  const now = options.now ?? Date.now();
  const tolerance = options.toleranceSeconds ?? 300;
  const kinds: readonly SignedKind[] = options.kinds ?? [
    "valid",
    "rotated",
    "tampered-body",
    "tampered-id",
    "tampered-timestamp",
    "tampered-signature",
    "expired",
    "future",
    "unknown-secret",
  ];
  const nowSeconds = Math.floor(now / 1000);
  return fc
    .tuple(eventEnvelope(), fc.constantFrom(...kinds), fc.nat(), fc.integer({ min: 1, max: 86_400 }))
    .map(([event, kind, index, drift]) => {
      const body = JSON.stringify(event);
      const secret =
        kind === "unknown-secret"
          ? options.foreignSecret
          : kind === "rotated"
            ? (options.secrets[1] ?? options.secrets[0])
            : options.secrets[0];
      if (secret === undefined) throw new TypeError("signedWebhook needs at least one secret");
      const beyond = tolerance + LABEL_MARGIN_SECONDS + drift;
      const timestamp = kind === "expired" ? nowSeconds - beyond : kind === "future" ? nowSeconds + beyond : nowSeconds;
      const headers: Record<string, string> = { ...sign({ id: event.id, timestamp, body, secrets: secret }) };
      headers["content-type"] = "application/json";
      let sentBody = body;
      if (kind === "tampered-body") sentBody = flipOne(body, index);
      if (kind === "tampered-id") headers["webhook-id"] = flipOne(event.id, index);
      if (kind === "tampered-timestamp") headers["webhook-timestamp"] = String(timestamp - 1 - (index % 60));
      if (kind === "tampered-signature") {
        const signature = headers["webhook-signature"] as string;
        headers["webhook-signature"] = `v1,${flipOne(signature.slice(3), index)}`;
      }
      return { kind, event, body: sentBody, headers, shouldVerify: kind === "valid" || kind === "rotated" };
    });
}
