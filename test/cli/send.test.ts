/**
 * `rest-webhooks send`, spawned, to a receiver that verifies with the `standardwebhooks` package; with
 * `--schedule`, failures are retried on the library's backoff until the attempts run out.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSecret } from "../../src/webhooks/signing/index";
import { type Receiver, startReceiver } from "../examples/shop-harness";
import { runCli } from "./run-cli";

// The tests run side by side: each sends its own event types (or, for misuse, nothing), and the redirect tests
// use servers of their own.
describe.concurrent("rest-webhooks send", () => {
  let receiver: Receiver;
  const secret = generateSecret();
  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.secret = secret;
  });
  afterAll(() => receiver.close());

  it("signs an event that the standardwebhooks package verifies, and prints the response", async () => {
    const run = await runCli([
      "send",
      receiver.url,
      "--type",
      "order.created",
      "--data",
      '{"id":"ord_1","total":450}',
      "--secret",
      secret,
      "--id",
      "msg_send_1",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("✓ attempt 1/1 (msg_send_1): HTTP 204");
    expect(receiver.received).toContainEqual({
      id: "msg_send_1",
      type: "order.created",
      data: { id: "ord_1", total: 450 },
      attempt: 1,
    });
    expect(receiver.refused).toBe(0);
  });

  it("retries a failing consumer on the schedule, the same id each time, and exits 1 when it gives up", async () => {
    receiver.failing.set("order.failed", 503);
    const run = await runCli([
      "send",
      receiver.url,
      "--type",
      "order.failed",
      "--secret",
      secret,
      "--id",
      "msg_send_2",
      "--schedule",
      "0,10,10",
      "--json",
    ]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { delivered: boolean; attempts: { attempt: number; status: number }[] };
    expect(report.delivered).toBe(false);
    expect(report.attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
    ]);
    expect(receiver.refused).toBe(0); // each attempt signed afresh, each verified
  });

  it('reads --data @file saved with a UTF-8 byte order mark (RFC 8259 §8.1; regression: "not JSON")', async () => {
    const file = join(mkdtempSync(join(tmpdir(), "rest-webhooks-send-")), "event.json");
    writeFileSync(file, '\uFEFF{"id":"ord_bom"}');
    const run = await runCli(["send", receiver.url, "--type", "order.bom", "--data", `@${file}`, "--secret", secret]);
    expect(run.code).toBe(0);
    expect(receiver.received.find((event) => event.type === "order.bom")?.data).toEqual({ id: "ord_bom" });
  });

  describe("misuse: exit 2 with a hint, never a stack trace", () => {
    it("an unreadable --data @file (regression: ENOENT stack trace, exit 1)", async () => {
      const run = await runCli([
        "send",
        receiver.url,
        "--type",
        "t",
        "--data",
        "@/nonexistent/event.json",
        "--secret",
        secret,
      ]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('cannot read --data "/nonexistent/event.json": no such file');
      expect(run.stderr).not.toMatch(/^\s+at /m);
    });

    // Regression: a delay past what a timer can wait (2^31 - 1 ms) fired at once, after "waiting 10000000.0 s".
    it("a --schedule delay longer than a timer can wait", async () => {
      const run = await runCli(["send", receiver.url, "--type", "t", "--secret", secret, "--schedule", "0,2147483648"]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("--schedule delays are at most 2147483647 ms");
      expect(receiver.received.some((event) => event.type === "t")).toBe(false);
    });

    it("--repeat beside --schedule, which sets the attempts too (regression: --repeat silently ignored)", async () => {
      const run = await runCli([
        "send",
        receiver.url,
        "--type",
        "t",
        "--secret",
        secret,
        "--schedule",
        "0",
        "--repeat",
        "5",
      ]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("--repeat and --schedule both set the attempts");
    });
  });

  it("prints its help with --json too (regression: nothing printed)", async () => {
    const [run, top] = await Promise.all([runCli(["send", "--help", "--json"]), runCli(["--help", "--json"])]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: rest-webhooks send");
    expect(top.stdout).toContain("Usage: rest-webhooks <command>");
  });

  it("says when nothing answers", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const run = await runCli(["send", `http://127.0.0.1:${port}/none`, "--type", "t", "--secret", secret]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/attempt 1\/1 \(msg_\w+\): no answer \(ECONNREFUSED\)/);
  });

  // Regression: send followed redirects, so a 307 to a 200 reported delivered (exit 0), and a 302 became a GET with
  // no body that still carried the signature. The library's rule: a 3xx is a failure, not followed.
  it.each([[307], [302]])("reports a %i as a failed attempt and does not follow it (exit 1)", async (status) => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push(`${req.method} ${req.url}`);
        if (req.url === "/hook") res.writeHead(status, { location: "/elsewhere" }).end();
        else res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const target = `http://127.0.0.1:${port}/hook`;
      const [run, json] = await Promise.all([
        runCli(["send", target, "--type", "t", "--secret", secret, "--id", "msg_redirect"]),
        runCli(["send", target, "--type", "t", "--secret", secret, "--json"]),
      ]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(
        `✗ attempt 1/1 (msg_redirect): HTTP ${status} (redirect to /elsewhere, not followed)`,
      );
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ delivered: false, attempts: [{ status }] });
      expect(seen).toEqual(["POST /hook", "POST /hook"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
