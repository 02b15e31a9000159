import { bodyTooLarge } from "../../http/adapter-options";
import { withAfterSend } from "../../http/after-send";
import { contentCodingProblem } from "../../http/content-coding";
import { guardedReporter } from "../../http/guarded-report";
import { DEFAULT_JSON_MAX_DEPTH, nestsDeeperThan, stringFault } from "../../http/json-limits";
import { empty, type Handler, type HttpRequest, type HttpResponse } from "../../http/message";
import { HttpProblem } from "../../http/problem";
import { isThenable } from "../../http/thenable";
import { untilAborted } from "../../http/until-aborted";
import { utf8Length } from "../../http/utf8-length";
import { optionalFunction } from "../../options/function-option";
import { finiteNumber, nonNegativeInteger, positiveNumber } from "../../options/number-option";
import { refuseOption } from "../../options/refuse-option";
import type { PayloadFormat } from "../signing/payload";
import type { WebhookScheme } from "../signing/scheme";
import type { Tolerance } from "../signing/tolerance";
import { verify } from "../signing/verify";
import type { InboxEvent } from "./event";
import { defaultEventId, defaultEventType, type EventIdentityInput } from "./event-identity";
import { isInboxEventTooLargeError } from "./event-too-large";
import type { Inbox, InboxAddResult } from "./inbox";
import { isInboxFullError } from "./inbox-full";
import { refusalLog } from "./refusal-log";
import { sharedDeadline } from "./shared-deadline";
import { checkVerificationOptions } from "./verification-options";

/** Options of {@link createWebhookConsumer}. */
export interface WebhookConsumerOptions {
  /** Where verified events are stored before the 2xx; only `add` is used here. */
  inbox: Pick<Inbox, "add">;
  /** The signing secret(s); several during a rotation. */
  secrets: string | readonly string[];
  /** The provider's signing scheme. @default standardWebhooks */
  scheme?: WebhookScheme;
  /** Accepted distance of the signed timestamp from now, seconds (or `{ past, future }`). @default 300 */
  toleranceSeconds?: Tolerance;
  /** How the verified body becomes the payload: `"form"` for Slack slash commands. @default "json" */
  parse?: PayloadFormat;
  /**
   * The clock, Unix ms; used for `receivedAt` and handed to verification. A reading that is not a finite number
   * (NaN, an infinity) throws a TypeError from the handler, which the adapter answers with 500. @default Date.now
   */
  now?: () => number;
  /**
   * Largest body accepted, bytes; larger gets 413. The adapter's own `bodyLimit` (default 1 MiB)
   * applies first, so raise that too when this is larger.
   */
  bodyLimit?: number;
  /** The acknowledgement status; another value is a TypeError when the consumer is created. @default 202 */
  status?: 200 | 202;
  /**
   * Derives the de-duplication id; return `undefined` to fall back to {@link defaultEventId}. Anything but a non-empty
   * string or `undefined` throws a TypeError from the handler (the adapter answers 500). GitHub's and Shopify's
   * default ids are unsigned headers, which a replayed delivery can change: derive the id from the signed `body` or
   * `payload` there when replays matter.
   */
  eventId?: (input: EventIdentityInput) => string | undefined;
  /**
   * Derives the routing type; return `undefined` to fall back to {@link defaultEventType}. Anything but a string or
   * `undefined` throws a TypeError from the handler (the adapter answers 500).
   */
  eventType?: (input: EventIdentityInput) => string | undefined;
  /**
   * Called for a newly stored event (not a duplicate) once its 2xx has been sent — pass
   * `runner.wake` to process it at once instead of at the next poll. The handler never calls it
   * itself: it rides on the response and the adapter runs it after sending (node:http: on
   * `'finish'`; Fetch: once the `Response` is returned), so processing woken by it cannot start
   * before the reply.
   * @see takeAfterSend in `rest-webhooks/http`, to run it from your own I/O glue.
   */
  onStored?: (event: InboxEvent) => void;
  /**
   * Told when the inbox fails to store or is full (the provider gets 503 and retries), when it refuses an event it
   * can never hold (`InboxEventTooLargeError`: 413), when the consumer cannot verify for its own configuration (a
   * `WebhookVerificationError` `secret_invalid` for a secret not set yet, or `body_not_raw`: 500), or when `onStored`
   * throws. A delivery the sender got wrong (a bad signature: 400) is not told.
   * @default logs to stderr: each kind of refusal (inbox full, event too large, inbox failing, not configured) at most
   * once a minute,
   * with how many deliveries it refused since its last line; an `onStored` error each time. An `onError` that throws
   * does not change the answer: its failure is logged to stderr beside the error it was reporting.
   */
  onError?: (error: unknown, request: HttpRequest) => void;
  /**
   * How long the inbox may take to store an event, ms. A database that accepts the connection and never answers
   * would otherwise hold every delivery until the sender gives up; past the deadline the sender gets 503 with
   * `Retry-After` and delivers again (the event is de-duplicated if the late write did land).
   * @default 5_000
   */
  inboxTimeoutMs?: number;
  /**
   * Makes the signal that ends the wait for the inbox (inject one in tests). By default requests arriving within
   * the same tenth of `inboxTimeoutMs` (at most 100 ms) share one `AbortSignal.timeout`, so each waits at least
   * `inboxTimeoutMs` and at most that plus the window: a timer per request cost more CPU than verifying it.
   * @default one shared `AbortSignal.timeout` per window
   */
  deadline?: (ms: number) => AbortSignal;
}

const ALLOW = { allow: "POST" };

/**
 * The longest event id the consumer stores, in UTF-8 bytes. Provider ids are under 100 bytes (`msg_…`, `evt_…`,
 * UUIDs, `sha256:` + 64 hex digits), so a prefix of your own still fits; and an id this long stays well inside
 * PostgreSQL's B-tree entry limit (2,704 bytes, SQLSTATE 54000), which a longer id in the inbox's primary key exceeds.
 */
const MAX_EVENT_ID_BYTES = 1024;

/** The id's length in UTF-8 bytes, when it is over the limit; `undefined` when it fits. */
function idTooLong(id: string): number | undefined {
  // One UTF-16 unit is at most 3 UTF-8 bytes: a short id needs no counting to be known to fit.
  if (id.length * 3 <= MAX_EVENT_ID_BYTES) return undefined;
  const bytes = utf8Length(id);
  return bytes > MAX_EVENT_ID_BYTES ? bytes : undefined;
}

/**
 * What the `eventId` or `eventType` option returned, checked: a string (an id not empty: every event given `""` would
 * be de-duplicated against the first, acknowledged and dropped) or `undefined` for the default. Anything else is the
 * option's bug, a TypeError the adapter answers with 500, so the provider retries once it is fixed.
 */
function derived(option: "eventId" | "eventType", value: unknown): string | undefined {
  if (value === undefined || (typeof value === "string" && (value !== "" || option === "eventType"))) return value;
  const kind = typeof value;
  const got = value === "" ? "an empty string" : value === null ? "null" : `${kind === "object" ? "an" : "a"} ${kind}`;
  const wanted = option === "eventId" ? "a non-empty string" : "a string";
  throw new TypeError(`createWebhookConsumer: ${option} must return ${wanted} or undefined; it returned ${got}.`);
}

function invalidEvent(detail: string, extensions?: Record<string, unknown>): HttpResponse {
  return new HttpProblem({ status: 400, code: "invalid_event", detail, extensions }).toResponse();
}

/** Sender-side verification failures are 400: a 401 must carry a WWW-Authenticate challenge (RFC 9110 §15.5.2). */
function verificationProblem(problem: HttpProblem): HttpResponse {
  if (problem.status >= 500 || problem.status === 400) return problem.toResponse();
  return new HttpProblem({
    status: 400,
    code: problem.code,
    detail: problem.detail,
    extensions: problem.extensions,
    cause: problem.cause,
  }).toResponse();
}

function inboxUnavailable(error: unknown): HttpResponse {
  // Recognised also when made by another copy of this package (an inbox of your own on the CommonJS build, say).
  if (isInboxEventTooLargeError(error)) {
    // RFC 9110 §15.5.14: 413, and no Retry-After, since no redelivery of this event can ever be stored.
    return new HttpProblem({
      status: 413,
      code: "body_too_large",
      detail: `The event is larger than the webhook inbox can hold (${error.limit} bytes with its id and type).`,
      extensions: { limit: error.limit },
      cause: error,
    }).toResponse();
  }
  // RFC 9110 §15.6.4: 503 with Retry-After, "deliver it again later"; the sender's event is not acknowledged.
  const full = isInboxFullError(error);
  return new HttpProblem({
    status: 503,
    code: full ? "inbox_full" : "inbox_unavailable",
    detail: full
      ? "The webhook inbox is full of events waiting to be processed; deliver it again later."
      : "The webhook could not be stored; deliver it again later.",
    headers: { "retry-after": "5" },
    cause: error,
  }).toResponse();
}

/**
 * The consumer's webhook endpoint: verifies the signature on the raw body, stores the event in the
 * inbox (de-duplicated by event id) and answers 202 without waiting for processing — business
 * logic runs later, in a {@link WebhookProcessor}. A bad signature gets a 400 problem and stores
 * nothing; an inbox failure gets 503 so the provider retries: no event is acknowledged and lost.
 *
 * @param options the inbox, the secret(s) and scheme, and the acknowledgement policy; see {@link WebhookConsumerOptions}.
 * @returns a {@link Handler}: serve it alone or mount it in a router.
 * @see docs/webhooks-consumers.md, "The consumer handler, the inbox and the processor"
 * @example
 * const runner = startWebhookProcessor(processor); // rest-webhooks/webhooks/consumer/node
 * const consumer = createWebhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET!, onStored: runner.wake });
 * createServer(consumer).listen(3000); // rest-webhooks/node: wakes the runner after each 202 is sent
 */
export function createWebhookConsumer(options: WebhookConsumerOptions): Handler {
  const { inbox, secrets, scheme, toleranceSeconds, parse, onStored } = options;
  const bodyLimit =
    options.bodyLimit === undefined
      ? undefined
      : nonNegativeInteger("createWebhookConsumer", "bodyLimit", options.bodyLimit, "bytes");
  if (typeof inbox?.add !== "function") throw new TypeError("createWebhookConsumer: inbox must have an add method.");
  // Misuse (a secret, scheme, parse or tolerance verification cannot use) throws here, not on every delivery.
  checkVerificationOptions(options);
  const clock =
    optionalFunction("createWebhookConsumer", "now", options.now, "a function returning epoch milliseconds") ??
    Date.now;
  // A reading that is not finite is misconfiguration: a NaN would pass every signed timestamp and store an event no
  // claim finds. Thrown, so the adapter answers 500 (as for a bad scheme) and the provider retries once it is fixed.
  const now = () => finiteNumber("createWebhookConsumer", "now()", clock(), "epoch milliseconds");
  const status = options.status ?? 202;
  // A status from a configuration file ("202") or another one (500) stores the event and answers with what is no
  // acknowledgement, on every redelivery alike.
  if (status !== 200 && status !== 202) refuseOption("createWebhookConsumer", "status", status, "200 or 202");
  for (const name of ["onStored", "onError", "eventId", "eventType", "deadline"] as const) {
    optionalFunction("createWebhookConsumer", name, options[name]);
  }
  const eventId = options.eventId;
  const eventType = options.eventType;
  // Without an onError of the user's, refusals are logged at most once a minute each (see refusalLog). One that throws
  // must not turn the answer it reports on (a 503 with Retry-After, a 413) into the adapter's 500: guarded.
  const { onError } = options;
  const report: (error: unknown, request: HttpRequest, refused: boolean) => void =
    onError === undefined
      ? refusalLog(clock)
      : guardedReporter({ onError: (error, request) => onError(error, request as HttpRequest) });
  const inboxTimeoutMs = positiveNumber(
    "createWebhookConsumer",
    "inboxTimeoutMs",
    options.inboxTimeoutMs ?? 5_000,
    "milliseconds",
  );
  const deadline = options.deadline ?? sharedDeadline(inboxTimeoutMs);
  const acknowledged = (event: InboxEvent, request: HttpRequest) => () => {
    try {
      onStored?.(event);
    } catch (error) {
      report(error, request, false);
    }
  };
  // Business logic never starts before the reply: the wake rides on the response, and the I/O layer runs it once the
  // response has been sent.
  const acknowledgement = (added: InboxAddResult, event: InboxEvent, request: HttpRequest): HttpResponse =>
    added.duplicate || onStored === undefined
      ? empty(status)
      : withAfterSend(empty(status), acknowledged(event, request));
  const unavailable = (error: unknown, request: HttpRequest): HttpResponse => {
    report(error, request, true);
    return inboxUnavailable(error);
  };
  // Not async: an inbox that answers at once (the memory inbox) is acknowledged in the same tick, without a promise,
  // a deadline listener or a microtask (bench/consumer, memory inbox).
  return (request) => {
    if (request.method !== "POST") {
      return new HttpProblem({
        status: 405,
        code: "method_not_allowed",
        detail: "Webhooks are delivered with POST.",
        headers: ALLOW,
      }).toResponse();
    }
    if (bodyLimit !== undefined && request.body.byteLength > bodyLimit) return bodyTooLarge(bodyLimit).toResponse();
    // RFC 9110 §8.4, §15.5.16: bytes in a content coding are not the JSON or form the consumer parses (nor, mostly,
    // the bytes the sender signed): 415 with Accept-Encoding: identity says what to change, where a 400 for the
    // signature would not. With parse "none" the bytes are kept untouched, coded or not.
    if (parse !== "none") {
      const coded = contentCodingProblem(request.headers);
      if (coded !== undefined) return coded.toResponse();
    }
    // verify reads an undefined option as absent: one literal, no conditional spreads per request.
    const result = verify({
      body: request.body,
      headers: request.headers,
      secrets,
      scheme,
      toleranceSeconds,
      parse,
      now,
    });
    if (!result.ok) {
      // The consumer's own configuration (a secret not set yet, a body read before): a 500 the provider retries, which
      // the operator must hear of. The sender's mistakes (400, 422) are not the operator's to fix.
      if (result.error.status >= 500) report(result.error, request, true);
      return verificationProblem(result.error.toProblem());
    }
    // The JSON body readers' nesting limit (src/http/json-limits.ts): a handler, a zod schema or JSON.stringify
    // recursing through a deeper payload can overflow the stack, and PostgreSQL's json input refuses very deep
    // text (SQLSTATE 54001). Every redelivery would fail alike, so a 400 rather than a 503 asking for retries.
    // Walked on the parsed payload, not scanned on the text: per array and object, not per byte.
    if ((parse === undefined || parse === "json") && nestsDeeperThan(result.payload, DEFAULT_JSON_MAX_DEPTH)) {
      return new HttpProblem({
        status: 400,
        code: "json_too_deep",
        detail: `The webhook's JSON payload nests arrays and objects more than ${DEFAULT_JSON_MAX_DEPTH} deep.`,
        extensions: { max_depth: DEFAULT_JSON_MAX_DEPTH },
      }).toResponse();
    }
    const identity: EventIdentityInput = {
      id: result.id,
      payload: result.payload,
      headers: request.headers,
      body: request.body,
      scheme: result.scheme,
    };
    const event: InboxEvent = {
      id: (eventId === undefined ? undefined : derived("eventId", eventId(identity))) ?? defaultEventId(identity),
      type:
        (eventType === undefined ? undefined : derived("eventType", eventType(identity))) ?? defaultEventType(identity),
      payload: result.payload ?? null,
      scheme: result.scheme,
      timestamp: result.timestamp,
      receivedAt: now(),
    };
    // An id or type no store can keep (NUL, a lone surrogate: RFC 7493 §2.1) would fail every redelivery alike:
    // the sender's fault, so a 400 rather than a 503 that asks for retries forever.
    const idFault = stringFault(event.id, false);
    const fault = idFault ?? stringFault(event.type, false);
    if (fault !== undefined) {
      return invalidEvent(
        `The event's ${idFault === undefined ? "type" : "id"} holds a ${fault === "nul_character" ? "NUL" : "lone surrogate"}, which no inbox can store.`,
      );
    }
    const idBytes = idTooLong(event.id);
    if (idBytes !== undefined) {
      return invalidEvent(
        `The event's id is ${idBytes} bytes long; an inbox keeps ids of at most ${MAX_EVENT_ID_BYTES} bytes (UTF-8).`,
        { max_id_bytes: MAX_EVENT_ID_BYTES },
      );
    }
    const source = parse === undefined || parse === "json" ? { json: request.body } : {};
    let added: InboxAddResult | PromiseLike<InboxAddResult>;
    try {
      added = inbox.add(event, source);
    } catch (error) {
      return unavailable(error, request);
    }
    if (!isThenable(added)) return acknowledgement(added, event, request);
    return untilAborted(added, deadline(inboxTimeoutMs)).then(
      (stored) => acknowledgement(stored, event, request),
      (error: unknown) => unavailable(error, request),
    );
  };
}
