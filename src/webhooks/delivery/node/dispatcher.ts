import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { Agent, buildConnector, type Dispatcher as UndiciDispatcher } from "undici";
import { optionalFunction } from "../../../options/function-option";
import { nonNegativeInteger, positiveNumber } from "../../../options/number-option";
import type { AttemptResult } from "../attempt";
import { DELIVERY_DEFAULTS } from "../defaults";
import type { DeliveryRequest } from "../delivery-request";
import { parseRetryAfter } from "../retry-after";
import {
  type CompiledUrlPolicy,
  checkAddress,
  checkUrlItself,
  compileUrlPolicy,
  type HostResolver,
  normalizeHost,
  resolvedRefusalDetail,
  type UrlPolicy,
} from "../url-policy";
import {
  codedError,
  errorKindOf,
  RESPONSE_CAP_CODE,
  SSRF_BLOCKED_CODE,
  TIMEOUT_CODE,
  URL_REFUSED_CODE,
} from "./error-kind";
import { proxyConnector } from "./proxy-connector";
import { parseEgressProxy } from "./proxy-tunnel";
import { type Deadline, RequestDeadlines } from "./request-deadlines";
import { meteredConnector, RESPONSE_FRAMING_BYTES } from "./response-meter";
import { systemResolver } from "./system-resolver";

/** Options of {@link createDispatcher}. */
export interface DispatcherOptions {
  /**
   * Per-attempt time-out (connect, send, response), in ms. A status line that arrived in time decides the attempt:
   * a body still arriving at the time-out is cut short, not failed. @default 15_000
   */
  timeoutMs?: number;
  /**
   * Response body bytes read at most; past them the response is cut short (the socket is closed). The status line
   * still decides the attempt: a 2xx is delivered whatever its body's size. Heads and framing (1xx responses, chunk
   * extensions) may take 64 KiB more; a response cut off there before its status line is `response_too_large`.
   * @default 65_536
   */
  maxResponseBytes?: number;
  /** Response bytes kept for the delivery log. @default 1_024 */
  logResponseBytes?: number;
  /**
   * Addresses that may be reached; checked again on every connection after DNS (`deny` too, even for a name `allow`
   * holds), and the URL's port and denied host names before each attempt. @default public HTTPS only, any port
   */
  urlPolicy?: UrlPolicy | CompiledUrlPolicy;
  /** The resolver (inject one in tests: no real DNS). @default dns.lookup with all addresses */
  resolve?: HostResolver;
  /**
   * How long an idle keep-alive connection is kept, in ms; a shorter `Keep-Alive: timeout` from the consumer wins.
   * @default 60_000
   */
  keepAliveMs?: number;
  /** The clock a `Retry-After` date is read against, epoch ms. @default Date.now */
  now?: () => number;
  /**
   * An egress proxy every attempt goes through, as an HTTP CONNECT tunnel: `http://proxy.internal:3128`, or
   * `https://user:password@proxy.internal` (TLS to the proxy; credentials as Basic `Proxy-Authorization`). The URL
   * policy still holds: the dispatcher resolves the endpoint's name and checks its addresses itself, then asks the
   * proxy for a tunnel to the checked address, so the proxy never resolves a name; TLS to the endpoint runs over the
   * tunnel, end to end. The proxy's own address is not checked (it is yours). @default none: direct connections
   */
  proxy?: string | URL;
}

/** Options of one {@link Dispatcher.dispatch}. */
export interface DispatchOptions {
  /** Aborts the attempt (the worker's `stop()` after its grace period); the connection is closed. */
  signal?: AbortSignal | undefined;
}

/** Sends one signed attempt and reports what happened; never throws for network outcomes. */
export interface Dispatcher {
  /** Rejects (a `TypeError`, nothing sent) only for a request that cannot be framed: a header name or value RFC 9110 §5 forbids. */
  dispatch(request: DeliveryRequest, options?: DispatchOptions): Promise<AttemptResult>;
  /** Closes the keep-alive connections. */
  close(): void;
}

const since = (started: number) => Math.round(performance.now() - started);

/** The message of an attempt whose receiver sent a `100 Continue` the dispatcher did not ask for. */
export const UNREQUESTED_CONTINUE_MESSAGE =
  "The receiver sent an unrequested 100 Continue, which the HTTP client cannot read past.";

// RFC 9110 §15.2: a client MUST be able to parse a 1xx it did not expect, but undici (7.x and 8.x, client-h1.js
// onHeadersComplete) closes the connection on a 100 sent without `Expect: 100-continue`, with this error, and no
// option changes that. Inside an exchange it has no other cause, so the log names it (a known limitation).
function unrequestedContinue(error: Error): Error {
  const code = (error as { code?: unknown }).code;
  return code === "UND_ERR_SOCKET" && error.message === "bad response"
    ? codedError("UND_ERR_SOCKET", UNREQUESTED_CONTINUE_MESSAGE, error)
    : error;
}

function failure(error: unknown, started: number): AttemptResult {
  return {
    kind: "error",
    errorKind: errorKindOf(error),
    message: error instanceof Error ? error.message : String(error),
    durationMs: since(started),
  };
}

// Fields the dispatcher frames itself (RFC 9112 §3.2 Host, §6 message body length, §9.6 connection management), and
// those that would change the framing: undici refuses each of them, so the caller's are dropped, not fatal.
const OWN = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "expect"]);

/** The request's header fields as a flat [name, value, …] list, the caller's record left unchanged. */
function flatHeaders(fields: Readonly<Record<string, string>>): string[] {
  const flat: string[] = [];
  for (const name in fields) {
    const value = fields[name];
    if (value === undefined || OWN.has(name.toLowerCase())) continue;
    flat.push(name, value);
  }
  return flat;
}

/**
 * The addresses of `hostname` a connection may use (those of `family`, 0 for any), or a coded error: none, or any of
 * them forbidden. The resolver is injected code, so its answer is checked for the shape node:dns gives.
 */
function admitted(hostname: string, answer: unknown, family: number, policy: CompiledUrlPolicy): LookupAddress[] {
  if (!Array.isArray(answer)) {
    throw codedError(SSRF_BLOCKED_CODE, `${hostname}: the resolver answered no list of addresses.`);
  }
  const usable: LookupAddress[] = [];
  for (const entry of answer as unknown[]) {
    const { address, family: entryFamily } = (entry ?? {}) as { address?: unknown; family?: unknown };
    if (typeof address !== "string" || typeof entryFamily !== "number") {
      throw codedError(
        SSRF_BLOCKED_CODE,
        `${hostname}: the resolver answered ${String(entry)}, not { address, family }.`,
      );
    }
    if (family === 0 || entryFamily === family) usable.push({ address, family: entryFamily });
  }
  if (usable.length === 0) throw codedError("ENOTFOUND", `No address for ${hostname}`);
  // A name `allow` holds skips the class check, never `deny`: a name can be pointed at a denied address later.
  const nameAllowed = policy.hosts.has(normalizeHost(hostname));
  for (const entry of usable) {
    const refusal = checkAddress(entry.address, policy, nameAllowed);
    // The message is the attempt's log line, which the endpoint's owner reads: the class, never the address.
    if (refusal !== undefined) {
      throw codedError(SSRF_BLOCKED_CODE, resolvedRefusalDetail(hostname, refusal.addressClass));
    }
  }
  return usable;
}

/** node:dns `family` as a number: 4, 6, or 0 for any (`"IPv4"` and `"IPv6"` are accepted as node:dns does). */
const familyNumber = (family: number | "IPv4" | "IPv6" | undefined): number =>
  family === "IPv4" ? 4 : family === "IPv6" ? 6 : (family ?? 0);

/** The error of a resolver that failed with a reason that is no object (a string, `undefined`). */
function resolverFailure(hostname: string, reason: unknown): NodeJS.ErrnoException {
  return new Error(`${hostname}: the resolver failed with ${String(reason)}.`);
}

/**
 * A `net` lookup that resolves with the injected resolver and refuses the connection when any address is forbidden,
 * so a name that resolves (or later re-resolves) to 127.0.0.1 is never reached. Checking at connect time closes the
 * DNS-rebinding gap between a registration check and the send.
 */
function guardedLookup(resolve: HostResolver, policy: CompiledUrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const asked = typeof options === "object" && options !== null ? options : {};
    // Whatever the resolver throws or answers ends in the callback: a throw left in this promise chain would be an
    // unhandled rejection, which ends the worker's process, and the attempt would never settle.
    new Promise<unknown>((answer) => answer(resolve(hostname)))
      .then((answer) => admitted(hostname, answer, familyNumber(asked.family), policy))
      .then(
        (addresses) => {
          if (asked.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
          const first = addresses[0] as LookupAddress;
          callback(null, first.address, first.family);
        },
        // A reason that is no object (`Promise.reject()`) must still read as an error: net takes a falsy one for
        // success, and read the addresses it was not given.
        (error: unknown) =>
          callback(
            typeof error === "object" && error !== null ? (error as Error) : resolverFailure(hostname, error),
            "",
            4,
          ),
      );
  };
}

// What every exchange of one dispatcher shares.
interface Limits {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly logBytes: number;
  readonly now: () => number;
  readonly deadlines: RequestDeadlines;
}

/**
 * One attempt in flight, as undici's handler of it. The status line decides the attempt (RFC 9110 §15: the status
 * code is the outcome); the body is only read, up to the caps, for the log and to keep the connection reusable. So
 * the end of the body, a body cut short by the consumer, the byte cap and the time-out once the status arrived all
 * settle the same way.
 */
class Exchange implements UndiciDispatcher.DispatchHandler {
  #settled = false;
  #controller: UndiciDispatcher.DispatchController | undefined;
  #deadline: Deadline | undefined;
  #signal: AbortSignal | undefined;
  /** 0 until a final status line arrives. */
  #status = 0;
  #retryAfter: string | undefined;
  /** The first chunks of the body, up to the log's bytes. */
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(
    private readonly limits: Limits,
    private readonly started: number,
    private readonly resolve: (result: AttemptResult) => void,
    private readonly reject: (error: TypeError) => void,
    signal: AbortSignal | undefined,
  ) {
    this.#deadline = limits.deadlines.start(this.#timedOut);
    if (signal !== undefined) {
      this.#signal = signal;
      signal.addEventListener("abort", this.#aborted, { once: true });
    }
  }

  onRequestStart(controller: UndiciDispatcher.DispatchController): void {
    this.#controller = controller;
    // Timed out or aborted while connecting: the connection is not used.
    if (this.#settled) controller.abort(codedError(TIMEOUT_CODE, "The attempt ended before it was sent."));
  }

  onResponseStart(_controller: unknown, statusCode: number, headers: Record<string, string | string[] | undefined>) {
    // RFC 9110 §15.2: an interim (1xx) response is not the answer.
    if (statusCode < 200) return;
    this.#status = statusCode;
    const header = headers["retry-after"];
    this.#retryAfter = Array.isArray(header) ? header[0] : header;
  }

  onResponseData(controller: UndiciDispatcher.DispatchController, chunk: Buffer): void {
    if (this.#size < this.limits.logBytes) this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#size > this.limits.maxBytes) {
      // Read no more than the cap: the answer is known, the rest of the body is not wanted.
      this.#answered();
      controller.abort(codedError(RESPONSE_CAP_CODE, "Response past the byte cap."));
    }
  }

  onResponseEnd(): void {
    this.#answered();
  }

  onResponseError(_controller: unknown, error: Error): void {
    // A body cut short (reset, the cap, the time-out): the status already decided.
    if (this.#status !== 0) this.#answered();
    else if ((error as { code?: unknown }).code === "UND_ERR_INVALID_ARG") {
      // A request undici cannot frame (a header name that is not a token, RFC 9110 §5.1): a caller's error, not
      // the endpoint's, so it is thrown rather than logged as an attempt.
      if (this.#finish()) this.reject(new TypeError(error.message, { cause: error }));
    } else if (this.#finish()) this.resolve(failure(unrequestedContinue(error), this.started));
  }

  #answered(): void {
    if (!this.#finish()) return;
    const text = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const result: AttemptResult = {
      kind: "response",
      status: this.#status,
      retryAfterMs: this.#retryAfter === undefined ? undefined : parseRetryAfter(this.#retryAfter, this.limits.now()),
      body: text.toString("utf8", 0, this.limits.logBytes),
      durationMs: since(this.started),
    };
    this.resolve(result);
  }

  /** Marks the exchange settled; false when it already was. */
  #finish(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    if (this.#deadline !== undefined) this.limits.deadlines.cancel(this.#deadline);
    this.#signal?.removeEventListener("abort", this.#aborted);
    return true;
  }

  readonly #timedOut = (): void => {
    this.#deadline = undefined;
    if (this.#status !== 0) {
      this.#answered();
      this.#controller?.abort(codedError(TIMEOUT_CODE, "Body still arriving at the time-out."));
      return;
    }
    const error = codedError(TIMEOUT_CODE, `No response within ${this.limits.timeoutMs} ms.`);
    if (this.#finish()) this.resolve(failure(error, this.started));
    this.#controller?.abort(error);
  };

  readonly #aborted = (): void => {
    const reason = this.#signal?.reason ?? new Error("Aborted.");
    if (this.#finish()) this.resolve(failure(reason, this.started));
    this.#controller?.abort(reason);
  };
}

/**
 * Creates the HTTP dispatcher on undici's `Agent`: POST with keep-alive, a time-out per attempt, a cap on response
 * bytes, no redirects followed, and the SSRF policy applied at connect time (the connector's `lookup`).
 * @example const dispatcher = createDispatcher({ timeoutMs: 5_000 });
 */
export function createDispatcher(options: DispatcherOptions = {}): Dispatcher {
  // Called on every connection or Retry-After date: anything else failed every attempt, retried until exhausted.
  for (const name of ["resolve", "now"] as const) optionalFunction("createDispatcher", name, options[name]);
  const timeoutMs = positiveNumber(
    "createDispatcher",
    "timeoutMs",
    options.timeoutMs ?? DELIVERY_DEFAULTS.timeoutMs,
    "milliseconds",
  );
  const keepAliveMs = positiveNumber("createDispatcher", "keepAliveMs", options.keepAliveMs ?? 60_000, "milliseconds");
  const limits: Limits = {
    timeoutMs,
    maxBytes: nonNegativeInteger(
      "createDispatcher",
      "maxResponseBytes",
      options.maxResponseBytes ?? DELIVERY_DEFAULTS.maxResponseBytes,
      "bytes",
    ),
    logBytes: nonNegativeInteger(
      "createDispatcher",
      "logResponseBytes",
      options.logResponseBytes ?? DELIVERY_DEFAULTS.logResponseBytes,
      "bytes",
    ),
    now: options.now ?? Date.now,
    deadlines: new RequestDeadlines(timeoutMs),
  };
  const policy = compileUrlPolicy(options.urlPolicy);
  const lookup = guardedLookup(options.resolve ?? systemResolver, policy);
  const proxy = options.proxy === undefined ? undefined : parseEgressProxy(options.proxy, "createDispatcher: proxy");
  // The connector passes `lookup` on to net.connect / tls.connect: every new connection is checked after DNS.
  // Through a proxy, the tunnel is asked for the address `lookup` let through.
  const connect =
    proxy === undefined ? buildConnector({ lookup, timeout: timeoutMs }) : proxyConnector(proxy, lookup, timeoutMs);
  const agent = new Agent({
    // The handler counts body bytes only; the meter bounds the rest (1xx responses, chunk framing) on the socket.
    connect: meteredConnector(connect, limits.maxBytes + RESPONSE_FRAMING_BYTES),
    // The attempt's own deadline covers headers and body; undici's idle timers would only add a second clock.
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: keepAliveMs,
    keepAliveMaxTimeout: keepAliveMs,
  });

  // Parsed targets by URL: endpoints are few and their URLs repeat on every attempt.
  type Target = { origin: string; path: string } | { refusal: Error };
  const targets = new Map<string, Target>();
  function targetOf(href: string): Target {
    let target = targets.get(href);
    if (target !== undefined) return target;
    target = parseTarget(href);
    if (targets.size >= 1_000) targets.clear();
    targets.set(href, target);
    return target;
  }
  function parseTarget(href: string): Target {
    let url: URL;
    try {
      url = new URL(href);
    } catch (error) {
      return { refusal: error as Error };
    }
    // The URL itself refused (causes that need no network work and cannot pass until the policy or the URL
    // changes), by the checks registration runs: url_refused, which disables the endpoint. The policy may have
    // changed since registration, or the URL been stored around it. What a name resolves to is checked in lookup
    // (ssrf_blocked).
    const refusal = checkUrlItself(url, policy);
    if (refusal !== undefined) return { refusal: codedError(URL_REFUSED_CODE, refusal.detail) };
    // RFC 9112 §3.2: undici sends Host as the origin's authority.
    return { origin: url.origin, path: `${url.pathname}${url.search}` };
  }

  function dispatch(delivery: DeliveryRequest, dispatchOptions?: DispatchOptions): Promise<AttemptResult> {
    const started = performance.now();
    const target = targetOf(delivery.url);
    if ("refusal" in target) return Promise.resolve(failure(target.refusal, started));
    const signal = dispatchOptions?.signal;
    if (signal?.aborted) return Promise.resolve(failure(signal.reason, started));
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(limits, started, resolve, reject, signal);
      agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: "POST",
          headers: flatHeaders(delivery.headers),
          body: delivery.body,
        },
        exchange,
      );
    });
  }

  return {
    dispatch,
    close() {
      limits.deadlines.clear();
      agent.destroy().catch(() => undefined);
    },
  };
}
