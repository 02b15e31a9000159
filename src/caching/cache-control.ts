/**
 * The Cache-Control directives of RFC 9111 §5.2, plus `immutable` (RFC 8246) and `stale-while-revalidate` /
 * `stale-if-error` (RFC 5861). Delta-seconds are non-negative integers, at most 2147483648 (§1.2.2).
 */
export interface CacheControl {
  /** Request and response (§5.2.1.1, §5.2.2.1): freshness lifetime in seconds. */
  maxAge?: number;
  /** Response (§5.2.2.10): `max-age` for shared caches. */
  sMaxage?: number;
  /** Request (§5.2.1.2): accept a stale response, up to this many seconds stale (`true`: any staleness). */
  maxStale?: number | true;
  /** Request (§5.2.1.3): want a response still fresh for at least this many seconds. */
  minFresh?: number;
  /**
   * Request and response (§5.2.1.4, §5.2.2.4): revalidate before reuse; in a response, a list of field names
   * limits that to those fields (lower-case).
   */
  noCache?: true | readonly string[];
  /** Request and response (§5.2.1.5, §5.2.2.5): do not store. */
  noStore?: boolean;
  /** Request and response (§5.2.1.6, §5.2.2.6): do not transform the content. */
  noTransform?: boolean;
  /** Request (§5.2.1.7): answer from a cache or with 504. */
  onlyIfCached?: boolean;
  /** Response (§5.2.2.2): never serve stale without revalidation. */
  mustRevalidate?: boolean;
  /** Response (§5.2.2.3): store only when the status code's caching semantics are understood. */
  mustUnderstand?: boolean;
  /** Response (§5.2.2.7): shared caches must not store it; a list limits that to those fields (lower-case). */
  private?: true | readonly string[];
  /** Response (§5.2.2.8): `must-revalidate` for shared caches. */
  proxyRevalidate?: boolean;
  /** Response (§5.2.2.9): storable even when it would not otherwise be. */
  public?: boolean;
  /** Response (RFC 8246): will not change while fresh; skip revalidation on reload. */
  immutable?: boolean;
  /** Response (RFC 5861 §3): may be served stale this many seconds while revalidating in the background. */
  staleWhileRevalidate?: number;
  /** Request and response (RFC 5861 §4): may be served stale this many seconds when revalidation errors. */
  staleIfError?: number;
  /** Unrecognised directives (§5.2.3), lower-case names mapped to their argument or `true`. */
  extensions?: Readonly<Record<string, string | true>>;
}

/** Directives meaningful in a response. */
export type ResponseCacheControl = Omit<CacheControl, "maxStale" | "minFresh" | "onlyIfCached">;

/** Directives meaningful in a request. */
export type RequestCacheControl = Pick<
  CacheControl,
  "maxAge" | "maxStale" | "minFresh" | "noStore" | "noTransform" | "onlyIfCached" | "staleIfError" | "extensions"
> & { noCache?: true };

/** §1.2.2: the value a recipient uses for delta-seconds too large to represent. */
export const DELTA_SECONDS_MAX = 2_147_483_648;

/** Every directive name RFC 9111 §5.2 defines, plus `immutable` (RFC 8246) and the RFC 5861 extensions. */
export const CACHE_CONTROL_DIRECTIVES = [
  "max-age",
  "s-maxage",
  "max-stale",
  "min-fresh",
  "no-cache",
  "no-store",
  "no-transform",
  "only-if-cached",
  "must-revalidate",
  "must-understand",
  "private",
  "proxy-revalidate",
  "public",
  "immutable",
  "stale-while-revalidate",
  "stale-if-error",
] as const;
