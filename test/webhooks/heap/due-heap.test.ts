import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DueHeap } from "../../../src/webhooks/heap/due-heap";

describe("DueHeap", () => {
  it("peeks the earliest due (then the lowest tie-break) under any mix of inserts, moves and deletes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("set", "delete"), fc.nat(50), fc.nat(20)), { maxLength: 300 }),
        (ops) => {
          const items = Array.from({ length: 51 }, (_, id) => ({ id }));
          const heap = new DueHeap<{ id: number }>();
          // The reference: item id → [due, tie-break] (the tie-break is the item's id).
          const reference = new Map<number, [number, number]>();
          for (const [op, id, due] of ops) {
            const item = items[id] as { id: number };
            if (op === "set") {
              heap.set(item, due, id);
              reference.set(id, [due, id]);
            } else {
              heap.delete(item);
              reference.delete(id);
            }
            expect(heap.size).toBe(reference.size);
            expect(heap.has(item)).toBe(reference.has(id));
            const first = [...reference].sort((a, b) => a[1][0] - b[1][0] || a[1][1] - b[1][1])[0];
            expect(heap.peekDue()).toBe(first?.[1][0]);
            expect(heap.peek()?.id).toBe(first?.[0]);
          }
        },
      ),
    );
  });
});
