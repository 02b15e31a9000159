// One attempt through an egress proxy, in a process of its own: the test starts it with NODE_EXTRA_CA_CERTS naming
// its own certificate, which Node reads only at start-up. PROXY_URL and TARGET_URL say where; the endpoint's name
// resolves to 127.0.0.1. Prints the attempt's result as JSON.
import { createDispatcher } from "../../../../../src/webhooks/delivery/node/dispatcher";

const dispatcher = createDispatcher({
  proxy: process.env.PROXY_URL,
  urlPolicy: { allow: ["127.0.0.1"] },
  resolve: async () => [{ address: "127.0.0.1", family: 4 }],
  timeoutMs: 10_000,
});
const result = await dispatcher.dispatch({
  url: process.env.TARGET_URL as string,
  headers: { "content-type": "application/json" },
  body: '{"id":"evt_tls"}',
});
dispatcher.close();
process.stdout.write(JSON.stringify(result));
