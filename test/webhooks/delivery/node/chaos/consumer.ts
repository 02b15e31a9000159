// Chaos consumer (child process): answers 5xx, hangs, resets or is down at random; counts what it accepted.
import { createServer } from "node:http";
import { verify } from "../../../../../src/webhooks/signing/index";

const port = Number(process.env.CHAOS_PORT);
const secret = String(process.env.CHAOS_SECRET);
const seen = new Map<string, number>();
let accepted = 0;
let rejectedSignatures = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const roll = Math.random();
    if (roll < 0.12) return res.writeHead(500 + Math.floor(Math.random() * 4)).end("chaos");
    if (roll < 0.16) {
      // Hang past the worker's time-out, then give up.
      setTimeout(() => res.destroy(), 1_000).unref();
      return;
    }
    if (roll < 0.2) return req.socket.destroy();
    const body = Buffer.concat(chunks);
    const checked = verify({ body, headers: req.headers as Record<string, string>, secrets: secret });
    if (!checked.ok) {
      rejectedSignatures++;
      return res.writeHead(400).end("bad signature");
    }
    const id = String(req.headers["webhook-id"]);
    res.writeHead(200).end("ok", () => {
      seen.set(id, (seen.get(id) ?? 0) + 1);
      accepted++;
    });
  });
});

let down = false;
function listen(): void {
  server.listen(port, "127.0.0.1");
}
listen();
// Every so often the server goes down for a moment: connections are refused.
setInterval(() => {
  if (down) return;
  down = true;
  server.close();
  server.closeAllConnections();
  setTimeout(() => {
    down = false;
    listen();
  }, 250);
}, 1_500);

process.on("message", (message) => {
  if (message === "stats") process.send?.({ unique: seen.size, accepted, rejectedSignatures });
});
process.on("disconnect", () => process.exit(0));
