import { isJsonMediaType, type MediaType, parseMediaType } from "./media-type";
import type { HttpRequest } from "./message";
import { HttpProblem, type HttpProblemCode } from "./problem";

/** The outcome of reading a body: the value, or the problem to answer with (its `code` is an {@link HttpProblemCode}). */
export type BodyResult<T> = { ok: true; value: T } | { ok: false; problem: HttpProblem<HttpProblemCode> };

/** Form fields: a name sent once is a string; a repeated name, or one ending in `[]`, is an array. */
export type FormRecord = Record<string, string | string[]>;

const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function contentType(request: Pick<HttpRequest, "headers">): MediaType | undefined {
  const value = request.headers["content-type"];
  return value === undefined ? undefined : parseMediaType(value);
}

function unsupported(expected: string, got: string | undefined): HttpProblem<HttpProblemCode> {
  return new HttpProblem({
    status: 415,
    code: "unsupported_media_type",
    detail: got
      ? `Content-Type "${got}" is not accepted here; send ${expected}.`
      : `The request has a body but no Content-Type; send ${expected}.`,
    headers: { "accept-post": expected, "accept-patch": expected },
  });
}

function emptyBody(): HttpProblem<HttpProblemCode> {
  return new HttpProblem({ status: 400, code: "body_required", detail: "The request body is empty." });
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return fatalDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Reads a JSON body (RFC 8259): 400 when empty, not UTF-8 or malformed; 415 when the Content-Type is not
 * JSON (`application/json` or any `+json` type, e.g. `application/merge-patch+json`) or names another charset.
 */
export function safeJsonBody(request: Pick<HttpRequest, "headers" | "body">): BodyResult<unknown> {
  if (request.body.byteLength === 0) return { ok: false, problem: emptyBody() };
  const media = contentType(request);
  if (!isJsonMediaType(media)) {
    return { ok: false, problem: unsupported("application/json", request.headers["content-type"]) };
  }
  const charset = media?.parameters.charset?.toLowerCase();
  // RFC 8259 §8.1: JSON exchanged between systems must be UTF-8.
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return { ok: false, problem: unsupported("application/json; charset=utf-8", request.headers["content-type"]) };
  }
  const text = decodeUtf8(request.body);
  if (text === undefined) {
    return {
      ok: false,
      problem: new HttpProblem({ status: 400, code: "malformed_json", detail: "The body is not valid UTF-8." }),
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return {
      ok: false,
      problem: new HttpProblem({
        status: 400,
        code: "malformed_json",
        detail: `The body is not valid JSON: ${(error as Error).message}`,
        cause: error,
      }),
    };
  }
}

/** Like {@link safeJsonBody} but throws the {@link HttpProblem}, which the adapters render. */
export function jsonBody(request: Pick<HttpRequest, "headers" | "body">): unknown {
  const result = safeJsonBody(request);
  if (!result.ok) throw result.problem;
  return result.value;
}

/**
 * Parses `application/x-www-form-urlencoded` text (WHATWG URL §5.1) keeping repeated names as arrays.
 * A name ending in `[]` (`enabled_events[]`) is stored without the brackets and is always an array.
 */
export function parseForm(text: string): FormRecord {
  const out: FormRecord = Object.create(null);
  for (const [rawName, value] of new URLSearchParams(text)) {
    const isArray = rawName.endsWith("[]");
    const name = isArray ? rawName.slice(0, -2) : rawName;
    const existing = out[name];
    if (existing === undefined) out[name] = isArray ? [value] : value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[name] = [existing, value];
  }
  return out;
}

/** Reads a form body: 400 when empty or not UTF-8, 415 when the Content-Type is not form-urlencoded. */
export function safeFormBody(request: Pick<HttpRequest, "headers" | "body">): BodyResult<FormRecord> {
  if (request.body.byteLength === 0) return { ok: false, problem: emptyBody() };
  const media = contentType(request);
  if (media?.type !== "application" || media.subtype !== "x-www-form-urlencoded") {
    return { ok: false, problem: unsupported("application/x-www-form-urlencoded", request.headers["content-type"]) };
  }
  const text = decodeUtf8(request.body);
  if (text === undefined) {
    return {
      ok: false,
      problem: new HttpProblem({ status: 400, code: "malformed_form", detail: "The body is not valid UTF-8." }),
    };
  }
  return { ok: true, value: parseForm(text) };
}

/** Reads a JSON or form body, whichever the Content-Type names (415 for anything else). */
export function safeJsonOrFormBody(request: Pick<HttpRequest, "headers" | "body">): BodyResult<unknown> {
  const media = contentType(request);
  if (media?.type === "application" && media.subtype === "x-www-form-urlencoded") return safeFormBody(request);
  if (request.body.byteLength > 0 && !isJsonMediaType(media)) {
    return {
      ok: false,
      problem: unsupported("application/json or application/x-www-form-urlencoded", request.headers["content-type"]),
    };
  }
  return safeJsonBody(request);
}

/** Parses a query string into a {@link QueryRecord}-compatible object (repeated names become arrays). */
export function parseQuery(search: string): Record<string, string | string[]> {
  if (search.length === 0) return Object.create(null);
  return parseForm(search.startsWith("?") ? search.slice(1) : search);
}
