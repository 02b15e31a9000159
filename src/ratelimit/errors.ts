/** Codes of {@link RateLimitError}. */
export type RateLimitErrorCode =
  /** The store answered something its protocol never produces (e.g. the Redis script's reply has the wrong shape). */
  "store_reply_invalid";

/**
 * A rate limit store failed in a way the caller cannot fix by retrying the same request differently,
 * e.g. Redis answered something the script never returns. Being over quota is not an error: it is
 * `decision.allowed === false`.
 * @example if (error instanceof RateLimitError && error.code === "store_reply_invalid") …
 */
export class RateLimitError extends Error {
  readonly code: RateLimitErrorCode;

  constructor(code: RateLimitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RateLimitError";
    this.code = code;
  }
}
