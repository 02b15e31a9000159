// The load target (a second process): a keep-alive consumer that answers 200 at once and counts what it got.
// In "check" mode it verifies every signature and remembers every event id; while timing it verifies one request in
// 64, so that it stays cheap next to the sender and costs both contenders the same.
import { createServer } from "node:http";
import { verify } from "../../src/webhooks/signing/index";

type Message = { type: "secret"; secret: string } | { type: "reset"; check: boolean } | { type: "stats" };

let received = 0;
let badSignatures = 0;
let secret: string | undefined;
let check = false;
const ids = new Set<string>();
let cpu = process.cpuUsage();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    received++;
    if (secret !== undefined && (check || received % 64 === 1)) {
      const checked = verify({
        body: Buffer.concat(chunks),
        headers: req.headers as Record<string, string>,
        secrets: secret,
      });
      if (!checked.ok) badSignatures++;
      else if (check && checked.id !== undefined) ids.add(checked.id);
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.send?.({ port: typeof address === "object" && address !== null ? address.port : 0 });
});
process.on("message", (message: Message) => {
  if (message.type === "secret") secret = message.secret;
  if (message.type === "reset") {
    received = 0;
    badSignatures = 0;
    check = message.check;
    ids.clear();
    cpu = process.cpuUsage();
  }
  const used = process.cpuUsage(cpu);
  process.send?.({ received, badSignatures, unique: ids.size, cpuMicros: used.user + used.system });
});
process.on("disconnect", () => process.exit(0));
