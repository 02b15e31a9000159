import { describe, expect, it } from "vitest";
import type { CircuitBoard } from "../../../src/webhooks/delivery/circuit-board";

/** The contract every CircuitBoard passes (issue 15: the circuit breaker shared by every worker). */
export function circuitBoardContract(name: string, make: () => CircuitBoard, concurrent = true): void {
  describe(`${name}: circuit board contract`, () => {
    let n = 0;
    const id = () => `we_board_${name.replace(/\W/g, "_")}_${n++}_${Math.random().toString(36).slice(2, 8)}`;

    it("is closed until opened, open until closed", async () => {
      const board = make();
      const endpoint = id();
      expect(await board.openUntil(endpoint)).toBeUndefined();
      await board.open(endpoint, 5_000);
      expect(await board.openUntil(endpoint)).toBe(5_000);
      await board.open(endpoint, 9_000); // re-opened by a failed probe
      expect(await board.openUntil(endpoint)).toBe(9_000);
      await board.close(endpoint);
      expect(await board.openUntil(endpoint)).toBeUndefined();
    });

    it("gives no probe before the cool-down, one after it, and another once the first was held too long", async () => {
      const board = make();
      const endpoint = id();
      expect(await board.takeProbe(endpoint, 1_000, 2_000)).toBe(false); // closed: nothing to probe
      await board.open(endpoint, 5_000);
      expect(await board.takeProbe(endpoint, 4_999, 6_000)).toBe(false);
      expect(await board.takeProbe(endpoint, 5_000, 6_000)).toBe(true);
      expect(await board.takeProbe(endpoint, 5_500, 6_500)).toBe(false); // the probe is out
      expect(await board.takeProbe(endpoint, 6_000, 7_000)).toBe(true); // it never reported: another may go
      await board.open(endpoint, 20_000); // it failed: open again, no probe held
      expect(await board.takeProbe(endpoint, 20_000, 21_000)).toBe(true);
    });

    if (concurrent) {
      it("gives the probe to exactly one of many callers at once", async () => {
        const board = make();
        const endpoint = id();
        await board.open(endpoint, 1_000);
        const won = await Promise.all(Array.from({ length: 12 }, () => board.takeProbe(endpoint, 2_000, 60_000)));
        expect(won.filter(Boolean)).toHaveLength(1);
      });
    }
  });
}
