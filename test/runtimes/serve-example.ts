/**
 * Runs an example server file (examples/frameworks/bun.ts, deno.ts) as a user would, on an ephemeral port, and
 * checks what it serves over the runtime's own HTTP server: the items API, the consumer's 405, a signed delivery.
 */
import { spawn } from "node:child_process";
import { expect } from "vitest";
import { generateSecret, sign } from "../../src/webhooks/signing";
import { root } from "../support/runtimes";

/** Starts `binary args` (a child this test owns) and resolves with the URL it prints, or rejects with its output. */
function start(binary: string, args: readonly string[], env: Record<string, string>) {
  const child = spawn(binary, args, { cwd: root, env: { ...process.env, ...env, PORT: "0", NO_COLOR: "1" } });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    await exited;
  };
  const url = new Promise<string>((resolve, reject) => {
    // Gives up on a child that neither listens nor exits, so a hang fails the test instead of stalling it.
    const timer = setTimeout(() => reject(new Error(`no "listening on" line within 40 s:\n${output}`)), 40_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (listening === null) return;
      clearTimeout(timer);
      resolve(listening[1] as string);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before listening:\n${output}`));
    });
  });
  return { url, stop, output: () => output };
}

/** Runs the example and checks it end to end; the child is stopped whatever happens. */
export async function checkExampleServer(binary: string, args: readonly string[]): Promise<void> {
  const secret = generateSecret();
  const server = start(binary, args, { WEBHOOK_SECRET: secret });
  try {
    const base = await server.url;
    const items = await fetch(`${base}/api/items`);
    expect(await items.json(), server.output()).toStrictEqual([]);
    const other = await fetch(`${base}/webhooks`);
    await other.arrayBuffer();
    expect(other.status).toBe(405);
    expect(other.headers.get("allow")).toContain("POST");
    // Bytes JSON.stringify would not produce: the signature holds only on the raw body.
    const body = '{ "type": "order.shipped",\n  "data": { "order": "msg_example" } }';
    const headers = sign({ id: "msg_example", timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
    const delivered = await fetch(`${base}/webhooks`, { method: "POST", body, headers });
    await delivered.arrayBuffer();
    expect(delivered.status, server.output()).toBe(202);
    const tampered = await fetch(`${base}/webhooks`, { method: "POST", body: `${body} `, headers });
    expect(tampered.headers.get("content-type")).toBe("application/problem+json");
    expect(tampered.status).toBe(400);
  } finally {
    await server.stop();
  }
}
