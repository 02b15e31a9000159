// One server of bench/adapters in its own process, so the contenders never share a JIT or an event loop: `node --import
// ./bench/support/as-built-loader.mjs serve.ts <kind>` prints its URL as one line, then serves until killed. Each line
// "cpu" on stdin is answered with the process's CPU time so far, in µs, as one line: the suite divides it by the
// requests served, a measure other processes on the machine disturb far less than requests/s.
import { createInterface } from "node:readline";
import { SERVERS, type ServerKind, startServer } from "./servers";

const which = process.argv[2] as ServerKind;
if (!(which in SERVERS)) throw new Error(`usage: serve.ts <${Object.keys(SERVERS).join("|")}>`);
const running = await startServer(which);
process.stdout.write(`${running.url}\n`);
createInterface({ input: process.stdin })
  .on("line", (line) => {
    if (line !== "cpu") return;
    const { user, system } = process.cpuUsage();
    process.stdout.write(`${user + system}\n`);
  })
  // The suite's process gone (a test that timed out, ^C) closes stdin: a server left behind would load the machine.
  .on("close", () => process.exit(0));
