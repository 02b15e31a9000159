import type { IncomingMessage } from "node:http";
import { bodyTooLarge, contentLength } from "../http/adapter-options";
import { type BodyStart, startBody } from "../node/request";
import { bodyConsumed, type ExpressIntegrationError } from "./errors";

/** An Express request: node's, plus whatever a body parser left in `body`. */
export type ExpressRequest = IncomingMessage & { body?: unknown };

/**
 * The request body as the node adapter takes it. Bytes `express.raw()` already read are used as they are;
 * a body another parser consumed (the stream has ended, `req.body` holds its parse) is a misconfiguration,
 * never a body to re-serialize: a signature covers the bytes, not the parsed value.
 */
export function expressBody(req: ExpressRequest, limit: number): BodyStart | ExpressIntegrationError {
  const parsed = req.body;
  if (parsed instanceof Uint8Array) return parsed.byteLength > limit ? bodyTooLarge(limit) : parsed;
  const declared = contentLength(req.headers["content-length"]);
  // RFC 9112 §6.3: no Content-Length and no Transfer-Encoding means no body, whatever a parser left behind.
  const hasBody = declared === undefined ? req.headers["transfer-encoding"] !== undefined : declared !== 0;
  if (hasBody && (parsed !== undefined || req.readableEnded))
    return bodyConsumed(req.method ?? "GET", req.url ?? "/", limit);
  return startBody(req, limit);
}
