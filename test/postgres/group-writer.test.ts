import { describe, expect, it } from "vitest";
import { GroupWriter } from "../../src/postgres/group-writer";

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
});
