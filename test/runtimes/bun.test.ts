/** The Fetch adapter's contract and a signed webhook round trip, on Bun (`bun test`, which runs vitest suites). */
import { describe, expect, it } from "vitest";
import { run, runtimeBinary } from "../support/runtimes";
import { checkExampleServer } from "./serve-example";

describe("on Bun", () => {
  it("passes the Fetch adapter contract and delivers a signed webhook over Bun.serve", async () => {
    const bun = runtimeBinary("bun");
    const { status, output } = await run(bun, ["test", "./test/runtimes/fetch-runtime.suite.ts"]);
    const passed = Number(/^\s*(\d+) pass$/m.exec(output)?.[1] ?? 0);
    const failed = Number(/^\s*(\d+) fail$/m.exec(output)?.[1] ?? -1);
    expect({ status, failed }, output).toStrictEqual({ status: 0, failed: 0 });
    expect(passed, output).toBeGreaterThan(30);
    expect(output).toMatch(/\(pass\) on bun > really runs on Bun or Deno/);
    expect(output).toMatch(/\(pass\) on bun > delivers a signed webhook end to end/);
  });

  it("runs examples/frameworks/bun.ts as written: the API and a signed webhook over Bun.serve", {
    timeout: 60_000,
  }, async () => {
    await checkExampleServer(runtimeBinary("bun"), ["examples/frameworks/bun.ts"]);
  });
});
