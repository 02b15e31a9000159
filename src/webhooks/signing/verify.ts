import type { z } from "zod";
import { optionalFunction } from "../../options/function-option";
import { finiteNumber } from "../../options/number-option";
import { WebhookVerificationError } from "./errors";
import { headerLookup, type WebhookHeaders } from "./headers";
import { type PayloadFormat, readPayload } from "./payload";
import type { WebhookScheme } from "./scheme";
import { secretList, type WebhookSecrets } from "./secrets";
import { standardWebhooks } from "./standard-webhooks";
import { checkTimestamp, type Tolerance, tolerance } from "./tolerance";
import { bodyNotRaw, headersNotReadable, missingWithSchemeHint, noMatchingSignature, rawBody } from "./verify-failures";

/** Input of {@link verify}. */
export interface VerifyInput<T> {
  /** The raw request body, exactly as received: a string, or bytes (Buffer, Uint8Array, ArrayBuffer). */
  body: string | Uint8Array | ArrayBuffer;
  /** The request headers: a plain record (any name case; node:http's `req.headers`) or a Fetch `Headers`. */
  headers: WebhookHeaders;
  /** The endpoint's secret, or several while rotating keys: any of them may match. */
  secrets: WebhookSecrets;
  /** The signature scheme. @default standardWebhooks */
  scheme?: WebhookScheme;
  /** Validates (and types) the parsed payload; a failure is `payload_invalid`. */
  schema?: z.ZodType<T>;
  /** How the verified body is read into `payload`. @default "json" */
  parse?: PayloadFormat;
  /**
   * Accepted distance, in seconds, between the signed timestamp and now: one number for both directions,
   * or `{ past, future }`. Only applies to schemes whose signature covers a timestamp. @default 300
   */
  toleranceSeconds?: Tolerance;
  /**
   * The clock, in milliseconds since the epoch. A reading that is not a finite number (NaN, an infinity) is a
   * TypeError: it would otherwise pass every timestamp. @default Date.now
   */
  now?: () => number;
}

/** Outcome of {@link verify}: the typed payload, or the reason verification failed. */
export type VerifyResult<T> =
  | { ok: true; id: string | undefined; timestamp: number | undefined; payload: T; scheme: string }
  | { ok: false; error: WebhookVerificationError };

function fail(error: WebhookVerificationError): { ok: false; error: WebhookVerificationError } {
  return { ok: false, error };
}

/**
 * Verifies a webhook delivery: headers present and well formed, timestamp within tolerance, one signature
 * matching one of the secrets (constant-time), then the payload parsed and validated. Failures are returned
 * as `{ ok: false, error }` with a stable `error.code`.
 *
 * What comes from the request never throws, whatever its shape: `headers` that are `null`, a string, an array,
 * an object whose getters or Proxy traps throw, and a `body` of any type all end as a failed result. Only a
 * misconfigured call throws a `TypeError`: a `secrets` value that is neither text nor a list of text (an unset
 * one, `undefined`, is the `secret_invalid` result), a bad `toleranceSeconds`, `now`, `scheme`, `parse` or `schema`,
 * and a `now()` that returns NaN or an infinity when a signed timestamp is checked.
 *
 * @example
 * const result = verify({ body: rawBody, headers: req.headers, secrets: process.env.WEBHOOK_SECRET, schema: Event });
 * if (!result.ok) return respond(result.error.status, result.error.code);
 * handle(result.payload);
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export function verify<T = unknown>(input: VerifyInput<T>): VerifyResult<T> {
  if (typeof input !== "object" || input === null) throw new TypeError("verify: expected an input object");
  const scheme: WebhookScheme = input.scheme ?? standardWebhooks;
  if (typeof scheme !== "object" || scheme === null || typeof scheme.matches !== "function") {
    throw new TypeError("verify: scheme must be a WebhookScheme (e.g. standardWebhooks, stripe, github)");
  }
  const window = tolerance(input.toleranceSeconds);
  const now = optionalFunction("verify", "now", input.now, "a function returning milliseconds") ?? Date.now;
  const format = input.parse ?? "json";
  if (format !== "json" && format !== "form" && format !== "none") {
    throw new TypeError('verify: parse must be "json", "form" or "none"');
  }
  if (input.schema !== undefined && typeof input.schema?.safeParse !== "function") {
    throw new TypeError("verify: schema must be a zod schema");
  }

  // Throws TypeError for a secret of the wrong type, before anything of the request is looked at.
  const secrets = secretList(input.secrets, scheme.name);

  const body = rawBody(input.body);
  if (body === undefined) return fail(bodyNotRaw(scheme.name, input.body));
  if (secrets instanceof WebhookVerificationError) return fail(secrets);
  const header = headerLookup(input.headers);
  if (header === undefined) return fail(headersNotReadable(scheme.name, input.headers));

  const signed = scheme.read(header);
  if (signed instanceof WebhookVerificationError) return fail(missingWithSchemeHint(signed, scheme.name, header));
  if (signed.timestamp !== undefined) {
    // A clock that reads NaN would pass every timestamp: misconfiguration, refused like a `now` that is no function.
    const late = checkTimestamp(
      signed.timestamp,
      finiteNumber("verify", "now()", now(), "epoch milliseconds"),
      window,
      scheme.name,
    );
    if (late !== undefined) return fail(late);
  }
  const matched = scheme.matches(signed, body, secrets);
  if (matched instanceof WebhookVerificationError) return fail(matched);
  if (!matched) return fail(noMatchingSignature(scheme, signed, body, secrets, header));

  const payload = readPayload(body, format, input.schema, scheme.name);
  if (payload instanceof WebhookVerificationError) return fail(payload);
  return {
    ok: true,
    id: signed.id ?? scheme.payloadId?.(payload.value),
    timestamp: signed.timestamp,
    payload: payload.value,
    scheme: scheme.name,
  };
}
