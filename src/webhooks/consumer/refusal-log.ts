import { isWebhookVerificationError } from "../signing/errors";
import { isInboxEventTooLargeError } from "./event-too-large";
import { isInboxFullError } from "./inbox-full";

/** How often the default log writes a line for one kind of refusal, ms. */
export const REFUSAL_LOG_EVERY_MS = 60_000;

type Kind = "inbox_full" | "event_too_large" | "inbox_unavailable" | "not_configured";

const LINES: Record<Kind, string> = {
  inbox_full: "rest-webhooks: the webhook inbox is full; deliveries get 503 until the processor makes room",
  event_too_large:
    "rest-webhooks: a webhook event is larger than the inbox can ever hold; it got 413 (raise the inbox's bound above " +
    "the consumer's bodyLimit)",
  inbox_unavailable: "rest-webhooks: the webhook inbox could not store a delivery; it got 503",
  not_configured:
    "rest-webhooks: the webhook consumer cannot verify deliveries (its secret is not set, or the body was read " +
    "before it); they get 500 until it is fixed",
};

function kindOf(error: unknown): Kind {
  if (isInboxFullError(error)) return "inbox_full";
  if (isWebhookVerificationError(error)) return "not_configured";
  return isInboxEventTooLargeError(error) ? "event_too_large" : "inbox_unavailable";
}

/**
 * The consumer's default `onError`. A refusal (`503`: the inbox full or failing; `413`: an event it can never hold;
 * `500`: the consumer not configured to verify, a secret not set) is logged at most once per
 * {@link REFUSAL_LOG_EVERY_MS} for each kind, with how many deliveries it refused since the last line: an inbox that is down or full refuses every delivery, and a line with a stack for each, under a
 * provider's retries, would add disk and CPU to an overload. Anything else (an `onStored` that throws) is logged each
 * time.
 * @param now the consumer's clock, Unix ms.
 * @param write where lines go. @default console.error
 */
export function refusalLog(
  now: () => number,
  write: (message: string, error: unknown) => void = console.error,
): (error: unknown, request: unknown, refused: boolean) => void {
  const last = new Map<Kind, { at: number; since: number }>();
  return (error, _request, refused) => {
    if (!refused) {
      write("rest-webhooks: the webhook consumer's onStored threw", error);
      return;
    }
    const kind = kindOf(error);
    const at = now();
    const seen = last.get(kind);
    if (seen !== undefined && at - seen.at < REFUSAL_LOG_EVERY_MS && at >= seen.at) {
      seen.since++;
      return;
    }
    const more = seen === undefined || seen.since === 0 ? "" : ` (${seen.since} more refused since the last line)`;
    last.set(kind, { at, since: 0 });
    write(`${LINES[kind]}${more}`, error);
  };
}
