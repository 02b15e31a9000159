import type { IncomingMessage } from "node:http";
import { bodyConsumed, bodyTooLarge, contentLength } from "../http/adapter-options";
import { contentCodingProblem } from "../http/content-coding";
import { type BodyStart, type ConsumedCause, startBody } from "../node/request";

/** An Express request: node's, plus whatever a body parser left in `body`. */
export type ExpressRequest = IncomingMessage & { body?: unknown };

/**
 * What becomes of bytes `express.raw()` decoded from a `Content-Encoding`: `"refuse"` answers the node adapter's 500
 * `body_consumed` (the handler would see other bytes than node gives it); `"pass"` hands them on, for a handler
 * that answers a coded request from its headers alone, before the body (the webhook consumer's 415).
 */
export type DecodedBodies = "refuse" | "pass";

/**
 * The request body as the node adapter takes it. Bytes `express.raw()` already read are used as they are;
 * a body another parser or middleware consumed (`req.body` holds its parse, or the stream gave its bytes to another
 * reader) is a misconfiguration, never a body to re-serialize: a signature covers the bytes, not the parsed value.
 * Either way the answer is the node adapter's 500 `body_consumed`, with `consumed`'s cause; bytes `express.raw()`
 * decoded (its default `inflate: true` on a `Content-Encoding: gzip` body, with or without a Content-Length) get it
 * too, with `decoded`'s, unless `decodedBodies` is `"pass"`.
 */
export function expressBody(
  req: ExpressRequest,
  limit: number,
  consumed: ConsumedCause,
  decoded: ConsumedCause,
  decodedBodies: DecodedBodies = "refuse",
): BodyStart {
  const parsed = req.body;
  const declared = contentLength(req.headers["content-length"]);
  if (parsed instanceof Uint8Array) {
    // body-parser answers a coded body itself (415) when told inflate: false, so bytes it left beside a
    // Content-Encoding other than identity are decoded ones (RFC 9110 §8.4), chunked as well as with a Content-Length.
    if (contentCodingProblem({ "content-encoding": req.headers["content-encoding"] }) !== undefined) {
      if (decodedBodies === "refuse") return bodyConsumed(decoded(req));
      // RFC 9110 §8.6: Content-Length is the length of the content as sent; raw-body checks it for the bytes it passes
      // through undecoded, so other bytes are not what was sent (and signed).
    } else if (declared !== undefined && parsed.byteLength !== declared) return bodyConsumed(decoded(req));
    return parsed.byteLength > limit ? bodyTooLarge(limit) : parsed;
  }
  // RFC 9112 §6.3: no Content-Length and no Transfer-Encoding means no body, whatever a parser left behind.
  const hasBody = declared === undefined ? req.headers["transfer-encoding"] !== undefined : declared !== 0;
  // A parser that read an empty chunked body leaves its parse of nothing (express.json(): {}), but lost no byte: the
  // stream ended without giving any ('data' never emitted), and the node adapter serves it empty.
  const emptyRead = req.readableEnded && !req.readableDidRead;
  if (hasBody && parsed !== undefined && !emptyRead) return bodyConsumed(consumed(req));
  // A stream another middleware read (readableDidRead) is told apart by the node adapter, with the same cause.
  return startBody(req, limit, consumed);
}
