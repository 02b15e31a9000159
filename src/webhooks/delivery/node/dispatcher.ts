import type { LookupAddress } from "node:dns";
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { AttemptResult } from "../attempt";
import { DELIVERY_DEFAULTS } from "../defaults";
import type { DeliveryRequest } from "../delivery-request";
import { parseIp } from "../ip-address";
import { parseRetryAfter } from "../retry-after";
import {
  bareHost,
  type CompiledUrlPolicy,
  checkAddress,
  compileUrlPolicy,
  type HostResolver,
  normalizeHost,
  type UrlPolicy,
} from "../url-policy";
import { errorKindOf, SSRF_BLOCKED_CODE, TIMEOUT_CODE } from "./error-kind";
import { type Deadline, RequestDeadlines } from "./request-deadlines";
import { systemResolver } from "./system-resolver";

/** Options of {@link createDispatcher}. */
export interface DispatcherOptions {
  /**
   * Per-attempt time-out (connect, send, response), in ms. A status line that arrived in time decides the attempt:
   * a body still arriving at the time-out is cut short, not failed. @default 15_000
   */
  timeoutMs?: number;
  /**
   * Response bytes read at most; past them the response is cut short (the socket is closed). The status line still
   * decides the attempt: a 2xx is delivered whatever its body's size. @default 65_536
   */
  maxResponseBytes?: number;
  /** Response bytes kept for the delivery log. @default 1_024 */
  logResponseBytes?: number;
  /** Addresses that may be reached; checked again on every connection after DNS. @default public HTTPS only */
  urlPolicy?: UrlPolicy | CompiledUrlPolicy;
  /** The resolver (inject one in tests: no real DNS). @default dns.lookup with all addresses */
  resolve?: HostResolver;
  /** Idle keep-alive sockets kept per origin. @default 256 */
  maxFreeSockets?: number;
  /** The clock a `Retry-After` date is read against, epoch ms. @default Date.now */
  now?: () => number;
}

/** Options of one {@link Dispatcher.dispatch}. */
export interface DispatchOptions {
  /** Aborts the attempt (the worker's `stop()` after its grace period); the connection is closed. */
  signal?: AbortSignal | undefined;
}

/** Sends one signed attempt and reports what happened; never throws for network outcomes. */
export interface Dispatcher {
  dispatch(request: DeliveryRequest, options?: DispatchOptions): Promise<AttemptResult>;
  /** Closes the keep-alive sockets. */
  close(): void;
}

// One attempt in flight.
interface Exchange {
  settled: boolean;
  readonly resolve: (result: AttemptResult) => void;
  readonly started: number;
  readonly req: ClientRequest;
  deadline: Deadline | undefined;
  res: IncomingMessage | undefined;
  /** 0 until the status line arrives; from then on the status decides the attempt. */
  status: number;
  retryAfter: string | undefined;
  /** The first chunks of the body, up to the log's bytes. */
  readonly chunks: Buffer[];
  size: number;
}

function settle(exchange: Exchange, deadlines: RequestDeadlines, result: AttemptResult): void {
  if (exchange.settled) return;
  exchange.settled = true;
  if (exchange.deadline !== undefined) deadlines.cancel(exchange.deadline);
  exchange.resolve(result);
}

const since = (started: number) => Math.round(performance.now() - started);

function failure(error: unknown, started: number): AttemptResult {
  return {
    kind: "error",
    errorKind: errorKindOf(error),
    message: error instanceof Error ? error.message : String(error),
    durationMs: since(started),
  };
}

// The usual answer is one small chunk: decoded as it is, without a copy.
function logText(chunks: readonly Buffer[], logBytes: number): string {
  const only = chunks.length === 1 ? chunks[0] : undefined;
  return (only ?? Buffer.concat(chunks)).toString("utf8", 0, logBytes);
}

// Fields the dispatcher sets itself: the caller's would contradict the request it frames.
const OWN = new Set(["host", "content-length", "transfer-encoding", "connection"]);

/** The request's header fields as node's flat list form, with Host and Content-Length of the request sent. */
function flatHeaders(fields: Readonly<Record<string, string>>, host: string, length: number): string[] {
  const flat = ["host", host, "content-length", String(length)];
  for (const name in fields) {
    const value = fields[name];
    if (value === undefined) continue;
    if (OWN.has(name.toLowerCase())) continue;
    flat.push(name, value);
  }
  return flat;
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * A `net` lookup that resolves with the injected resolver and refuses the connection when any address is forbidden,
 * so a name that resolves (or later re-resolves) to 127.0.0.1 is never reached. Checking at connect time closes the
 * DNS-rebinding gap between a registration check and the send.
 */
function guardedLookup(resolve: HostResolver, policy: CompiledUrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = typeof options === "object" && options !== null ? (options.family ?? 0) : 0;
        const usable = addresses.filter((a) => family === 0 || a.family === family);
        if (usable.length === 0) return callback(codedError("ENOTFOUND", `No address for ${hostname}`), "", 4);
        if (!policy.hosts.has(normalizeHost(hostname))) {
          for (const entry of usable) {
            const refusal = checkAddress(entry.address, policy);
            if (refusal !== undefined) {
              return callback(codedError(SSRF_BLOCKED_CODE, `${hostname}: ${refusal.detail}`), "", 4);
            }
          }
        }
        if (typeof options === "object" && options !== null && options.all) {
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(
            null,
            usable.map((a) => ({ address: a.address, family: a.family })),
          );
        }
        const first = usable[0] as { address: string; family: number };
        callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, "", 4),
    );
  };
}

/**
 * Creates the HTTP dispatcher: POST with keep-alive, a time-out per attempt, a cap on response bytes, no redirects
 * followed, and the SSRF policy applied at connect time.
 * @example const dispatcher = createDispatcher({ timeoutMs: 5_000 });
 */
export function createDispatcher(options: DispatcherOptions = {}): Dispatcher {
  const timeoutMs = options.timeoutMs ?? DELIVERY_DEFAULTS.timeoutMs;
  const maxBytes = options.maxResponseBytes ?? DELIVERY_DEFAULTS.maxResponseBytes;
  const logBytes = options.logResponseBytes ?? DELIVERY_DEFAULTS.logResponseBytes;
  const now = options.now ?? Date.now;
  const policy = compileUrlPolicy(options.urlPolicy);
  const lookup = guardedLookup(options.resolve ?? systemResolver, policy);
  const agentOptions = { keepAlive: true, maxFreeSockets: options.maxFreeSockets ?? 256, scheduling: "lifo" as const };
  const httpAgent = new HttpAgent(agentOptions);
  const httpsAgent = new HttpsAgent(agentOptions);
  const deadlines = new RequestDeadlines(timeoutMs);

  // Parsed targets by URL: endpoints are few and their URLs repeat on every attempt.
  type Target = { options: RequestOptions; secure: boolean; host: string } | { refusal: Error };
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
    const secure = url.protocol === "https:";
    if (!secure && !(url.protocol === "http:" && policy.allowHttp)) {
      return { refusal: codedError(SSRF_BLOCKED_CODE, `Scheme ${url.protocol} is not allowed.`) };
    }
    // An IP literal never goes through lookup, so it is checked here.
    const host = bareHost(url.hostname);
    if (!policy.hosts.has(normalizeHost(host)) && parseIp(host) !== undefined) {
      const refusal = checkAddress(host, policy);
      if (refusal !== undefined) return { refusal: codedError(SSRF_BLOCKED_CODE, refusal.detail) };
    }
    return {
      secure,
      // RFC 9112 §3.2: Host is the authority of the target URI (node adds none for array headers).
      host: url.host,
      options: {
        protocol: url.protocol,
        hostname: host,
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        agent: secure ? httpsAgent : httpAgent,
        lookup,
      },
    };
  }

  // The status line decides the attempt (RFC 9110 §15: the status code is the outcome); the body is only read, up
  // to the caps, for the log and to keep the connection reusable. So the end of the body, a body cut short by the
  // consumer, the byte cap and the time-out once the status arrived all settle the same way.
  function answered(exchange: Exchange): void {
    if (exchange.settled) return;
    settle(exchange, deadlines, {
      kind: "response",
      status: exchange.status,
      retryAfterMs: exchange.retryAfter === undefined ? undefined : parseRetryAfter(exchange.retryAfter, now()),
      body: logText(exchange.chunks, logBytes),
      durationMs: since(exchange.started),
    });
  }

  function timedOut(exchange: Exchange): void {
    if (exchange.res !== undefined) {
      answered(exchange);
      exchange.res.destroy();
    } else {
      exchange.req.destroy(codedError(TIMEOUT_CODE, `No response within ${timeoutMs} ms.`));
    }
  }

  function received(exchange: Exchange, res: IncomingMessage): void {
    exchange.res = res;
    exchange.status = res.statusCode ?? 0;
    const header = res.headers["retry-after"];
    exchange.retryAfter = Array.isArray(header) ? header[0] : header;
    const done = () => answered(exchange);
    res.on("data", (chunk: Buffer) => {
      if (exchange.size < logBytes) exchange.chunks.push(chunk);
      exchange.size += chunk.length;
      if (exchange.size > maxBytes) {
        // Read no more than the cap: the answer is known, the rest of the body is not wanted.
        done();
        res.destroy();
      }
    });
    res.on("end", done);
    // A body cut short (reset, destroyed above): the status already decided.
    res.on("error", done);
    res.on("close", done);
  }

  function dispatch(delivery: DeliveryRequest, dispatchOptions?: DispatchOptions): Promise<AttemptResult> {
    const started = performance.now();
    const target = targetOf(delivery.url);
    if ("refusal" in target) return Promise.resolve(failure(target.refusal, started));
    return new Promise((resolve) => {
      // Headers as a flat [name, value, …] list: node writes them as given (no per-field setHeader), and the
      // caller's record is left unchanged. Node still checks every name (a token, RFC 9110 §5.1) and value.
      const headers = flatHeaders(delivery.headers, target.host, Buffer.byteLength(delivery.body));
      const signal = dispatchOptions?.signal;
      const req = (target.secure ? httpsRequest : httpRequest)({
        ...target.options,
        headers,
        signal,
      } as RequestOptions);
      const exchange: Exchange = {
        settled: false,
        resolve,
        started,
        req,
        deadline: undefined,
        res: undefined,
        status: 0,
        retryAfter: undefined,
        chunks: [],
        size: 0,
      };
      exchange.deadline = deadlines.start(() => timedOut(exchange));
      req.on("error", (error) => {
        if (exchange.res === undefined) settle(exchange, deadlines, failure(error, started));
        else answered(exchange);
      });
      req.on("response", (res: IncomingMessage) => received(exchange, res));
      req.end(delivery.body);
    });
  }

  return {
    dispatch,
    close() {
      deadlines.clear();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
