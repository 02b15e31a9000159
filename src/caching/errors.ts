/** Every code a {@link CachingError} can carry. */
export type CachingErrorCode =
  | "invalid_entity_tag"
  | "invalid_date"
  | "invalid_cache_control"
  | "invalid_field_name"
  | "invalid_version";

/**
 * Thrown only for misuse of the caching helpers (a value that cannot be formatted, a bad option);
 * expected outcomes such as 304 and 412 are results, never errors.
 */
export class CachingError extends TypeError {
  readonly code: CachingErrorCode;

  constructor(code: CachingErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CachingError";
    this.code = code;
  }
}
