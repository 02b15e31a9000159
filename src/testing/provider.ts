import { sign } from "../webhooks/signing/index";
import type { EventEnvelope } from "./arbitraries/webhooks";
import type { Target } from "./target";
import { type LawResponse, Transcript } from "./transcript";

/** How a fault-injecting provider spoils one delivery. */
export type DeliveryFault = "none" | "bad-signature" | "expired" | "future" | "unknown-secret";

/** Sends Standard Webhooks deliveries to a consumer, faithfully or with a fault injected. */
export interface FaultyProvider {
  /** POSTs `event` to the consumer, signed now (or spoiled per `fault`), and records the exchange. */
  deliver(event: EventEnvelope, fault?: DeliveryFault): Promise<LawResponse>;
  readonly transcript: Transcript;
}

/** Options for {@link createFaultyProvider}. */
export interface FaultyProviderOptions {
  target: Target;
  /** The consumer's delivery path, e.g. `/webhooks`. */
  path: string;
  /** The secret the consumer verifies with. */
  secret: string;
  /** A secret the consumer does not know. */
  foreignSecret?: string;
  /** The provider's clock in ms. @default Date.now */
  now?: () => number;
}

/**
 * A provider for consumer laws: real signatures, plus bad, expired, future and foreign-secret ones.
 * @example const provider = createFaultyProvider({ target, path: "/webhooks", secret });
 */
export function createFaultyProvider(
  options: FaultyProviderOptions,
  transcript = new Transcript(options.target),
): FaultyProvider {
  const now = options.now ?? Date.now;
  return {
    transcript,
    deliver(event, fault = "none") {
      const body = JSON.stringify(event);
      const seconds = Math.floor(now() / 1000);
      const timestamp = fault === "expired" ? seconds - 3600 : fault === "future" ? seconds + 3600 : seconds;
      const secret =
        fault === "unknown-secret"
          ? (options.foreignSecret ?? "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
          : options.secret;
      const headers: Record<string, string> = {
        ...sign({ id: event.id, timestamp, body, secrets: secret }),
        "content-type": "application/json",
      };
      if (fault === "bad-signature") headers["webhook-signature"] = "v1,c2lnbmF0dXJlLXRoYXQtZG9lcy1ub3QtbWF0Y2g=";
      return transcript.send({ method: "POST", path: options.path, headers, body });
    },
  };
}
