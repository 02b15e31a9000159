import { secretFingerprint } from "../webhooks/signing/secrets";
import type { Target } from "./target";

/** One request and its response, kept so a failing law can print what happened. */
export interface Exchange {
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody: string | undefined;
  status: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

/** What a law sends: a path relative to the target, or an absolute URL. */
export interface LawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** A JSON value (sent as application/json unless a content-type is given) or raw text. */
  body?: unknown;
}

/** A response already read, so laws can compare bodies without stream juggling. */
export interface LawResponse {
  status: number;
  headers: Headers;
  text: string;
  json(): unknown;
}

/** The exchanges of one property run, printed as readable HTTP when the run fails. */
export class Transcript {
  readonly exchanges: Exchange[] = [];

  /**
   * @param target Where the requests go.
   * @param secretFields Names of further fields printed by fingerprint only (a spec's `headers`: an `X-Api-Key`),
   * read when the transcript is printed, so a set may still grow while the run sends.
   */
  constructor(
    readonly target: Target,
    private readonly secretFields: Iterable<string> = [],
  ) {}

  /** Sends a request through the target and records the exchange. */
  async send(request: LawRequest): Promise<LawResponse> {
    const url = requestUrl(this.target, request.path);
    const headers: Record<string, string> = { ...request.headers };
    let body: string | undefined;
    if (request.body !== undefined) {
      body = typeof request.body === "string" ? request.body : JSON.stringify(request.body);
      if (!Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) {
        headers["content-type"] = "application/json";
      }
    }
    const response = await this.target.send(new Request(url, { method: request.method, headers, body }));
    const text = await response.text();
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      responseHeaders[name] = value;
    });
    this.exchanges.push({
      method: request.method,
      url,
      requestHeaders: headers,
      requestBody: body,
      status: response.status,
      responseHeaders,
      responseBody: text,
    });
    return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
  }

  /**
   * The exchanges as HTTP/1.1-style text, bodies cut to 500 characters, credentials shown only by fingerprint
   * (see {@link redactedField}).
   */
  format(): string {
    const secret = [...this.secretFields];
    return this.exchanges.map((exchange, index) => formatExchange(exchange, index, secret)).join("\n\n");
  }

  /** Throws a {@link LawViolation} carrying this transcript. */
  fail(law: string, message: string): never {
    throw new LawViolation(law, message, this.format());
  }
}

/**
 * The URL a law's path is sent to: an absolute URL as it is, otherwise the path appended to the target's base URL
 * (which may have a path of its own, `http://host/api`).
 */
export function requestUrl(target: Target, path: string): string {
  return /^https?:\/\//.test(path) ? path : `${target.baseUrl}${path}`;
}

/** Fields whose values are credentials (RFC 9110 §11.6.2, §11.7.2; RFC 6265 §4): printed by fingerprint only. */
export const CREDENTIAL_FIELDS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
]);

// RFC 9110 §11.4: credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]; the scheme is no secret.
const AUTH_SCHEME = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) +(\S.*)$/;

/**
 * A field value as printed when it may be a secret: `Bearer … (fingerprint 1a2b3c4d)`, the fingerprint being
 * `secretFingerprint` of the credentials (the token, not the scheme), to compare with your own; other fields
 * `… (fingerprint …)` of the whole value.
 * @example redactedField("authorization", "Bearer s3cr3t") // "Bearer … (fingerprint …)"
 */
export function redactedField(name: string, value: string): string {
  const lower = name.toLowerCase();
  const credentials = lower === "authorization" || lower === "proxy-authorization" ? AUTH_SCHEME.exec(value) : null;
  if (credentials !== null) return `${credentials[1]} … (fingerprint ${secretFingerprint(credentials[2] as string)})`;
  return `… (fingerprint ${secretFingerprint(value)})`;
}

/**
 * A field value as a failing law prints it, in its transcript and in its reason: the credential fields (and those
 * named in `secretFields`, lower case: the spec's own `headers`, the CLI's `--header`) by fingerprint (see
 * {@link redactedField}), others as they are; an absent field as `null`.
 * @example shownField("set-cookie", "session=s3cr3t") // "… (fingerprint …)"
 */
export function shownField(name: string, value: string | null, secretFields: Iterable<string> = []): string {
  if (value === null) return "null";
  const lower = name.toLowerCase();
  const secret = CREDENTIAL_FIELDS.has(lower) || [...secretFields].some((field) => field.toLowerCase() === lower);
  return secret ? redactedField(name, value) : value;
}

function fieldLine(name: string, value: string, secretFields: readonly string[]): string {
  return `${name}: ${shownField(name, value, secretFields)}`;
}

function cut(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}… (${text.length} chars)` : text;
}

function formatExchange(exchange: Exchange, index: number, secretFields: readonly string[]): string {
  const target = new URL(exchange.url);
  const lines = [`#${index + 1} ${exchange.method} ${target.pathname}${target.search} HTTP/1.1`];
  for (const [name, value] of Object.entries(exchange.requestHeaders)) lines.push(fieldLine(name, value, secretFields));
  if (exchange.requestBody !== undefined) lines.push("", cut(exchange.requestBody));
  lines.push("", `→ HTTP/1.1 ${exchange.status}`);
  for (const [name, value] of Object.entries(exchange.responseHeaders))
    lines.push(fieldLine(name, value, secretFields));
  if (exchange.responseBody.length > 0) lines.push("", cut(exchange.responseBody));
  return lines.join("\n");
}

/**
 * Thrown when a law does not hold; the message ends with the request sequence as readable HTTP. fast-check v4
 * reports it as the `cause` of its own "Property failed" error (vitest prints "Caused by:", node:test
 * `[cause]:`).
 */
export class LawViolation extends Error {
  readonly code = "law_violated";
  /** The law's name. */
  declare readonly law: string;
  /** Why it failed, in one line. */
  declare readonly reason: string;
  /** The request sequence of the failing run, as readable HTTP. */
  declare readonly transcript: string;

  constructor(law: string, reason: string, transcript: string) {
    super(`${law}: ${reason}\n\n--- request sequence ---\n${transcript}`);
    this.name = "LawViolation";
    // Not enumerable: test runners print an error's own properties after its message, which holds them all.
    Object.defineProperties(this, {
      law: { value: law },
      reason: { value: reason },
      transcript: { value: transcript },
    });
  }
}
