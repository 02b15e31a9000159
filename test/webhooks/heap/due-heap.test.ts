import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DueHeap, type DueItem } from "../../../src/webhooks/heap/due-heap";

interface Item extends DueItem {
  readonly id: number;
}

const item = (id: number): Item => ({ id, due: 0, seq: 0, heapIndex: -1 });

describe("DueHeap", () => {
  it("peeks the earliest due (then the lowest tie-break) under any mix of inserts, moves and deletes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("set", "delete"), fc.nat(50), fc.nat(20)), { maxLength: 300 }),
        (ops) => {
          const items = Array.from({ length: 51 }, (_, id) => item(id));
          const heap = new DueHeap<Item>();
          // The reference: item id → [due, tie-break] (the tie-break is the item's id).
          const reference = new Map<number, [number, number]>();
          for (const [op, id, due] of ops) {
            const it = items[id] as Item;
            if (op === "set") {
              heap.set(it, due, id);
              reference.set(id, [due, id]);
            } else {
              heap.delete(it);
              reference.delete(id);
            }
            expect(heap.size).toBe(reference.size);
            expect(heap.has(it)).toBe(reference.has(id));
            const first = [...reference].sort((a, b) => a[1][0] - b[1][0] || a[1][1] - b[1][1])[0];
            expect(heap.peekDue()).toBe(first?.[1][0]);
            expect(heap.peek()?.id).toBe(first?.[0]);
          }
          // Every item knows where it is: in the heap at its index, or nowhere (-1).
          for (const it of items) expect(it.heapIndex >= 0).toBe(reference.has(it.id));
        },
      ),
    );
  });

  it("keeps nothing for an item beyond its slot: an item in another heap is not in this one, and deleting it here does nothing", () => {
    const a = new DueHeap<Item>();
    const b = new DueHeap<Item>();
    const [x, y] = [item(1), item(2)];
    a.set(x, 10, 1);
    b.set(y, 5, 2);
    expect(a.has(y)).toBe(false);
    expect(b.has(x)).toBe(false);
    a.delete(y);
    expect(b.peek()).toBe(y);
    expect(a.peek()).toBe(x);
    a.delete(x);
    expect(x.heapIndex).toBe(-1);
    expect(a.size).toBe(0);
  });
});
