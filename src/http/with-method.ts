import type { HttpRequest } from "./message";

// The fields of HttpRequest besides the method: read through the original, whose class may compute them lazily from
// private state (the adapters' `query`, `signal`, `remoteAddress` are getters over `#` fields).
const DELEGATED = ["path", "search", "query", "headers", "body", "remoteAddress", "signal"] as const;

/**
 * The same request with another method: every field reads through to the original (so lazily computed ones, such as
 * both adapters' `query` and `signal`, keep working), and anything else carried on the original (a router's match, a
 * middleware's symbol-keyed state) is still found, since the original is the copy's prototype. A spread
 * (`{ ...request, method }`) loses prototype getters; this does not.
 * @param request the request to copy.
 * @param method the method the copy carries (upper case).
 * @example const asGet = withMethod(request, "GET"); // a HEAD answered as GET (RFC 9110 §9.3.2)
 */
export function withMethod(request: HttpRequest, method: string): HttpRequest {
  const properties: PropertyDescriptorMap = { method: { value: method, enumerable: true } };
  for (const name of DELEGATED) properties[name] = { get: () => request[name], enumerable: true };
  return Object.create(request, properties) as HttpRequest;
}
