import { HttpProblem } from "../../http/problem";
import { isErrorOf } from "../same-error";

/** Every stable `code` a {@link WebhookVerificationError} can carry. */
export const VERIFICATION_ERROR_CODES = [
  "missing_header",
  "malformed_header",
  "timestamp_too_old",
  "timestamp_in_future",
  "no_matching_signature",
  "body_not_raw",
  "secret_invalid",
  "payload_invalid",
] as const;

/** The stable codes of a failed verification; tests and handlers branch on these, never on messages. */
export type VerificationErrorCode = (typeof VERIFICATION_ERROR_CODES)[number];

/** Options beside the code and message. */
export interface VerificationErrorOptions {
  /** Name of the scheme that was verifying (e.g. `standard-webhooks`). */
  scheme?: string | undefined;
  /** The underlying error (e.g. the zod error for `payload_invalid`). */
  cause?: unknown;
}

// One status for every signature failure the sender can cause: 400. Not 401, which promises a WWW-Authenticate
// challenge (RFC 9110 §15.5.2) a webhook signature does not have; providers retry any non-2xx anyway. Consumer
// misconfiguration (body_not_raw, secret_invalid) is a 500 so the provider retries once the consumer is fixed,
// and its detail never reaches the sender.
const STATUS: Record<VerificationErrorCode, number> = {
  missing_header: 400,
  malformed_header: 400,
  timestamp_too_old: 400,
  timestamp_in_future: 400,
  no_matching_signature: 400,
  body_not_raw: 500,
  secret_invalid: 500,
  payload_invalid: 422,
};

const PUBLIC_DETAIL: Record<VerificationErrorCode, string> = {
  missing_header: "A webhook signature header is missing.",
  malformed_header: "A webhook signature header is malformed.",
  timestamp_too_old: "The webhook timestamp is outside the accepted tolerance (too old).",
  timestamp_in_future: "The webhook timestamp is outside the accepted tolerance (in the future).",
  no_matching_signature: "No webhook signature matched.",
  body_not_raw: "The webhook could not be verified.",
  secret_invalid: "The webhook could not be verified.",
  payload_invalid: "The webhook payload is not JSON, or not the event this endpoint expects.",
};

/**
 * The one error of webhook verification: a stable `code` and a message that tells the developer what to fix.
 * `verify` returns it inside `{ ok: false, error }`; it is never thrown by verification.
 *
 * @example if (!result.ok && result.error.code === "timestamp_too_old") log.warn(result.error.message)
 */
export class WebhookVerificationError extends Error {
  readonly code: VerificationErrorCode;
  readonly scheme: string | undefined;

  constructor(code: VerificationErrorCode, message: string, options: VerificationErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "WebhookVerificationError";
    this.code = code;
    this.scheme = options.scheme;
  }

  /** Suggested HTTP status: 4xx for the sender's failures, 500 for consumer misconfiguration. */
  get status(): number {
    return STATUS[this.code];
  }

  /**
   * The failure as an RFC 9457 problem for the sender. The detail is generic on purpose: the full
   * message names secrets and causes, which belong in the consumer's logs, not in the response.
   */
  toProblem(): HttpProblem {
    return new HttpProblem({
      status: this.status,
      code: `webhook_${this.code}`,
      detail: PUBLIC_DETAIL[this.code],
      cause: this,
    });
  }
}

/** Whether `value` is a {@link WebhookVerificationError} (also across duplicate copies of this package). */
export function isWebhookVerificationError(value: unknown): value is WebhookVerificationError {
  return isErrorOf(value, WebhookVerificationError, "WebhookVerificationError", (error) =>
    (VERIFICATION_ERROR_CODES as readonly unknown[]).includes(error.code),
  );
}
