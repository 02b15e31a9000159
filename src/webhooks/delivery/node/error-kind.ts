import type { DeliveryErrorKind } from "../attempt";

/** The code the dispatcher's `lookup` fails with when every resolved address is forbidden. */
export const SSRF_BLOCKED_CODE = "ERR_WEBHOOK_SSRF_BLOCKED";
/** The code the dispatcher fails with, before any network work, when the URL policy refuses the URL itself. */
export const URL_REFUSED_CODE = "ERR_WEBHOOK_URL_REFUSED";
/** The code of the dispatcher's own per-attempt time-out. */
export const TIMEOUT_CODE = "ERR_WEBHOOK_TIMEOUT";
/** The code of an attempt whose egress proxy could not be reached or refused the tunnel. */
export const PROXY_CODE = "ERR_WEBHOOK_PROXY";
/** The code of a response read no further: past `maxResponseBytes`, or its heads and framing past their allowance. */
export const RESPONSE_CAP_CODE = "ERR_WEBHOOK_RESPONSE_CAP";

/** An Error carrying `code`, as Node's and undici's network errors do: {@link errorKindOf} reads it. */
export function codedError(code: string, message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

// ETIMEOUT: node:dns's code for a name server that did not answer in time (dns.TIMEOUT), which systemResolver uses
// too; ETIMEDOUT, a connection's, is a time-out of the attempt.
const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "ENODATA", "ESERVFAIL", "ETIMEOUT"]);
const RESET_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "HPE_INVALID_CONSTANT",
  // undici: the connection closed or failed under an exchange ("other side closed").
  "UND_ERR_SOCKET",
]);
const TIMEOUT_CODES = new Set([
  TIMEOUT_CODE,
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** Maps a Node.js or undici network error to the kind written in the delivery log. */
export function errorKindOf(error: unknown): DeliveryErrorKind {
  const code = typeof error === "object" && error !== null ? String((error as { code?: unknown }).code ?? "") : "";
  if (code === SSRF_BLOCKED_CODE) return "ssrf_blocked";
  if (code === URL_REFUSED_CODE) return "url_refused";
  if (code === PROXY_CODE) return "proxy";
  // Only reached before a final status line (an endless run of 1xx): once one arrived, the status decides.
  if (code === RESPONSE_CAP_CODE) return "response_too_large";
  if (TIMEOUT_CODES.has(code)) return "timeout";
  if (code === "ECONNREFUSED") return "connection_refused";
  if (RESET_CODES.has(code)) return "connection_reset";
  if (DNS_CODES.has(code)) return "dns";
  if (
    code.startsWith("ERR_TLS") ||
    code.startsWith("ERR_SSL") ||
    code.startsWith("CERT_") ||
    code.includes("SELF_SIGNED") ||
    code.startsWith("UNABLE_TO_") ||
    code === "EPROTO"
  ) {
    return "tls";
  }
  return "network";
}
