import { describeMiddleware } from "../http/described";
import { isFinalStatus } from "../http/final-status";
import type { Handler, HttpRequest, HttpResponse } from "../http/message";
import { isIdempotent } from "../http/methods";
import { isHttpProblem } from "../http/problem";
import { receivedTarget } from "../http/received-target";
import { isThenable } from "../http/thenable";
import { optionalFunction, requiredFunction } from "../options/function-option";
import { positiveInteger } from "../options/number-option";
import { decide, type Lease, needsLegacyFingerprint } from "./decision";
import { IdempotencyError } from "./errors";
import { type FingerprintInput, legacyRequestFingerprint, requestFingerprint, scopedKey } from "./fingerprint";
import { parseIdempotencyKey } from "./key";
import { keyInUse, keyInvalid, keyMissing, keyReused, storeUnavailable } from "./problems";
import type { BeginResult, IdempotencyStore } from "./store";
import { DEFAULT_REPLAY_HEADERS, replayResponse, toStoredResponse } from "./stored-response";

// draft-ietf-httpapi-idempotency-key-header §2.4, §2.7: a key reused for another request is a misuse (422), so the
// fingerprint's target is the one the client sent (receivedTarget), not the path below a mount point, which two
// mounts sharing a store both see.

/** How long a completed response is replayed: 24 hours (Stripe keeps keys at least 24 h). */
export const DEFAULT_TTL_MS = 86_400_000;

/** How long a request holds its key before a retry may take it over: 60 seconds. */
export const DEFAULT_LEASE_MS = 60_000;

/**
 * The default rule for which outcomes are stored: every status below 500 except 408, 425 and 429, which say "try
 * again", 401, 403 and 407, which say the caller may not (yet), and 412, whose preconditions the fingerprint leaves
 * out: each releases the key. 5xx responses and thrown errors release it too.
 */
export function defaultStoreOutcome(status: number): boolean {
  return status < 500 && !RELEASED_4XX.has(status);
}

// 408, 425, 429: RFC 9110 §15.5.9, RFC 8470 §5.2, RFC 6585 §4 invite a retry. 401, 403, 407 (RFC 9110 §15.5.2,
// §15.5.4, §15.5.8): the handler refused before doing anything, and the retry may carry a refreshed credential for the
// same caller, or come after a grant; a stored refusal would answer it for the whole TTL. 412: the method was not
// performed (RFC 9110 §13.2.1), and the retry carries the validator the client fetched since.
const RELEASED_4XX: ReadonlySet<number> = new Set([401, 403, 407, 408, 412, 425, 429]);

/** Options of {@link idempotency}. */
export interface IdempotencyOptions {
  /**
   * Where records live; share one between instances (Redis, PostgreSQL) when there are several. A function picks the
   * store per request: with PostgreSQL, the store on the request's own transaction
   * (`(request) => store.withClient(transactionOf(request) ?? pool)` under `requestTransaction`), so the record
   * commits with the resource it protects (exactly once; see docs/idempotency.md). The function may return a Promise
   * of the store; an answer that is no store is a TypeError naming `options.store`, before the handler runs. A
   * function that throws or rejects is answered as a failing `begin` is: 503 `idempotency_store_unavailable`, the
   * error reported through `onStoreError`.
   */
  store: IdempotencyStore | ((request: HttpRequest) => IdempotencyStore | Promise<IdempotencyStore>);
  /**
   * The caller's identity (account, API key id, tenant). Keys are scoped per caller, so one caller
   * can never replay another's response. Return a constant for an API without callers.
   *
   * A replay skips the handler and every check it makes, so this must be the identity authentication established
   * (the credential itself, or what an authenticating middleware in front decided), never a field the client picks
   * freely: with `x-account`, whoever learns another account's key and request reads its stored response.
   */
  identify: (request: HttpRequest) => string | Promise<string>;
  /**
   * Whether a request without an Idempotency-Key gets 400 `idempotency_key_missing`; otherwise it
   * passes through unprotected. A function may answer with a Promise of the boolean; an answer that is no boolean is
   * a TypeError naming `options.required` (the adapter's 500), never a requirement.
   * @default false
   */
  required?: boolean | ((request: HttpRequest) => boolean | Promise<boolean>);
  /**
   * Methods the middleware protects (a list, or a test of the upper-case method); others pass
   * through untouched.
   * @default every method that is not idempotent by RFC 9110 §9.2.2 ({@link isIdempotent}): POST,
   *   PATCH, CONNECT and extension methods; GET, HEAD, PUT, DELETE, OPTIONS and TRACE pass through.
   */
  methods?: readonly string[] | ((method: string) => boolean);
  /**
   * How long a stored response is replayed, in milliseconds.
   * @default 86_400_000 (24 h)
   */
  ttlMs?: number;
  /**
   * How long a request holds its key, in milliseconds; must exceed the handler's longest run. After
   * it, a retry runs the handler again (the first attempt is presumed dead) and a late `complete`
   * of the first attempt is refused, and reported through `onStoreError` (`idempotency_lease_lost`).
   * @default 60_000
   */
  leaseMs?: number;
  /**
   * Whether a response with this status is stored and replayed; when false the key is released
   * and a retry runs the handler again. A status the adapters refuse to send (not an integer in 200..599) is never
   * stored, whatever this says.
   * @default {@link defaultStoreOutcome}
   */
  storeOutcome?: (status: number) => boolean;
  /**
   * Response header fields stored and replayed with the body (case-insensitive).
   * @default {@link DEFAULT_REPLAY_HEADERS}
   */
  replayHeaders?: readonly string[];
  /**
   * Accept only the draft's sf-string form of the key.
   * @default false
   */
  strict?: boolean;
  /**
   * Called when the outcome cannot be recorded after the handler ran: the store fails (`complete` or `release`), or
   * `storeOutcome` or copying the response for replay throws; or the lease ran out while the handler ran (the store
   * answered false: an {@link IdempotencyError} `idempotency_lease_lost`, saying `leaseMs` is shorter than the
   * handler took). The client still gets the handler's response: its effect has happened. Called too when the store
   * fails before the handler runs (`begin` fails, or the `store` function throws or rejects): the client then gets
   * 503. Pass your logger here, or `() => {}` to stay silent.
   * @default {@link logStoreError}: `console.error` (stderr on Node, the log on Workers)
   */
  onStoreError?: (error: unknown, request: HttpRequest) => void;
}

// RFC 9110 §9.2.2: a method that is not idempotent is the one a retry can repeat.
const notIdempotent = (method: string) => !isIdempotent(method);

function names(name: string, value: readonly string[]): readonly string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    throw new TypeError(`idempotency: options.${name} must be a list of strings, or left out`);
  }
  return value;
}

// A Promise, or any other truthy value, once counted as `true`: every request then needed a key.
function mustHaveKey(answer: unknown): boolean {
  if (typeof answer !== "boolean") {
    throw new TypeError("idempotency: options.required must return a boolean, or a Promise of one");
  }
  return answer;
}

// A Promise of a store once reached `begin` as the store itself, failing the first keyed request obscurely.
function storeFrom(answer: unknown): IdempotencyStore {
  if (typeof (answer as IdempotencyStore | null)?.begin !== "function") {
    throw new TypeError("idempotency: options.store must return an IdempotencyStore, or a Promise of one");
  }
  return answer as IdempotencyStore;
}

function protectedMethods(option: IdempotencyOptions["methods"]): (method: string) => boolean {
  if (option === undefined) return notIdempotent;
  if (typeof option === "function") return option;
  const listed = new Set(names("methods", option).map((m) => m.toUpperCase()));
  return (method) => listed.has(method);
}

// A lease left that is no finite number (from a store of the user's) once made `Retry-After: NaN` or `Infinity`; this
// request's own lease is the bound it would wait at most. A finite one is kept: another instance may lease for longer.
function leaseLeft(retryAfterMs: number, leaseMs: number): number {
  return Number.isFinite(retryAfterMs) ? retryAfterMs : leaseMs;
}

/**
 * The default `onStoreError`: one `console.error` line with the error.
 * @param error what the store threw.
 * @example idempotency({ store, identify, onStoreError: (error, request) => logger.warn({ error, path: request.path }) })
 */
export function logStoreError(error: unknown): void {
  console.error("rest-webhooks: the idempotency store failed to record an outcome", error);
}

/**
 * Middleware making unsafe requests retryable with an `Idempotency-Key` header field
 * (draft-ietf-httpapi-idempotency-key-header, with Stripe's `Idempotent-Replayed`).
 *
 * The first request with a key runs the handler under a lease; its response is stored and
 * replayed byte for byte to later requests with the same key, caller and fingerprint (method,
 * target, body, Content-Type and Content-Encoding: {@link requestFingerprint}). A request
 * arriving while the first runs gets 409; one reusing the key for another request gets 422.
 *
 * @example
 * const protect = idempotency({ store: new MemoryIdempotencyStore(), identify: (req) => req.headers.authorization ?? "anonymous" });
 * createServer(protect(createOrder)).listen(3000);
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 */
export function idempotency(options: IdempotencyOptions): (handler: Handler) => Handler {
  const { identify } = options;
  const option = options?.store;
  if (typeof option !== "function" && typeof option?.begin !== "function") {
    throw new TypeError(
      "idempotency: options.store must be an IdempotencyStore, or a function of the request returning one",
    );
  }
  const storeOf = typeof option === "function" ? option : () => option;
  requiredFunction("idempotency", "options.identify", identify);
  const protects = protectedMethods(options.methods);
  const ttlMs = positiveInteger("idempotency", "ttlMs", options.ttlMs ?? DEFAULT_TTL_MS, "milliseconds");
  const leaseMs = positiveInteger("idempotency", "leaseMs", options.leaseMs ?? DEFAULT_LEASE_MS, "milliseconds");
  // Options are checked where they are taken: storeOutcome and onStoreError are first called after the handler ran,
  // where a wrong one threw with the effect done and the key left leased (the retry got 409, then ran it again).
  const storeOutcome =
    optionalFunction("idempotency", "options.storeOutcome", options.storeOutcome) ?? defaultStoreOutcome;
  const replayHeaders = new Set(
    names("replayHeaders", options.replayHeaders ?? DEFAULT_REPLAY_HEADERS).map((h) => h.toLowerCase()),
  );
  const required = options.required ?? false;
  // A string such as "false" (read from the environment) would have required the key.
  if (typeof required !== "boolean" && typeof required !== "function") {
    throw new TypeError("idempotency: options.required must be a boolean or a function of the request");
  }
  const strict = options.strict ?? false;
  if (typeof strict !== "boolean") throw new TypeError("idempotency: options.strict must be a boolean");
  const onStoreError = optionalFunction("idempotency", "options.onStoreError", options.onStoreError) ?? logStoreError;

  // A write the store refused (false): the lease ran out while the handler ran, so nothing was recorded and a retry
  // runs the handler again. Silent, the operator would never learn that leaseMs is shorter than the handler takes.
  function leaseLost(written: boolean, request: HttpRequest): void {
    if (written !== false) return;
    onStoreError(
      new IdempotencyError(
        "idempotency_lease_lost",
        `idempotency: the key's lease (leaseMs ${leaseMs}) ran out before the handler's outcome was recorded, so nothing was recorded and a retry runs the handler again: set leaseMs above the handler's longest run.`,
      ),
      request,
    );
  }

  // Reports a failed or refused write instead of failing the request. A store that answered at once (the memory store)
  // gets no promise: `undefined` then, nothing to wait for.
  function settle(request: HttpRequest, operation: () => boolean | Promise<boolean>): Promise<void> | undefined {
    let written: boolean | Promise<boolean>;
    try {
      written = operation();
    } catch (error) {
      onStoreError(error, request);
      return undefined;
    }
    if (isThenable(written)) {
      return Promise.resolve(written).then(
        (held) => leaseLost(held, request),
        (error: unknown) => onStoreError(error, request),
      );
    }
    leaseLost(written, request);
    return undefined;
  }

  // The store (its begin, or the store function) failed before the handler ran: nothing happened, so the client is
  // told to retry (503) rather than given the adapter's 500, and the operator hears of it. A record the store cannot
  // decode is no outage: it stays a 500, since every retry would read it again until it expires.
  function beginFailed(error: unknown, request: HttpRequest): HttpResponse {
    if ((error as { code?: unknown } | null)?.code === "idempotency_record_invalid") throw error;
    onStoreError(error, request);
    return storeUnavailable();
  }

  async function execute(
    handler: Handler,
    request: HttpRequest,
    store: IdempotencyStore,
    lease: Lease,
  ): Promise<HttpResponse> {
    let response: HttpResponse;
    try {
      response = await handler(request);
    } catch (error) {
      // An HttpProblem is an answer the client sees, judged like any response; anything else
      // is a failure the handler may not have finished, so the key is released for a retry.
      if (!isHttpProblem(error)) {
        await settle(request, () => store.release(lease.key, lease.token));
        throw error;
      }
      response = error.toResponse();
    }
    // Recorded before the client sees the response, so its retry can only find it completed. The effect has happened:
    // whatever fails from here (the store, storeOutcome, a header toStoredResponse cannot copy) is reported, not thrown.
    // A status no adapter sends (RFC 9110 §15: outside 100..599 is invalid; a 1xx is not final) is never stored: each
    // replay would be a 500, and Redis and PostgreSQL could not even read the record back. Released, as after a 5xx.
    const recorded = settle(request, () =>
      isFinalStatus(response.status) && storeOutcome(response.status)
        ? store.complete(lease.key, lease.token, toStoredResponse(response, replayHeaders), ttlMs)
        : store.release(lease.key, lease.token),
    );
    if (recorded !== undefined) await recorded;
    return response;
  }

  async function keyed(handler: Handler, request: HttpRequest, field: string): Promise<HttpResponse> {
    const parsed = parseIdempotencyKey(field, { strict });
    if (!parsed.ok) return keyInvalid(parsed.reason);
    const caller = await identify(request);
    if (typeof caller !== "string") throw new TypeError("idempotency: identify must return a string");
    const input: FingerprintInput = {
      method: request.method,
      target: receivedTarget(request),
      caller,
      body: request.body,
      contentType: request.headers["content-type"],
      contentEncoding: request.headers["content-encoding"],
    };
    const fingerprint = requestFingerprint(input);
    const key = scopedKey(caller, parsed.key);
    // A store function that throws or rejects (one opening a transaction on an unreachable database) has failed
    // before the handler ran, as a failing begin has: the same 503. An answer that is no store stays misuse (500).
    let chosen: unknown;
    try {
      const answer = storeOf(request);
      chosen = isThenable(answer) ? await answer : answer;
    } catch (error) {
      return beginFailed(error, request);
    }
    const store = storeFrom(chosen);
    let found: BeginResult;
    try {
      const begun = store.begin(key, fingerprint, leaseMs);
      found = isThenable(begun) ? await begun : begun;
    } catch (error) {
      return beginFailed(error, request);
    }
    const legacy = needsLegacyFingerprint(found) ? legacyRequestFingerprint(input) : undefined;
    const decision = decide(key, fingerprint, found, legacy);
    switch (decision.kind) {
      case "execute":
        return execute(handler, request, store, decision.lease);
      case "replay":
        return replayResponse(decision.response);
      case "conflict-in-progress":
        return keyInUse(leaseLeft(decision.retryAfterMs, leaseMs));
      case "fingerprint-mismatch":
        return keyReused();
    }
  }

  // Requests it does not protect, and those without a key, pass straight through: no promise is added.
  const middleware =
    (handler: Handler): Handler =>
    (request) => {
      if (!protects(request.method)) return handler(request);
      const field = request.headers["idempotency-key"];
      if (field !== undefined) return keyed(handler, request, field);
      if (typeof required !== "function") return required ? keyMissing() : handler(request);
      // Only an answer that is a Promise costs one: the synchronous one is judged at once.
      const answer = required(request);
      if (isThenable(answer)) {
        return Promise.resolve(answer).then((resolved) => (mustHaveKey(resolved) ? keyMissing() : handler(request)));
      }
      return mustHaveKey(answer) ? keyMissing() : handler(request);
    };
  // What it can answer, for OpenAPI (draft-ietf-httpapi-idempotency-key-header §2.7).
  return describeMiddleware(middleware, {
    responses: {
      400: { description: "The Idempotency-Key is malformed, or missing where required.", methods: protects },
      409: {
        description: "A request with this Idempotency-Key is still being processed: retry after Retry-After.",
        headers: { "Retry-After": { description: "Seconds until the key's lease ends.", schema: { type: "integer" } } },
        methods: protects,
      },
      422: { description: "This Idempotency-Key was used with another request.", methods: protects },
      503: {
        description:
          "The idempotency store failed before the operation ran: nothing was done; retry with the same key.",
        headers: { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } } },
        methods: protects,
      },
    },
    requestHeaders: {
      "Idempotency-Key": {
        description: "Makes the request safe to retry: a quoted string, unique per operation.",
        methods: protects,
        // A `required` function decides per request: the header is then optional for some of them.
        required: required === true,
      },
    },
    successHeaders: {
      "Idempotent-Replayed": {
        description: "`true` when this is the stored response of an earlier request with the key.",
        methods: protects,
        // Every answer of the operation's that is stored is replayed with it: a 422 as much as a 201.
        statuses: (status) => isFinalStatus(status) && storeOutcome(status),
      },
    },
  });
}
