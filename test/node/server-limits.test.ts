/**
 * createServer's connection limits (issue 16): silent connections, unfinished headers and bodies, idle keep-alive
 * sockets are closed within the configured limits while normal requests keep answering; a body over the limit gets
 * its 413 even while the client is still sending.
 */
import type { Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { json } from "../../src/http/message";
import { createServer, DEFAULT_SERVER_LIMITS, type ServerLimits } from "../../src/node";
import { closeAll, listen as listenOn } from "./raw-exchange";

const servers: Server[] = [];
afterAll(() => closeAll(servers));
const listen = (server: Server) => listenOn(servers, server);

/** A raw connection: what it received, and a promise settled when the server closes it. */
interface Held {
  readonly socket: Socket;
  readonly received: () => string;
  readonly closed: Promise<void>;
}

function hold(port: number, send?: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    let received = "";
    let closedResolve: () => void = () => {};
    const closed = new Promise<void>((done) => (closedResolve = done));
    const socket = connect(port, "127.0.0.1", () => {
      if (send !== undefined) socket.write(send);
      resolve({ socket, received: () => received, closed });
    });
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => closedResolve());
    socket.on("error", reject);
  });
}

/** Rejects when `promise` has not settled within `ms`: the bound the test holds the server to. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} not done within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const statusLine = (raw: string) => raw.split("\r\n")[0];
const problemOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;

describe("createServer time-outs (on by default)", () => {
  it("has one table of defaults, each overridable, and refuses a value that is not a positive number", () => {
    expect(DEFAULT_SERVER_LIMITS).toStrictEqual({
      idleMs: 5_000,
      headersMs: 10_000,
      requestMs: 30_000,
      checkIntervalMs: 1_000,
      lingerMs: 5_000,
      lingerBytes: 64 * 1024 * 1024,
    });
    const server = createServer(() => json(200, {}));
    expect(server.keepAliveTimeout).toBe(5_000);
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(30_000);
    const tuned = createServer(() => json(200, {}), { limits: { headersMs: 2_000 } });
    expect(tuned.headersTimeout).toBe(2_000);
    expect(tuned.requestTimeout).toBe(30_000);
    expect(() => createServer(() => json(200, {}), { limits: { idleMs: 0 } })).toThrow(TypeError);
    expect(() => createServer(() => json(200, {}), { limits: { headersMs: 40_000 } })).toThrow(TypeError);
  });

  it("regression: a duration node cannot wait (a fraction of a millisecond, past 2^31 - 1 ms) is one it can, not a RangeError nor a 1 ms timer", () => {
    const handler = () => json(200, {});
    // node:http refused a fractional headersTimeout with a RangeError (the options promised a TypeError or a server).
    const fractional = createServer(handler, { limits: { headersMs: 1_500.5, requestMs: 2_000.25 } });
    expect(fractional.headersTimeout).toBe(1_501);
    expect(fractional.requestTimeout).toBe(2_001);
    // A setInterval past 2^31 - 1 ms runs every millisecond: node checked every connection a thousand times a second.
    const long = createServer(handler, {
      limits: { checkIntervalMs: 2 ** 32, headersMs: 2 ** 40, requestMs: 2 ** 41 },
    });
    // Not in @types/node's Server, but node keeps the option there.
    expect((long as typeof long & { connectionsCheckingInterval: number }).connectionsCheckingInterval).toBe(
      2 ** 31 - 1,
    );
    expect(long.headersTimeout).toBe(2 ** 31 - 1);
    expect(long.requestTimeout).toBe(2 ** 31 - 1);
  });

  // Small limits, so the test takes about a second; the waits below allow each limit plus a check interval and three
  // seconds of slack for a loaded machine, still short of the defaults (10 s headers, 30 s request, 5 s idle) that
  // would close the connections if the limits were ignored.
  const limits: Partial<ServerLimits> = { idleMs: 300, headersMs: 500, requestMs: 1_000, checkIntervalMs: 100 };
  const grace = 3_000;

  it("closes 20 silent connections and 20 with only a request line, while normal requests keep answering", async () => {
    const port = await listen(createServer(() => json(200, { ok: true }), { limits }));
    const silent = await Promise.all(Array.from({ length: 20 }, () => hold(port)));
    const requestLine = await Promise.all(Array.from({ length: 20 }, () => hold(port, "GET / HTTP/1.1\r\n")));
    // While they are held, other clients are served.
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/`);
      expect(response.status).toBe(200);
      expect(await response.json()).toStrictEqual({ ok: true });
    }
    const bound = (limits.headersMs as number) + (limits.checkIntervalMs as number) + grace;
    await within(bound, "closing the held connections", Promise.all([...silent, ...requestLine].map((h) => h.closed)));
    // RFC 9110 §15.5.9: where a response can still be sent, it is a 408 problem.
    for (const held of requestLine) {
      expect(statusLine(held.received())).toBe("HTTP/1.1 408 Request Timeout");
      expect(problemOf(held.received())).toMatchObject({ status: 408, code: "request_timeout" });
    }
    for (const held of silent) expect(["", "HTTP/1.1 408 Request Timeout"]).toContain(statusLine(held.received()));
    const after = await fetch(`http://127.0.0.1:${port}/`);
    expect(after.status).toBe(200);
  });

  it("answers 408 to a body that never ends, within requestMs", async () => {
    const port = await listen(createServer(() => json(200, { ok: true }), { limits }));
    const held = await hold(
      port,
      "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 100\r\n\r\nab",
    );
    const bound = (limits.requestMs as number) + (limits.checkIntervalMs as number) + grace;
    await within(bound, "closing the unfinished body", held.closed);
    expect(statusLine(held.received())).toBe("HTTP/1.1 408 Request Timeout");
  });

  it("closes an idle keep-alive connection after idleMs", async () => {
    const port = await listen(createServer(() => json(200, { ok: true }), { limits }));
    const held = await hold(port, "GET / HTTP/1.1\r\nhost: x\r\n\r\n");
    // Node keeps the socket a second past keepAliveTimeout, so the client (told `Keep-Alive: timeout=N`) closes first.
    // One second less of slack here: the default (5 s, and Node's second) must still fall outside the bound.
    const bound = (limits.idleMs as number) + 1_000 + grace - 1_000;
    await within(bound, "closing the idle connection", held.closed);
    expect(statusLine(held.received())).toBe("HTTP/1.1 200 OK");
  });
});

describe("lingering close after a 413 (RFC 9112 §9.6)", () => {
  it("gives each of 20 fetch POSTs of 12 MB the 413, never a reset", async () => {
    let calls = 0;
    const port = await listen(
      createServer(() => {
        calls++;
        return json(200, {});
      }),
    );
    const body = new Uint8Array(12 * 1024 * 1024);
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/upload`, { method: "POST", body });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ status: 413, code: "body_too_large" });
    }
    expect(calls).toBe(0);
  });

  it("gives the 413 to a chunked upload with no declared length, counted as it arrives", async () => {
    const port = await listen(createServer(() => json(200, {}), { bodyLimit: 1024 }));
    for (let i = 0; i < 5; i++) {
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let n = 0; n < 64; n++) controller.enqueue(new Uint8Array(64 * 1024));
          controller.close();
        },
      });
      const response = await fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        body: chunks,
        duplex: "half",
      } as RequestInit);
      expect(response.status).toBe(413);
    }
  });

  it("closes as soon as a chunked upload over the limit ends, not after lingerMs", async () => {
    // A lingerMs past the test's own time-out: a server that waited for it fails the test, whatever the machine's load.
    const port = await listen(createServer(() => json(200, {}), { bodyLimit: 1024, limits: { lingerMs: 120_000 } }));
    const chunk = `800\r\n${"x".repeat(0x800)}\r\n`;
    const held = await hold(
      port,
      `POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n${chunk}${chunk}${chunk}0\r\n\r\n`,
    );
    // The whole upload is sent: reading on to its end (lingering) must see that end and close at once.
    await held.closed;
    expect(statusLine(held.received())).toBe("HTTP/1.1 413 Payload Too Large");
  });

  it("stops discarding after lingerBytes and closes", async () => {
    const port = await listen(
      createServer(() => json(200, {}), { bodyLimit: 16, limits: { lingerBytes: 1024, lingerMs: 120_000 } }),
    );
    const held = await hold(port, "POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100000000\r\n\r\n");
    // Keep sending until the server closes: it must, after about lingerBytes more.
    const chunk = "x".repeat(4096);
    const pump = setInterval(() => {
      if (!held.socket.destroyed) held.socket.write(chunk, () => {});
    }, 5);
    held.socket.on("error", () => {});
    try {
      await held.closed; // lingerMs is past the test's time-out: only lingerBytes can close it in time
    } finally {
      clearInterval(pump);
    }
    expect(statusLine(held.received())).toBe("HTTP/1.1 413 Payload Too Large");
  });
});

describe("lingering close, step by step", () => {
  it("regression: lingers with a lingerMs past what a timer can wait, where the timer fired after 1 ms and reset the client", async () => {
    const port = await listen(createServer(() => json(200, {}), { bodyLimit: 1024, limits: { lingerMs: 2 ** 32 } }));
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const errors: string[] = [];
    socket.on("error", (error: Error & { code?: string }) => errors.push(error.code ?? error.message));
    let received = "";
    let endedEarly = false;
    let sending = true;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("end", () => (endedEarly = sending));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    const write = (data: string | Uint8Array) => new Promise<void>((resolve) => socket.write(data, () => resolve()));
    const head = new Promise<void>((resolve) => socket.once("data", () => resolve()));
    await write("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n");
    await write(new Uint8Array(4_096));
    // The 413 is out and the server lingers: a timer that fired at once had closed the connection by the next turn.
    await head;
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let sent = 4_096; sent < 100_000; sent += 4_096) await write(new Uint8Array(Math.min(4_096, 100_000 - sent)));
    sending = false;
    await closed;
    expect(errors).toStrictEqual([]);
    expect(endedEarly).toBe(false);
    expect(statusLine(received)).toBe("HTTP/1.1 413 Payload Too Large");
  });

  it("keeps reading after the 413, so a client that sends on before it reads still gets the 413", async () => {
    const port = await listen(createServer(() => json(200, {}), { bodyLimit: 1024 }));
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.pause();
    const errors: string[] = [];
    socket.on("error", (error: Error & { code?: string }) => errors.push(error.code ?? error.message));
    const write = (data: string | Uint8Array) => new Promise<void>((resolve) => socket.write(data, () => resolve()));
    await write("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 200000\r\n\r\n");
    await write(new Uint8Array(16_384));
    // The server has answered 413 by now; a server that closed at once resets the connection on the next bytes,
    // and the reset discards the 413 the client has not read yet.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const rest = async () => {
      for (let sent = 16_384; sent < 200_000; sent += 16_384)
        await write(new Uint8Array(Math.min(16_384, 200_000 - sent)));
    };
    await rest();
    await new Promise((resolve) => setTimeout(resolve, 200));
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.resume();
    await closed;
    expect(errors).toStrictEqual([]);
    expect(statusLine(received)).toBe("HTTP/1.1 413 Payload Too Large");
  });
});
