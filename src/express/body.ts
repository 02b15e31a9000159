import type { IncomingMessage } from "node:http";
import { bodyConsumed, bodyTooLarge, contentLength } from "../http/adapter-options";
import { type BodyStart, type ConsumedCause, startBody } from "../node/request";

/** An Express request: node's, plus whatever a body parser left in `body`. */
export type ExpressRequest = IncomingMessage & { body?: unknown };

/**
 * The request body as the node adapter takes it. Bytes `express.raw()` already read are used as they are;
 * a body another parser or middleware consumed (`req.body` holds its parse, or the stream gave its bytes to another
 * reader) is a misconfiguration, never a body to re-serialize: a signature covers the bytes, not the parsed value.
 * Either way the answer is the node adapter's 500 `body_consumed`, with `consumed`'s cause.
 */
export function expressBody(req: ExpressRequest, limit: number, consumed: ConsumedCause): BodyStart {
  const parsed = req.body;
  if (parsed instanceof Uint8Array) return parsed.byteLength > limit ? bodyTooLarge(limit) : parsed;
  const declared = contentLength(req.headers["content-length"]);
  // RFC 9112 §6.3: no Content-Length and no Transfer-Encoding means no body, whatever a parser left behind.
  const hasBody = declared === undefined ? req.headers["transfer-encoding"] !== undefined : declared !== 0;
  if (hasBody && parsed !== undefined) return bodyConsumed(consumed(req));
  // A stream another middleware read (readableDidRead) is told apart by the node adapter, with the same cause.
  return startBody(req, limit, consumed);
}
