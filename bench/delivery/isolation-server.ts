// bench/delivery isolation: the consumers, in a process of their own. One port answers 200 at once (the healthy
// endpoint); the other accepts every request and never answers (the hanging endpoints, as a dead consumer behind a
// load balancer would).
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const held = new Set<ServerResponse>();
const healthy = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.end("ok"));
});
const hanging = createServer((req, res) => {
  req.resume();
  held.add(res);
});
healthy.keepAliveTimeout = 60_000;
hanging.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => healthy.listen(0, "127.0.0.1", resolve));
await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
process.send?.({
  healthy: (healthy.address() as AddressInfo).port,
  hanging: (hanging.address() as AddressInfo).port,
});
process.on("disconnect", () => process.exit(0));
