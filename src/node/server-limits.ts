import type { AdapterOptions } from "../http/adapter-options";
import { positiveNumber } from "../options/number-option";
import { timerDelay } from "../options/timer-delay";

/**
 * How long node:http waits on a client, and how long a refused body is drained: every value in one table
 * ({@link DEFAULT_SERVER_LIMITS}), each overridable through `limits` of `createServer` (and, for the lingering
 * close, of `adapt`). Where a response is still possible the client gets a 408 problem before the close.
 */
export interface ServerLimits {
  /**
   * An idle keep-alive connection (a response sent, no next request begun) is closed after this long
   * (node's `keepAliveTimeout`).
   * @default 5_000
   */
  idleMs: number;
  /**
   * A connection must complete a request's header section this long after it opens or after its previous
   * response: a connection that sends nothing, or only a request line, gets 408 and is closed
   * (node's `headersTimeout`).
   * @default 10_000
   */
  headersMs: number;
  /**
   * The whole request, body included, must arrive within this long: a body that never ends gets 408
   * (node's `requestTimeout`). At least `headersMs`.
   * @default 30_000
   */
  requestMs: number;
  /**
   * How often node looks for connections past `headersMs` or `requestMs` (node's `connectionsCheckingInterval`):
   * the longest a late connection outlives its limit.
   * @default 1_000
   */
  checkIntervalMs: number;
  /**
   * After a 413, the rest of the body is read and discarded for up to this long before the connection closes, so
   * a client still sending reads the 413 instead of a reset (RFC 9112 §9.6, "lingering close").
   * @default 5_000
   */
  lingerMs: number;
  /**
   * …and for up to this many bytes, whichever comes first.
   * @default 67_108_864 (64 MiB)
   */
  lingerBytes: number;
}

/**
 * The default {@link ServerLimits}, and why: 5 s idle is node's own keep-alive default (a client reuses a connection
 * within it); 10 s for headers is ample for any real client, where node's 60 s lets a silent connection sit; 30 s
 * for a whole request covers a 1 MiB body at ~35 kB/s, where node's 300 s holds a socket for a body that never
 * ends; 1 s checks keep those limits within a second; 5 s / 64 MiB of lingering lets a client finish a large upload
 * on a slow link and read the 413, and bounds the work a refused client can ask for.
 */
export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = Object.freeze({
  idleMs: 5_000,
  headersMs: 10_000,
  requestMs: 30_000,
  checkIntervalMs: 1_000,
  lingerMs: 5_000,
  lingerBytes: 64 * 1024 * 1024,
});

/** Options of the node:http adapter: the options both adapters take, and the connection limits. */
export interface NodeAdapterOptions extends AdapterOptions {
  /** Overrides of {@link DEFAULT_SERVER_LIMITS}, member by member. */
  limits?: Partial<ServerLimits>;
}

/**
 * A duration as node can wait it: whole milliseconds (node:http refuses a fractional `headersTimeout`, `requestTimeout`
 * or `connectionsCheckingInterval` with a RangeError), at most 2^31 - 1, the longest a node timer waits (a longer
 * `connectionsCheckingInterval` or `lingerMs` timer fires every millisecond, or at once).
 */
const waitable = (ms: number) => timerDelay(Math.ceil(ms));

/**
 * The defaults with `overrides` applied; a value that is not a positive number is misuse (`TypeError`). A duration is
 * rounded up to whole milliseconds and cut to what a timer can wait (about 24.8 days).
 */
export function serverLimits(overrides: Partial<ServerLimits> = {}): ServerLimits {
  const limits = { ...DEFAULT_SERVER_LIMITS };
  for (const name of Object.keys(DEFAULT_SERVER_LIMITS) as (keyof ServerLimits)[]) {
    const value = overrides[name];
    if (value === undefined) continue;
    const duration = name.endsWith("Ms");
    const checked = positiveNumber("node adapter", `limits.${name}`, value, duration ? "milliseconds" : "bytes");
    limits[name] = duration ? waitable(checked) : checked;
  }
  if (limits.headersMs > limits.requestMs) {
    throw new TypeError(
      `limits.headersMs (${limits.headersMs}) must not exceed limits.requestMs (${limits.requestMs}).`,
    );
  }
  return limits;
}
