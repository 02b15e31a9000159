/** The peer address a request reports, also once its client has reset the connection. */
import { describe, expect, it } from "vitest";
import { empty } from "../../src/http/message";
import { serveResetRequests } from "../support/reset-after-request";

describe("request.remoteAddress", () => {
  // Regression: node:http asks the OS when the address is first read; after the client's RST the OS no longer knows
  // it, so a handler (clientIp, the rate limiter's default key) read undefined, and such requests went unlimited.
  it("is the peer's address even when the client reset the connection after sending its request", async () => {
    const seen: (string | undefined)[] = [];
    await serveResetRequests((request) => {
      seen.push(request.remoteAddress);
      return empty(204);
    }, 20);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((address) => address !== "127.0.0.1")).toEqual([]);
  });
});
