/** The peer address a request reports, also once its client has reset the connection. */
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { empty } from "../../src/http/message";
import { createServer } from "../../src/node/index";
import { sendThenReset } from "../support/reset-after-request";

describe("request.remoteAddress", () => {
  // Regression: node:http asks the OS when the address is first read; after the client's RST the OS no longer knows
  // it, so a handler (clientIp, the rate limiter's default key) read undefined, and such requests went unlimited.
  it("is the peer's address even when the client reset the connection after sending its request", async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((request) => {
      seen.push(request.remoteAddress);
      return empty(204);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      for (let i = 0; i < 20; i++) {
        await sendThenReset(server, port, "POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi");
      }
      await new Promise((resolve) => server.close(resolve));
    } finally {
      server.closeAllConnections();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((address) => address !== "127.0.0.1")).toEqual([]);
  });
});
