/** `check --timeout`: the fetch that gives up on a server that accepts a request and never (wholly) answers it. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestTimeoutError, timedFetch } from "../../src/cli/request-timeout";

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (req.url === "/silent") return;
    if (req.url === "/not-modified") return res.writeHead(304).end();
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

/**
 * Stands in for undici where a test needs its answer within a short limit whatever the machine's load (on a loaded CI
 * machine, loopback headers took longer than 50 ms): headers at once, and a body or wait that fails with the signal's
 * reason when it aborts, as undici's do. `/silent` never answers, `/stalled` sends part of a body and stops.
 */
const scripted: typeof fetch = async (input, init) => {
  const { pathname } = new URL(input instanceof Request ? input.url : String(input));
  const signal = init?.signal ?? undefined;
  const onAbort = (act: (reason: unknown) => void) =>
    signal?.addEventListener("abort", () => act(signal.reason), { once: true });
  if (pathname === "/silent") return new Promise<Response>((_, reject) => onAbort(reject));
  if (pathname === "/stalled") {
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(new TextEncoder().encode('{"id":'));
        onAbort((reason) => stream.error(reason));
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
  }
  return Response.json({ ok: true });
};

async function failure(pending: Promise<unknown>): Promise<unknown> {
  try {
    await pending;
  } catch (error) {
    return error;
  }
  throw new Error("it did not fail");
}

describe("timedFetch()", () => {
  it("gives up on a request with no answer, naming it and the time-out (regression: waited for ever)", async () => {
    const error = await failure(timedFetch(0.05).fetch(`${base}/silent`, { method: "POST", body: "{}" }));
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({
      code: "cli_request_timeout",
      message: `POST ${base}/silent: no answer within 0.05 s (--timeout 0.05)`,
    });
  });

  it("gives up on a body that never ends after its headers", async () => {
    const response = await timedFetch(0.05, scripted).fetch(`${base}/stalled`);
    expect(response.status).toBe(200);
    expect(await failure(response.text())).toMatchObject({ code: "cli_request_timeout" });
  });

  it("passes whole answers through: status, headers, body, and a 304 without one", async () => {
    const timed = timedFetch(5);
    const ok = await timed.fetch(new Request(`${base}/ok`, { headers: { accept: "application/json" } }));
    expect([ok.status, ok.headers.get("content-type"), await ok.json()]).toEqual([
      200,
      "application/json",
      { ok: true },
    ]);
    const notModified = await timed.fetch(`${base}/not-modified`);
    expect([notModified.status, notModified.body]).toEqual([304, null]);
  });

  it("after a time-out fails the other requests at once with it, until reset (a shrink would wait again)", async () => {
    const timed = timedFetch(0.05, scripted);
    const first = await failure(timed.fetch(`${base}/silent`));
    expect(await failure(timed.fetch(`${base}/ok`))).toBe(first);
    timed.reset();
    expect((await timed.fetch(`${base}/ok`)).status).toBe(200);
  });

  it("an answer whose body nobody read is no time-out for the next request", async () => {
    const timed = timedFetch(0.05, scripted);
    await timed.fetch(`${base}/ok`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await (await timed.fetch(`${base}/ok`)).json()).toEqual({ ok: true });
  });

  it("keeps the caller's own abort", async () => {
    const controller = new AbortController();
    const pending = timedFetch(5).fetch(`${base}/silent`, { signal: controller.signal });
    controller.abort(new Error("the caller's"));
    expect(await failure(pending)).toMatchObject({ message: "the caller's" });
  });
});
