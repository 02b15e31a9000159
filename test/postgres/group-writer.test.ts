import { describe, expect, it } from "vitest";
import { GroupWriter } from "../../src/postgres/group-writer";
import { isDataError } from "../../src/postgres/statement";
import { StoreClosedError } from "../../src/postgres/store-closed-error";

describe("GroupWriter (group commit of inbox adds)", () => {
  it("writes what queues up behind in-flight writes as one batch, each caller getting its own result", async () => {
    const batches: number[][] = [];
    const writer = new GroupWriter<number, number>(
      async (items) => {
        batches.push(items);
        await new Promise((resolve) => setImmediate(resolve));
        return items.map((n) => n * 10);
      },
      3,
      1,
    );
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => writer.submit(n)));
    expect(results).toEqual([10, 20, 30, 40, 50, 60]);
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it("retries a failed batch item by item, so only the refused item fails", async () => {
    const writer = new GroupWriter<number, number>(
      async (items) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (items.includes(13)) throw new Error("refused");
        return items;
      },
      10,
      1,
    );
    const results = await Promise.allSettled([1, 2, 13, 4].map((n) => writer.submit(n)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
  });

  it("fails the whole batch at once when the error is not about an item (say, the server is down)", async () => {
    let writes = 0;
    const writer = new GroupWriter<number, number>(
      async () => {
        writes++;
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error("connection refused");
      },
      10,
      1,
      () => false,
    );
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => writer.submit(n)));
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect(writes).toBe(2); // [1] alone, then [2, 3, 4] together; no per-item retries
  });

  // Regression: an inbox add whose id was over the B-tree entry limit (54000), or whose JSON nested past the
  // server's stack (54001), failed its whole batch, so honest deliveries written with it got 503 too.
  it("retries item by item on SQLSTATE class 54 (a row over a program limit), as on classes 22 and 23", async () => {
    const writer = new GroupWriter<string, string>(
      async (items) => {
        await new Promise((resolve) => setImmediate(resolve));
        const bad = items.find((item) => item.startsWith("54") || item.startsWith("22"));
        if (bad !== undefined) throw Object.assign(new Error("refused"), { code: bad });
        return items;
      },
      10,
      1,
      isDataError,
    );
    const items = ["first", "ok-1", "54000", "ok-2", "54001", "22P02", "ok-3"];
    const results = await Promise.allSettled(items.map((item) => writer.submit(item)));
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
  });

  // The inbox writes a payload PostgreSQL's json parser refused (54001) again in another form; submitted anew from the
  // caller, that second write had to be tracked apart from the writer for close() to wait for it.
  it("writes an item's second form (rewrite) when its own write is refused, and the caller gets that outcome", async () => {
    const written: string[][] = [];
    const writer = new GroupWriter<string, string>(
      async (items) => {
        written.push(items);
        await new Promise((resolve) => setImmediate(resolve));
        const bad = items.find((item) => item.startsWith("54"));
        if (bad !== undefined) throw Object.assign(new Error("refused"), { code: bad });
        return items.map((item) => `wrote ${item}`);
      },
      10,
      1,
      isDataError,
      (item, error) => ((error as { code?: unknown }).code === "54001" ? `text of ${item}` : undefined),
    );
    const results = await Promise.allSettled(["first", "ok", "54001", "54000"].map((item) => writer.submit(item)));
    expect(results).toEqual([
      { status: "fulfilled", value: "wrote first" },
      { status: "fulfilled", value: "wrote ok" },
      { status: "fulfilled", value: "wrote text of 54001" },
      { status: "rejected", reason: expect.objectContaining({ code: "54000" }) },
    ]);
    // A rewrite is written once: its own refusal goes to the caller.
    expect(written.filter((batch) => batch.includes("text of 54001"))).toEqual([["text of 54001"]]);
  });
});

describe("isDataError (which failed batches are retried item by item)", () => {
  it("is true for data exceptions (22), integrity violations (23) and program limits (54) only", () => {
    for (const code of ["22P02", "22021", "23505", "54000", "54001", "54023"]) expect(isDataError({ code })).toBe(true);
    // A lost connection, a shutdown, a serialization failure, a timeout: one statement per row would only fail again.
    for (const code of ["08006", "57P01", "40001", "57014", "53300", "XX000", 54000]) {
      expect(isDataError({ code }), String(code)).toBe(false);
    }
    for (const error of [null, undefined, new Error("x"), "54000"]) expect(isDataError(error)).toBe(false);
  });
});

describe("GroupWriter.close (shutdown)", () => {
  /** A writer whose batches wait until `release()`; `batches` records what each write got. */
  function heldWriter() {
    const batches: number[][] = [];
    const waiting: (() => void)[] = [];
    const writer = new GroupWriter<number, number>(
      async (items) => {
        batches.push(items);
        await new Promise<void>((resolve) => waiting.push(resolve));
        return items.map((n) => n * 10);
      },
      2,
      1,
    );
    const release = () => {
      for (const go of waiting.splice(0)) go();
    };
    return { writer, batches, release };
  }

  it("writes every queued item before it resolves, each caller getting its result", async () => {
    const { writer, batches, release } = heldWriter();
    const results = [1, 2, 3, 4, 5].map((n) => writer.submit(n));
    let closed = false;
    const closing = writer.close().then(() => (closed = true));
    // Batches in flight and queued are written, one after the other as before (maxInFlight 1).
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setImmediate(resolve));
      expect(closed).toBe(false);
      release();
    }
    await closing;
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it("refuses a write submitted once closing began, with code store_closed, and writes nothing of it", async () => {
    const { writer, batches, release } = heldWriter();
    const first = writer.submit(1);
    const closing = writer.close();
    const late = writer.submit(2);
    await expect(late).rejects.toBeInstanceOf(StoreClosedError);
    await expect(late).rejects.toMatchObject({ code: "store_closed" });
    release();
    await closing;
    expect(await first).toBe(10);
    await expect(writer.submit(3)).rejects.toMatchObject({ code: "store_closed" });
    expect(batches).toEqual([[1]]);
  });

  it("resolves at once when nothing is pending, and every call resolves alike", async () => {
    const { writer } = heldWriter();
    await writer.close();
    await writer.close();
  });

  it("waits for an item's second form, which it writes although closing began", async () => {
    let fail!: (error: Error) => void;
    const writes: number[][] = [];
    const writer = new GroupWriter<number, number>(
      (items) => {
        writes.push(items);
        if (items[0] === 1) return new Promise<number[]>((_, reject) => (fail = reject));
        return Promise.resolve(items.map((n) => n * 10));
      },
      10,
      1,
      () => true,
      (item) => (item === 1 ? 2 : undefined),
    );
    const write = writer.submit(1);
    let closed = false;
    const closing = writer.close().then(() => (closed = true));
    fail(new Error("refused"));
    expect(await write).toBe(20);
    await closing;
    expect([closed, writes]).toEqual([true, [[1], [2]]]);
  });

  it("resolves once failed writes settled too: their callers get the error, close does not", async () => {
    let fail!: (error: Error) => void;
    const writer = new GroupWriter<number, number>(
      () => new Promise<number[]>((_, reject) => (fail = reject)),
      10,
      1,
      () => false,
    );
    const write = writer.submit(1);
    const closing = writer.close();
    const failure = new Error("connection lost");
    fail(failure);
    await expect(write).rejects.toBe(failure);
    await expect(closing).resolves.toBeUndefined();
  });
});
