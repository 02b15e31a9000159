import type { AddressInfo } from "node:net";
import type { AdapterOptions, Handler } from "../../../src/http/index";
import { createServer } from "../../../src/node/index";

/** Serves `handler` on an ephemeral loopback port. */
export async function listen(
  handler: Handler,
  options: AdapterOptions = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(handler, options);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A gate a test opens by hand: ordering is proven by who waits on whom, never by timing. */
export function latch(): { promise: Promise<void>; open: () => void; readonly isOpen: boolean } {
  let open = () => {};
  let isOpen = false;
  const promise = new Promise<void>((resolve) => {
    open = () => {
      isOpen = true;
      resolve();
    };
  });
  return {
    promise,
    open: () => open(),
    get isOpen() {
      return isOpen;
    },
  };
}

/** Unix seconds now. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
