import { SignJWT } from "jose";

/** Claims of a shop token: the user it acts as, and `admin` to reach every user. */
export interface TokenClaims {
  sub: string;
  admin?: boolean;
  /** Lifetime, e.g. `"1h"` (jose's time span syntax). @default "1h" */
  expiresIn?: string;
}

/**
 * Issues an HS256 token the shop accepts (the demo, the tests and the benchmark use it; a real deployment gets
 * tokens from its identity provider).
 * @example const token = await issueToken(secret, { sub: "usr_1" });
 */
export function issueToken(secret: string, claims: TokenClaims): Promise<string> {
  const payload = claims.admin === true ? { scope: "admin" } : {};
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? "1h")
    .sign(new TextEncoder().encode(secret));
}
