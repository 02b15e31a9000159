/**
 * HTTP caching and conditional requests: entity tags and HTTP-dates (RFC 9110 §8.8, §5.6.7), precondition
 * evaluation in the order of RFC 9110 §13.2.2, Cache-Control (RFC 9111 §5.2), Vary, Last-Modified, and a
 * {@link conditional} handler wrapper that turns GETs into 304s and stale writes into 412s.
 * @module
 */
export type { CacheControl, RequestCacheControl, ResponseCacheControl } from "./cache-control";
export { CACHE_CONTROL_DIRECTIVES, DELTA_SECONDS_MAX } from "./cache-control";
export { formatCacheControl } from "./cache-control-format";
export { parseCacheControl, parseDeltaSeconds } from "./cache-control-parse";
export { type ConditionalOptions, conditional } from "./conditional-handler";
export {
  type EntityTag,
  type EntityTagList,
  formatEntityTag,
  formatEntityTagList,
  parseEntityTag,
  parseEntityTagList,
  strongCompare,
  weakCompare,
} from "./entity-tag";
export { CachingError, type CachingErrorCode } from "./errors";
export {
  type EtagFromBodyOptions,
  etagFromBody,
  etagFromTime,
  etagFromVersion,
  type VersionTagOptions,
} from "./etag-generate";
export { formatHttpDate, type ParseHttpDateOptions, parseHttpDate } from "./http-date";
export { evaluateIfRange, type IfRangeOptions } from "./if-range";
export { formatLastModified, settledLastModified } from "./last-modified";
export { notModifiedHeaders } from "./not-modified";
export {
  type ConditionalRequest,
  type EvaluateOptions,
  evaluatePreconditions,
  type FailedPrecondition,
  isFresh,
  type PreconditionResult,
  type Validators,
} from "./preconditions";
export { preconditionProblem, preconditionResponse } from "./responses";
export { mergeVary, parseVary } from "./vary";
