import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EndedLink, EndedOrder } from "../../../src/webhooks/heap/ended-order";

interface Item extends EndedLink<Item> {
  readonly id: number;
}

describe("EndedOrder", () => {
  it("keeps the order a plain array does under any mix of pushes (moves) and deletes", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(15)), { maxLength: 200 }), (ops) => {
        const items: Item[] = Array.from({ length: 16 }, (_, id) => ({
          id,
          endedAt: 0,
          older: undefined,
          newer: undefined,
        }));
        const list = new EndedOrder<Item>();
        const reference: Item[] = [];
        let at = 0;
        for (const [push, id] of ops) {
          const item = items[id] as Item;
          const index = reference.indexOf(item);
          if (index >= 0) reference.splice(index, 1);
          if (push) {
            list.push(item, ++at);
            reference.push(item);
            expect(item.endedAt).toBe(at);
          } else list.delete(item);
          expect(list.size).toBe(reference.length);
          expect(list.oldest).toBe(reference[0]);
          for (const it of items) expect(list.has(it)).toBe(reference.includes(it));
        }
        // Walking from the oldest gives the reference's order.
        const walked: Item[] = [];
        for (let item = list.oldest; item !== undefined; item = item.newer) walked.push(item);
        expect(walked).toEqual(reference);
      }),
    );
  });
});
