/**
 * `npm run demo` keeps working: it runs to the end and its summary tells the whole story.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { bundledOnce } from "../support/bundled-script";

// Bundled and started with plain node: tsx compiled it in the child, a second or more of CPU on a busy machine.
const demo = bundledOnce(fileURLToPath(new URL("../../examples/demo.ts", import.meta.url)));

it("walks the whole story and prints the summary", async () => {
  const child = spawn(process.execPath, [await demo()], {
    env: { ...process.env, DATABASE_URL: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  clearTimeout(timer);
  expect(output).toContain("compressed demo schedule: 0 s, 1 s, 2 s");
  expect(code, output).toBe(0);
  expect(output).toContain("two POSTs with one Idempotency-Key → 1 order");
  expect(output).toContain("conditional GET → 304");
  expect(output).toContain("stale If-Match → 412");
  expect(output).toMatch(/attempt 2 at \+\d+\.\d s → 503/);
  expect(output).toMatch(/attempt 3 at \+\d+\.\d s → 202/);
  expect(output).toMatch(/GET \/orders\?status=shipped → 1 order for the admin, 1 for usr_/);
  expect(output).toContain("forged webhook → 400");
  expect(output).toMatch(/order\.shipped +ord_/);
}, 60_000);
