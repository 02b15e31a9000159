import type { FieldError } from "../../http/validation";

/** Why an event was retried or dead-lettered, as stored in the inbox's `lastError`. */
export type ConsumerErrorCode =
  /** The event handler threw; retried with backoff until `maxAttempts`. */
  | "handler_failed"
  /** The payload did not match the handler's zod schema; dead-lettered at once. */
  | "payload_invalid"
  /** No handler matches the event type and `unhandled` is `"dead"`. */
  | "no_handler"
  /** The attempt budget was spent by processors that died holding the lease (a crash loop). */
  | "attempts_exhausted"
  /** A stored inbox row cannot be decoded (written by an incompatible version, or by hand); thrown, never stored. */
  | "row_invalid";

/** The error record an inbox keeps beside a failed or dead event (JSON-serialisable). */
export interface ConsumerErrorRecord {
  code: ConsumerErrorCode;
  message: string;
  /** Field errors of a failed schema parse (`payload_invalid`), with RFC 6901 pointers into the payload. */
  errors?: FieldError[];
}

/**
 * An error of the webhook consumer, with a stable `code`.
 * @example if (error instanceof WebhookConsumerError && error.code === "payload_invalid") …
 */
export class WebhookConsumerError extends Error {
  readonly code: ConsumerErrorCode;
  readonly errors: FieldError[] | undefined;

  constructor(code: ConsumerErrorCode, message: string, options: { cause?: unknown; errors?: FieldError[] } = {}) {
    super(message, { cause: options.cause });
    this.name = "WebhookConsumerError";
    this.code = code;
    this.errors = options.errors;
  }

  /** The record stored in the inbox. */
  toRecord(): ConsumerErrorRecord {
    const record: ConsumerErrorRecord = { code: this.code, message: this.message };
    if (this.errors !== undefined) record.errors = this.errors;
    return record;
  }
}

/** Turns whatever a handler threw into the stored error record. */
export function errorRecord(error: unknown): ConsumerErrorRecord {
  if (error instanceof WebhookConsumerError) return error.toRecord();
  const message = error instanceof Error ? error.message : String(error);
  return { code: "handler_failed", message: message.slice(0, 2000) };
}
