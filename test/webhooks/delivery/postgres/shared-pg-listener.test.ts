import { describe, expect, it, vi } from "vitest";
import { type PgListener, SharedPgListener } from "../../../../src/webhooks/delivery/postgres/shared-pg-listener";

type Handler = (value: never) => void;

/** A `pg` client that records what it is asked and lets the test end it or notify on it. */
class FakeConnection implements PgListener {
  readonly queries: string[] = [];
  readonly handlers = new Map<string, Handler[]>();
  ended = false;
  constructor(readonly fails: boolean) {}
  on(event: string, listener: Handler): unknown {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), listener]);
    return this;
  }
  emit(event: string, value?: unknown): void {
    for (const handler of this.handlers.get(event) ?? []) handler(value as never);
  }
  async connect(): Promise<unknown> {
    if (this.fails) throw new Error("connection refused");
    return undefined;
  }
  // While set, queries wait for release(): a LISTEN still under way.
  hold = false;
  readonly #held: (() => void)[] = [];
  query(text: string): Promise<unknown> {
    this.queries.push(text);
    if (!this.hold) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#held.push(() => resolve(undefined)));
  }
  release(): void {
    this.hold = false;
    for (const resolve of this.#held.splice(0)) resolve();
  }
  async end(): Promise<unknown> {
    this.ended = true;
    return undefined;
  }
}

function listener(failing = 0) {
  const connections: FakeConnection[] = [];
  let empty = 0;
  const shared = new SharedPgListener(
    () => {
      const connection = new FakeConnection(connections.length < failing);
      connections.push(connection);
      return connection;
    },
    () => void empty++,
  );
  return { shared, connections, empties: () => empty };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("SharedPgListener: one listening connection for every listen on a pool", () => {
  it("listens on every channel in one connection, tells each listen its channel's payloads, and closes with the last", async () => {
    const { shared, connections, empties } = listener();
    const heard: string[] = [];
    const stopA = shared.add({ channel: "a", onPayload: (p) => heard.push(`a:${p}`) });
    const stopA2 = shared.add({ channel: "a", onPayload: (p) => heard.push(`a2:${p}`) });
    await settled();
    const stopB = shared.add({ channel: "b", onPayload: (p) => heard.push(`b:${p}`) });
    await settled();
    expect(connections).toHaveLength(1);
    const [connection] = connections as [FakeConnection];
    expect(connection.queries).toEqual(['LISTEN "a"', 'LISTEN "b"']);
    connection.emit("notification", { channel: "a", payload: "1" });
    connection.emit("notification", { channel: "b", payload: "2" });
    connection.emit("notification", { channel: "b", payload: "" });
    expect(heard).toEqual(["a:1", "a2:1", "b:2"]);
    stopA();
    stopA2();
    expect(connection.queries.at(-1)).toBe('UNLISTEN "a"');
    expect(connection.ended).toBe(false);
    stopB();
    stopB();
    expect([connection.ended, empties()]).toEqual([true, 1]);
  });

  it("a channel whose last listen left while it connected is left at once; one that came is listened on", async () => {
    const { shared, connections } = listener();
    const stopA = shared.add({ channel: "a", onPayload: () => {} });
    shared.add({ channel: "b", onPayload: () => {} });
    const connection = connections[0] as FakeConnection;
    connection.hold = true;
    await settled();
    // The first LISTEN, naming both, is under way when "a" is left.
    expect(connection.queries).toEqual(['LISTEN "a"; LISTEN "b"']);
    stopA();
    connection.release();
    await settled();
    expect(connection.queries).toEqual(['LISTEN "a"; LISTEN "b"', 'UNLISTEN "a"']);
    const stopC = shared.add({ channel: "c", onPayload: () => {} });
    const late = shared.add({ channel: "c", onPayload: () => {} });
    stopC();
    expect(connection.queries.slice(2)).toEqual(['LISTEN "c"']);
    late();
    expect(connection.queries.at(-1)).toBe('UNLISTEN "c"');
  });

  it("connects again after a loss at the shortest retryMs, tells every listen, and each one that saw it resumed", async () => {
    vi.useFakeTimers();
    try {
      const { shared, connections } = listener();
      const told: string[] = [];
      const listen = (name: string, retryMs: number) =>
        shared.add({
          channel: name,
          onPayload: () => {},
          retryMs,
          onError: (error) => {
            told.push(`${name} lost: ${error.message}`);
            throw new Error("a listen's onError failed");
          },
          onResumed: () => void told.push(`${name} resumed`),
        });
      listen("a", 50);
      listen("b", 5);
      await vi.advanceTimersByTimeAsync(0);
      (connections[0] as FakeConnection).emit("error", new Error("terminated"));
      expect(told).toEqual(["a lost: terminated", "b lost: terminated"]);
      expect((connections[0] as FakeConnection).ended).toBe(true);
      await vi.advanceTimersByTimeAsync(4);
      expect(connections).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(connections).toHaveLength(2);
      expect((connections[1] as FakeConnection).queries).toEqual(['LISTEN "a"; LISTEN "b"']);
      expect(told.slice(2)).toEqual(["a resumed", "b resumed"]);
      // A listen added after the loss saw none: it is not told it resumed at the next one.
      (connections[1] as FakeConnection).emit("end");
      listen("c", 5);
      await vi.advanceTimersByTimeAsync(10);
      expect(connections).toHaveLength(3);
      expect(told.filter((line) => line.startsWith("c"))).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a first connection that fails is tried again, and the listens are told it resumed once it listens", async () => {
    vi.useFakeTimers();
    try {
      const { shared, connections } = listener(1);
      const told: string[] = [];
      shared.add({
        channel: "a",
        onPayload: () => {},
        retryMs: 5,
        onError: (error) => void told.push(error.message),
        onResumed: () => void told.push("resumed"),
      });
      await vi.advanceTimersByTimeAsync(0);
      expect(told).toEqual(["connection refused"]);
      await vi.advanceTimersByTimeAsync(5);
      expect(told).toEqual(["connection refused", "resumed"]);
      expect((connections[1] as FakeConnection).queries).toEqual(['LISTEN "a"']);
    } finally {
      vi.useRealTimers();
    }
  });

  it("stops trying once the last listen leaves during a wait to connect again", async () => {
    vi.useFakeTimers();
    try {
      const { shared, connections, empties } = listener(5);
      const stop = shared.add({ channel: "a", onPayload: () => {}, retryMs: 5 });
      await vi.advanceTimersByTimeAsync(0);
      stop();
      await vi.advanceTimersByTimeAsync(1_000);
      expect([connections.length, empties()]).toEqual([1, 1]);
    } finally {
      vi.useRealTimers();
    }
  });
});
