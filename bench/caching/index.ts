/**
 * bench/caching: strong ETag generation against `etag`, and the 304 decision against `fresh`, in one process.
 * Run with `npm run bench caching`. Ends with one `ratio:` line per comparison.
 */
import { arch, cpus } from "node:os";
import { runEtag } from "./etag";
import { runFresh } from "./fresh";
import { ratioLine, sinkValue } from "./measure";

console.log(`node ${process.version} ${arch()} · ${cpus().length} cores (${cpus()[0]?.model ?? "?"})`);
console.log("throughput is ops per CPU-second of this process (equal to ops/s on a quiet machine)");
const results = [...runEtag(), ...runFresh()];
console.log(`\n(sink ${sinkValue()})`);
for (const result of results) console.log(ratioLine(result));
