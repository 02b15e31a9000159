/** Codes of {@link RateLimitError}. */
export type RateLimitErrorCode = "store_reply_invalid";

/**
 * A rate limit store failed in a way the caller cannot fix by retrying the same request differently,
 * e.g. Redis answered something the script never returns.
 */
export class RateLimitError extends Error {
  readonly code: RateLimitErrorCode;

  constructor(code: RateLimitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RateLimitError";
    this.code = code;
  }
}
