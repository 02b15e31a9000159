import { badRequestTarget } from "../http/adapter-options";
import { isDotSegment } from "../http/dot-segments";
import type { HttpProblem, HttpProblemCode } from "../http/problem";

/**
 * The 400 `bad_request_target` a framework integration (Express, Fastify) answers for a target whose path a URL
 * parser would rewrite: a dot-segment (`..`, `.`, `%2e` spelled any way) or a `\`. The framework has already matched
 * its mounts, prefixes, routes and hooks on the path as sent, and the handler would get the resolved one (RFC 3986
 * §5.2.4, as on node), so `/public/../admin/users` would reach an `/admin/users` route past a guard on `/admin`.
 * `undefined` for any other target. Internal to the package.
 * @param raw the request target as node:http gives it (`req.url`).
 * @param framework the framework's name, for the problem's detail.
 */
export function mountedTargetProblem(raw: string, framework: string): HttpProblem<HttpProblemCode> | undefined {
  // RFC 3986 §3.3: the path ends at the first "?" or "#"; dots or "\" in the query are data.
  let end = raw.indexOf("?");
  const hash = raw.indexOf("#");
  if (hash !== -1 && (end === -1 || hash < end)) end = hash;
  const path = end === -1 ? raw : raw.slice(0, end);
  // bench/adapters: an ordinary path has none of these and costs three searches.
  const backslash = path.indexOf("\\") !== -1;
  if (!backslash && path.indexOf("/.") === -1 && path.indexOf("%2") === -1) return undefined;
  // WHATWG URL path state: "\" is "/" in an http(s) URL's path, and dot-segments are removed.
  if (!backslash && !path.split(/\//).some(isDotSegment)) return undefined;
  return badRequestTarget(
    `The request target's path has a dot-segment or a "\\", which ${framework} matches as sent but a URL parser ` +
      "resolves: send the path resolved (RFC 3986 §5.2.4).",
  );
}
