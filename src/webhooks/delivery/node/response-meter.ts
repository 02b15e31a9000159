import type { Socket } from "node:net";
import type { buildConnector } from "undici";
import { codedError, RESPONSE_CAP_CODE } from "./error-kind";

/**
 * The bytes a response may take beside its body (`maxResponseBytes`): its heads and its framing. undici reads a head
 * of at most 16 KiB (`http.maxHeaderSize`), so the final one, a few interim (1xx) ones and the chunk-size lines of a
 * body fit several times over.
 */
export const RESPONSE_FRAMING_BYTES = 65_536;

/**
 * Closes a connection once the response in flight on it has taken more than `maxBytes`. The dispatcher's handler
 * sees body bytes only, so bytes that are no body were read until the attempt's time-out, however many: any number
 * of 1xx responses (RFC 9110 §15.2), chunk extensions (RFC 9112 §7.1.1: unbounded in the grammar, ignored by the
 * recipient) and a chunk-size of endless leading zeros (§7.1, `1*HEXDIG`). undici sends one request at a time on a
 * connection, and only once the previous response has ended: so the bytes read since a request was last written
 * are that request's response.
 */
function meter(socket: Socket, maxBytes: number): void {
  let written = socket.bytesWritten;
  // bytesRead when the response in flight began, and at the last look.
  let start = socket.bytesRead;
  let seen = start;
  socket.on("readable", () => {
    if (socket.bytesWritten !== written) {
      written = socket.bytesWritten;
      start = seen;
    }
    seen = socket.bytesRead;
    if (seen - start > maxBytes) {
      socket.destroy(
        codedError(
          RESPONSE_CAP_CODE,
          `More than ${maxBytes} bytes arrived for one response (its heads, framing and body).`,
        ),
      );
    }
  });
}

/**
 * `connect` with every connection it opens metered: a response may take at most `maxBytes` (the dispatcher's
 * `maxResponseBytes` plus {@link RESPONSE_FRAMING_BYTES}), whatever its bytes are. Internal.
 */
export function meteredConnector(connect: buildConnector.connector, maxBytes: number): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...result) => {
      // undici's own connector fails with the error alone: `callback(error)`, no second argument.
      const socket = result[0] === null ? result[1] : undefined;
      if (socket) meter(socket, maxBytes);
      callback(...result);
    });
}
