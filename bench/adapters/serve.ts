// One server of bench/adapters in its own process, so the two contenders never share a JIT or an event
// loop: `node --import tsx serve.ts <adapter|bare>` prints its URL as one line, then serves until killed.
import { startServer } from "./servers";

const which = process.argv[2];
if (which !== "adapter" && which !== "bare") throw new Error("usage: serve.ts <adapter|bare>");
const running = await startServer(which);
process.stdout.write(`${running.url}\n`);
