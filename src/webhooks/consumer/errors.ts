import type { FieldError } from "../../http/validation";
import { toWellFormed } from "../../http/well-formed";

/** Why an event was retried or dead-lettered, as stored in the inbox's `lastError`. */
export type ConsumerErrorCode =
  /** The event handler threw; retried with backoff until `maxAttempts`. */
  | "handler_failed"
  /** The event handler did not finish within the processor's `handlerTimeoutMs`; retried like a failure. */
  | "handler_timeout"
  /** The payload did not match the handler's zod schema; dead-lettered at once. */
  | "payload_invalid"
  /** No handler matches the event type and `unhandled` is `"dead"`. */
  | "no_handler"
  /** The attempt budget was spent by processors that died holding the lease (a crash loop). */
  | "attempts_exhausted"
  /**
   * A stored inbox row cannot be decoded (written by an incompatible version, or by hand): a claim dead-letters the
   * row with it, so one such row holds up no other event; `get` and `deadLetters` give such a row with it as its
   * `lastError` (naming the row and its columns), so listing goes on.
   */
  | "row_invalid"
  /** The runner's `stop()` let go of attempts still running after `stopGraceMs`; reported, never stored. */
  | "stop_timed_out";

// Every code once: the type above must list exactly these (a stored record's decoder checks against them).
const CODES: Record<ConsumerErrorCode, true> = {
  handler_failed: true,
  handler_timeout: true,
  payload_invalid: true,
  no_handler: true,
  attempts_exhausted: true,
  row_invalid: true,
  stop_timed_out: true,
};

/** The codes a stored error record may carry (every {@link ConsumerErrorCode} but `stop_timed_out`, only reported). */
export const STORED_ERROR_CODES = Object.keys(CODES).filter((code) => code !== "stop_timed_out") as [
  ConsumerErrorCode,
  ...ConsumerErrorCode[],
];

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

  /** The record stored in the inbox: its text cut to 2000 UTF-16 units and made storable (see {@link errorRecord}). */
  toRecord(): ConsumerErrorRecord {
    const record: ConsumerErrorRecord = { code: this.code, message: storable(this.message) };
    if (this.errors !== undefined) {
      record.errors = this.errors.map((field) => ({
        pointer: storable(field.pointer),
        in: field.in,
        code: storable(field.code),
        message: storable(field.message),
      }));
    }
    return record;
  }
}

const MAX_MESSAGE = 2000;

/**
 * `text` cut to {@link MAX_MESSAGE} units without splitting a surrogate pair, with U+0000 and lone surrogates as
 * U+FFFD: the PostgreSQL inbox keeps the record as jsonb, which refuses both (I-JSON, RFC 7493 §2.1), and every
 * inbox must record the same text.
 */
function storable(text: string): string {
  let end = Math.min(text.length, MAX_MESSAGE);
  // A high surrogate as the last unit kept would be half of a pair.
  if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
  const cut = end < text.length ? text.slice(0, end) : text;
  return toWellFormed(cut).replaceAll("\u0000", "\uFFFD");
}

function messageOf(error: unknown): string {
  try {
    return String(error instanceof Error ? error.message : error);
  } catch {
    // An object without a prototype, a throwing toString or Proxy trap: the record must still be written.
    return "A value that cannot be converted to a string was thrown.";
  }
}

/** Turns whatever a handler threw into the stored error record, the same text for every inbox. */
export function errorRecord(error: unknown): ConsumerErrorRecord {
  if (error instanceof WebhookConsumerError) return error.toRecord();
  return { code: "handler_failed", message: storable(messageOf(error)) };
}
