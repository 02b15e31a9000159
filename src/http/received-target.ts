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

/**
 * Where an adapter's request carries the path a framework mounted the router under, when the request's `path` is
 * relative to it: Express's `req.baseUrl` for `app.use("/api", ...)` (src/node/request.ts). `Symbol.for`, as above.
 */
export const MOUNT_POINT: unique symbol = Symbol.for("rest-webhooks.mount-point");

/** A request that may carry its mount point. */
export type MountPointCarrier = HttpRequest & { readonly [MOUNT_POINT]?: string | undefined };

/**
 * The path the router is mounted under (`/api`), which the locations it makes itself (a create's `Location`, a slash
 * redirect) begin with so that they point inside the mount; `""` at the root. A mount point that is not a path, or
 * that would make a location a network-path reference (`//host`, `/\host`, RFC 3986 §4.2), counts as none.
 */
export function mountPointOf(request: HttpRequest): string {
  const mount = (request as MountPointCarrier)[MOUNT_POINT];
  if (mount === undefined || !mount.startsWith("/") || mount[1] === "/" || mount[1] === "\\") return "";
  return mount.endsWith("/") ? mount.slice(0, -1) : mount;
}
