import { createHash, timingSafeEqual } from "node:crypto";
import { describeMiddleware } from "../../http/described";
import type { HttpRequest } from "../../http/message";
import { HttpProblem } from "../../http/problem";
import type { Middleware } from "../../routing/types";

/** Accepted API keys, or a function deciding (e.g. a database look-up). */
export type ApiKeyCheck = readonly string[] | ((key: string) => boolean | Promise<boolean>);

const digest = (value: string) => createHash("sha256").update(value).digest();

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". The credentials
// `Authorization: Bearer` can carry, and all that authenticate() reads.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * A check comparing against fixed keys in constant time (hashing first, so lengths leak nothing either). A fixed key
 * that is no RFC 6750 b64token (empty, a space or a line feed in it) is a TypeError: no request could present it.
 */
export function compileApiKeys(keys: ApiKeyCheck): (key: string) => boolean | Promise<boolean> {
  if (typeof keys === "function") return keys;
  if (!Array.isArray(keys)) throw new TypeError("apiKeys must be an array of API keys or a function deciding.");
  if (keys.length === 0) throw new TypeError("At least one API key is needed.");
  keys.forEach((key: unknown, index) => {
    if (typeof key !== "string" || !B64TOKEN.test(key)) {
      throw new TypeError(
        `apiKeys[${index}] is not an API key an Authorization: Bearer field can carry (RFC 6750 b64token: letters, digits, - . _ ~ + /, then = padding only), got ${typeof key === "string" ? `a string of ${key.length} characters` : typeof key}.`,
      );
    }
  });
  const digests = keys.map(digest);
  return (key) => {
    const candidate = digest(key);
    let match = false;
    // Every key is compared, so the time does not tell which one (or whether any) matched.
    for (const known of digests) match = timingSafeEqual(candidate, known) || match;
    return match;
  };
}

// RFC 6750 §3: a 401 carries WWW-Authenticate with the Bearer scheme; a request that presented a key that is not
// valid adds `error="invalid_token"` (§3.1), one without Bearer credentials gets no error code (§3).
function unauthorized(detail: string, error?: "invalid_token"): HttpProblem {
  const challenge = error === undefined ? 'Bearer realm="webhooks"' : `Bearer realm="webhooks", error="${error}"`;
  return new HttpProblem({ status: 401, code: "unauthorized", detail, headers: { "www-authenticate": challenge } });
}

/** Checks `Authorization: Bearer <key>` (RFC 6750 §2.1); the 401 problem when it is missing or wrong. */
export async function authenticate(
  request: Pick<HttpRequest, "headers">,
  check: (key: string) => boolean | Promise<boolean>,
): Promise<HttpProblem | undefined> {
  const value = request.headers.authorization;
  if (value === undefined) return unauthorized("Send your secret API key as Authorization: Bearer <key>.");
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(value);
  if (match === null) return unauthorized("The Authorization header must use the Bearer scheme.");
  return (await check(match[1] as string)) ? undefined : unauthorized("The API key is not valid.", "invalid_token");
}

/** Middleware answering 401 (RFC 6750 §3) unless the request carries one of the accepted API keys. */
export function requireApiKey(keys: ApiKeyCheck): Middleware {
  const check = compileApiKeys(keys);
  const middleware: Middleware = (next) => async (request) => {
    const denied = await authenticate(request, check);
    return denied === undefined ? next(request) : denied.toResponse();
  };
  return describeMiddleware(middleware, {
    responses: {
      401: {
        description: "No valid secret API key (Authorization: Bearer <key>).",
        headers: {
          "WWW-Authenticate": {
            description:
              'The Bearer challenge (RFC 6750 §3): Bearer realm="webhooks", with error="invalid_token" when the key sent is not valid.',
          },
        },
      },
    },
    security: {
      webhookApiKey: { type: "http", scheme: "bearer", description: "The secret API key of the webhook endpoint API." },
    },
  });
}
