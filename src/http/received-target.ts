import type { HttpRequest } from "./message";

/**
 * Where an adapter's request carries its target as received when its `path` is relative to a mount point: Express
 * (and Connect) strip `/orders` from `req.url` for `app.use("/orders", ...)` and keep the target as sent in
 * `req.originalUrl` (src/node/request.ts). `Symbol.for`, so the ESM and CJS copies of the package agree on the key.
 */
export const RECEIVED_TARGET: unique symbol = Symbol.for("rest-webhooks.received-target");

/** A request that may carry its target as received. */
export type ReceivedTargetCarrier = HttpRequest & { readonly [RECEIVED_TARGET]?: string | undefined };

/**
 * The request target as the client sent it, in origin-form (`path` and `?query`): the adapter's record of it when
 * a framework rewrote the path below a mount point, else `path` and `search`.
 */
export function receivedTarget(request: HttpRequest): string {
  const received = (request as ReceivedTargetCarrier)[RECEIVED_TARGET];
  if (received !== undefined) return received;
  return request.search.length > 0 ? `${request.path}?${request.search}` : request.path;
}
