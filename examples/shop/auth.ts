import { errors, jwtVerify } from "jose";
import type { Handler, HttpRequest } from "rest-webhooks/http";
import { describeMiddleware, HttpProblem } from "rest-webhooks/http";
import type { Middleware } from "rest-webhooks/routing";
import { z } from "zod";

/** Who sent a request: the token's subject (a user id), and whether its scope holds `admin`. */
export interface Principal {
  readonly subject: string;
  readonly admin: boolean;
}

// String.prototype.isWellFormed is ES2024 (Node 20 has it); the project's lib stops at ES2023.
type WellFormed = { isWellFormed(): boolean };

/**
 * Whether a subject can name a user: it is looked up in PostgreSQL `text` columns, which hold no U+0000 and no lone
 * surrogate (UTF-8 has no form for one, RFC 3629 §3; I-JSON refuses it, RFC 7493 §2.1). PostgreSQL would fail the
 * query (a 500) or read U+FFFD, where the memory storage matches the string as is.
 */
function storableSubject(sub: string): boolean {
  return !sub.includes("\u0000") && (sub as unknown as WellFormed).isWellFormed();
}

const claimsSchema = z.object({
  sub: z.string().min(1).max(128).refine(storableSubject),
  scope: z.string().max(1024).optional(),
});

// RFC 6750 §2.1: b64token, optionally padded.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const REALM = 'Bearer realm="shop"';

// Where an authenticated request carries its principal: a symbol-keyed property is a plain store, where a
// WeakMap entry per request costs about a microsecond in writes and garbage collection.
const PRINCIPAL = Symbol("shop.principal");
type Carrier = HttpRequest & { [PRINCIPAL]?: Principal };

/** The principal the authentication middleware attached to `request`. */
export function principalOf(request: HttpRequest): Principal {
  const principal = (request as Carrier)[PRINCIPAL];
  // Routes behind `authenticate` always have one: a missing principal is a wiring mistake.
  if (principal === undefined) throw new TypeError("principalOf: the request did not pass through authenticate()");
  return principal;
}

function unauthorized(detail: string, challenge: string, code = "unauthorized"): HttpProblem {
  // RFC 6750 §3 / RFC 9110 §11.6.1: every 401 carries a WWW-Authenticate challenge.
  return new HttpProblem({ status: 401, code, detail, headers: { "www-authenticate": challenge } });
}

function invalidToken(detail: string): HttpProblem {
  // RFC 6750 §3.1: error="invalid_token" for a token that is expired, revoked, malformed or otherwise invalid.
  const description = detail.replaceAll('"', "'");
  return unauthorized(detail, `${REALM}, error="invalid_token", error_description="${description}"`, "invalid_token");
}

/** The HS256 verification key for a secret (a CryptoKey, imported once). */
export function importHmacKey(secret: string): Promise<CryptoKey> {
  const bytes = new TextEncoder().encode(secret);
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
}

/** The principal a verified token's payload names, or the 401 problem when its claims are not usable. */
function principalFrom(payload: unknown): Principal | HttpProblem {
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) return invalidToken("The token needs a sub claim naming a user (and scope, if any, a string).");
  const scopes = claims.data.scope?.split(" ") ?? [];
  return { subject: claims.data.sub, admin: scopes.includes("admin") };
}

/** The 401 problem for a token jose refused; anything else is not about the token, and is rethrown. */
function refused(error: unknown): HttpProblem {
  if (error instanceof errors.JWTExpired) return invalidToken("The token has expired.");
  if (error instanceof errors.JOSEError) return invalidToken("The token is not valid.");
  throw error;
}

/** Verifies `Authorization: Bearer <JWT>` (HS256) and returns the principal, or the 401 problem. */
export function createVerifier(secret: string): Verifier {
  // Imported once: handing jose the raw bytes would import the key again on every request.
  const importing = importHmacKey(secret);
  let imported: CryptoKey | undefined;
  void importing.then((key) => {
    imported = key;
  });
  // A token without `exp` would never expire (RFC 7519 §4.1.4 makes the claim optional; this shop does not).
  const options = { algorithms: ["HS256"], requiredClaims: ["exp"] };
  // A promise chain rather than an async function: no suspended frame is kept per request in flight.
  return (request) => {
    const header = request.headers.authorization;
    if (header === undefined) {
      return Promise.resolve(unauthorized("Send a token as Authorization: Bearer <JWT>.", REALM));
    }
    const match = BEARER.exec(header);
    if (match === null) return Promise.resolve(invalidToken("The Authorization header must use the Bearer scheme."));
    const token = match[1] as string;
    const verified =
      imported === undefined
        ? importing.then((key) => jwtVerify(token, key, options))
        : jwtVerify(token, imported, options);
    return verified.then(({ payload }) => principalFrom(payload), refused);
  };
}

/** Checks a request's token: the principal, or the 401 problem. */
export type Verifier = (request: HttpRequest) => Promise<Principal | HttpProblem>;

/** Decides whether an authenticated principal may make a request: `undefined` to let it through, or the problem. */
export type Authorize = (principal: Principal, request: HttpRequest) => HttpProblem | undefined;

/**
 * Middleware answering 401 without a valid token, then `authorize`'s problem (403) when the principal may not
 * make the request, and recording the principal for {@link principalOf}. One layer for both checks.
 */
export function authenticate(verify: Verifier, authorize?: Authorize): Middleware {
  const middleware: Middleware =
    (next: Handler): Handler =>
    (request) =>
      verify(request).then((principal) => {
        if (principal instanceof HttpProblem) return principal.toResponse();
        const problem = authorize?.(principal, request);
        if (problem !== undefined) return problem.toResponse();
        (request as Carrier)[PRINCIPAL] = principal;
        return next(request);
      });
  // For OpenAPI: the statuses this layer answers, and the scheme it enforces.
  return describeMiddleware(middleware, {
    responses: {
      401: {
        description: "No valid bearer token.",
        headers: { "WWW-Authenticate": { description: "The Bearer challenge (RFC 6750 §3)." } },
      },
      ...(authorize === undefined ? {} : { 403: { description: "The token's user may not reach this resource." } }),
    },
    security: {
      bearerAuth: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "JWT",
        description: "HS256; `sub` is a user id, and a `scope` containing `admin` reaches everything.",
      },
    },
  });
}

/** Whether `principal` may act on the user `userId` (its own, or any with `admin`). */
export function mayAccessUser(principal: Principal, userId: string): boolean {
  return principal.admin || principal.subject === userId;
}

/** The 403 problem for a principal reaching past its own user. */
export function forbidden(detail: string): HttpProblem {
  return new HttpProblem({ status: 403, code: "forbidden", detail });
}
