/**
 * The circuit breaker's state that every worker on one queue shares: whether an endpoint's circuit is open, until
 * when, and who sends its one half-open probe. Each worker still judges outcomes with its own window
 * (`circuitRecord`); only the transitions are shared: a worker whose window opens the circuit opens it here for all,
 * after the cool-down exactly one worker wins the probe, and the probe's outcome closes or re-opens it for all.
 * Implementations: `createMemoryCircuitBoard` (one process) and the PostgreSQL queue's `sharedCircuits()`.
 */
export interface CircuitBoard {
  /** When the endpoint's circuit is open: until when (epoch ms; past it, a probe may be taken). `undefined`: closed. */
  openUntil(endpointId: string): Promise<number | undefined>;
  /** Opens (or re-opens) the circuit until `until`; a probe taken before is over. */
  open(endpointId: string, until: number): Promise<void>;
  /** Closes the circuit (a probe succeeded). */
  close(endpointId: string): Promise<void>;
  /**
   * Takes the single probe of a circuit open past its `openUntil`: `true` for exactly one caller; a probe that never
   * reported is given to another caller once `probeUntil` passed. The probe is known by its `probeUntil` from then on
   * ({@link releaseProbe}).
   */
  takeProbe(endpointId: string, now: number, probeUntil: number): Promise<boolean>;
  /**
   * Gives back a probe taken with `probeUntil` that never went out (or went unanswered): the circuit stays open until
   * `until`, when the next probe is anyone's. Only while that probe is still the caller's: once its hold ran out and
   * another caller took the probe, or the circuit was closed or opened again since, the board is left as it is and
   * the answer is `false`. (An unconditional {@link open} here re-opened a circuit that another worker's probe had
   * just closed.)
   */
  releaseProbe(endpointId: string, probeUntil: number, until: number): Promise<boolean>;
}
