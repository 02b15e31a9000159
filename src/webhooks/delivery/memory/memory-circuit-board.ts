import type { CircuitBoard } from "../circuit-board";

interface Circuit {
  openUntil: number;
  probeUntil: number;
}

/**
 * The in-memory {@link CircuitBoard}: shared by the workers of one process (the memory queue's `sharedCircuits()`).
 * @example const board = createMemoryCircuitBoard();
 */
export function createMemoryCircuitBoard(): CircuitBoard {
  const circuits = new Map<string, Circuit>();
  return {
    async openUntil(endpointId) {
      return circuits.get(endpointId)?.openUntil;
    },
    async open(endpointId, until) {
      circuits.set(endpointId, { openUntil: until, probeUntil: Number.NEGATIVE_INFINITY });
    },
    async close(endpointId) {
      circuits.delete(endpointId);
    },
    async takeProbe(endpointId, now, probeUntil) {
      const circuit = circuits.get(endpointId);
      if (circuit === undefined || now < circuit.openUntil || now < circuit.probeUntil) return false;
      circuit.probeUntil = probeUntil;
      return true;
    },
    async releaseProbe(endpointId, probeUntil, until) {
      const circuit = circuits.get(endpointId);
      if (circuit === undefined || circuit.probeUntil !== probeUntil) return false;
      circuits.set(endpointId, { openUntil: until, probeUntil: Number.NEGATIVE_INFINITY });
      return true;
    },
  };
}
