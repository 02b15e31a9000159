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

    it("gives a probe back only to its holder: open until then, the next probe anyone's from then", async () => {
      const board = make();
      const endpoint = id();
      expect(await board.releaseProbe(endpoint, 6_000, 7_000)).toBe(false); // closed: no probe to give back
      await board.open(endpoint, 5_000);
      expect(await board.releaseProbe(endpoint, 6_000, 7_000)).toBe(false); // open, but no probe taken
      expect(await board.takeProbe(endpoint, 5_000, 6_000)).toBe(true);
      expect(await board.releaseProbe(endpoint, 6_001, 7_000)).toBe(false); // another probe's name
      expect(await board.openUntil(endpoint)).toBe(5_000);
      expect(await board.releaseProbe(endpoint, 6_000, 5_500)).toBe(true);
      expect(await board.openUntil(endpoint)).toBe(5_500);
      expect(await board.releaseProbe(endpoint, 6_000, 9_000)).toBe(false); // given back already
      expect(await board.takeProbe(endpoint, 5_499, 6_499)).toBe(false);
      expect(await board.takeProbe(endpoint, 5_500, 6_500)).toBe(true); // anyone's from then, not after the hold
    });

    it("leaves the board as it is when the probe was taken over, or the circuit closed or opened since", async () => {
      const board = make();
      const endpoint = id();
      await board.open(endpoint, 5_000);
      expect(await board.takeProbe(endpoint, 5_000, 6_000)).toBe(true); // worker A's probe, held until 6,000
      expect(await board.takeProbe(endpoint, 6_000, 7_000)).toBe(true); // A held it too long: worker B's now
      expect(await board.releaseProbe(endpoint, 6_000, 6_100)).toBe(false); // A gives back what is no longer its
      expect(await board.openUntil(endpoint)).toBe(5_000);
      expect(await board.takeProbe(endpoint, 6_200, 7_200)).toBe(false); // B's probe is still out
      await board.close(endpoint); // B's probe succeeded
      expect(await board.releaseProbe(endpoint, 7_000, 7_300)).toBe(false);
      expect(await board.openUntil(endpoint)).toBeUndefined(); // not re-opened by a stale give-back
      await board.open(endpoint, 8_000);
      expect(await board.takeProbe(endpoint, 8_000, 9_000)).toBe(true);
      await board.open(endpoint, 20_000); // that probe failed
      expect(await board.releaseProbe(endpoint, 9_000, 8_500)).toBe(false);
      expect(await board.openUntil(endpoint)).toBe(20_000);
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
