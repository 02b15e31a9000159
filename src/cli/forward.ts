/**
 * `listen --forward-to`: a verified delivery passed on as a gateway would (RFC 9110 §7.6), with the same method,
 * end-to-end header fields and bytes, and the answer taken as it comes.
 */
import { empty, type HttpRequest, type HttpResponse } from "../http/message";
import { linkedAbort } from "./linked-abort";
import { noAnswerReason } from "./output";

/** The forward's answer; `error` when the URL did not answer (the sender then gets 502), `location` of a redirect. */
export type Forwarded = HttpResponse & { error?: string; location?: string };

// RFC 9110 §7.6.1: connection-specific fields a proxy removes whether or not Connection names them (Proxy-Connection,
// Keep-Alive, TE, Transfer-Encoding, Upgrade), plus Connection itself; Host and Content-Length are fetch's to set,
// and Expect (§10.1.1) asked this hop, not the next.
const HOP_BY_HOP = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "te",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);

/**
 * The fields of `headers` to forward: without the hop-by-hop ones, nor those the Connection field names
 * (RFC 9110 §7.6.1: `Connection = #connection-option`, each option a field name removed before forwarding).
 * @example endToEnd({ connection: "x-trace", "x-trace": "1", "webhook-id": "msg_1" }) // { "webhook-id": "msg_1" }
 */
export function endToEnd(headers: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const named = new Set(
    (headers.connection ?? "")
      .split(",")
      .map((option) => option.trim().toLowerCase())
      .filter((option) => option !== ""),
  );
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) kept[name] = value;
  }
  return kept;
}

/** How long a forward may take, answer included, before the sender gets 502. */
const FORWARD_TIMEOUT_MS = 30_000;

/**
 * POSTs a verified delivery to `to`. A redirect is not followed (`redirect: "manual"`): fetch would turn a 301 or
 * 302 into a GET without the body (RFC 9110 §15.4.2, §15.4.3 allow it), so the forward's status is the redirect.
 * @param stop Aborts the forward (listen stopping): a target that never answers must not keep the process alive.
 * @example const answer = await forward("http://localhost:3000/webhooks", request);
 */
export async function forward(to: string, request: HttpRequest, stop?: AbortSignal): Promise<Forwarded> {
  const aborts = linkedAbort([AbortSignal.timeout(FORWARD_TIMEOUT_MS), stop]);
  try {
    const response = await fetch(to, {
      method: "POST",
      headers: endToEnd(request.headers),
      body: new Uint8Array(request.body),
      redirect: "manual",
      signal: aborts.controller.signal,
    });
    const type = response.headers.get("content-type");
    const location = response.status >= 300 && response.status < 400 ? response.headers.get("location") : null;
    return {
      status: response.status,
      headers: type ? { "content-type": type } : {},
      body: new Uint8Array(await response.arrayBuffer()),
      ...(location === null ? {} : { location }),
    };
  } catch (error) {
    return { ...empty(502), error: noAnswerReason(error) };
  } finally {
    // `stop` outlives every forward: a listener left on it per delivery would pile up.
    aborts.release();
  }
}
