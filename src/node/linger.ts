import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpResponse } from "../http/message";
import { sendOrDestroy, writeWithoutEnd } from "./response";

/**
 * Sends a response refusing the body (413) and closes the connection only once the client has finished sending,
 * or after `lingerMs` or `lingerBytes` of discarded body, whichever comes first. Closing at once would make the
 * kernel reset the connection when more body arrives, and a client still writing would see the reset instead of
 * the 413 (RFC 9112 §9.6: a server that closes should first read what is in flight, "lingering close").
 */
export function sendAndLinger(
  req: IncomingMessage,
  res: ServerResponse,
  response: HttpResponse,
  bounds: { lingerMs: number; lingerBytes: number },
): void {
  if (req.complete || req.destroyed || res.headersSent) {
    sendOrDestroy(res, response);
    return;
  }
  let drained = 0;
  let done = false;
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > bounds.lingerBytes) finish();
  };
  const finish = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off("data", onData);
    req.off("end", finish);
    req.off("close", finish);
    req.off("error", finish);
    // The response carries `Connection: close`: node closes the connection once it is written.
    if (!res.writableEnded) res.end();
  };
  const timer = setTimeout(finish, bounds.lingerMs);
  timer.unref();
  req.on("data", onData);
  req.once("end", finish);
  req.once("close", finish);
  req.once("error", finish);
  if (!writeWithoutEnd(res, response)) {
    finish();
    return;
  }
  req.resume();
}
