/** Decides the delay before retry number `attempt + 1`, given the failed `attempt` (1-based), in ms. */
export type ProcessorBackoff = (attempt: number) => number;

/** Options of {@link processorBackoff}. */
export interface ProcessorBackoffOptions {
  /** Delay after the first failure, ms. @default 1_000 */
  baseMs?: number;
  /** Growth factor per attempt. @default 2 */
  factor?: number;
  /** Upper bound of one delay, ms. @default 3_600_000 (1 h) */
  maxMs?: number;
  /**
   * Randomness in [0, 1) for "full jitter" (delay = random × computed), which spreads retries of
   * events that failed together; without it the schedule is deterministic.
   */
  random?: () => number;
}

/**
 * Exponential backoff: `baseMs × factor^(attempt-1)`, capped at `maxMs`.
 * @param options the first delay, growth factor, cap, and optional randomness for full jitter.
 * @example processorBackoff({ baseMs: 500, random: Math.random })
 */
export function processorBackoff(options: ProcessorBackoffOptions = {}): ProcessorBackoff {
  const { baseMs = 1_000, factor = 2, maxMs = 3_600_000, random } = options;
  return (attempt) => {
    const delay = Math.min(maxMs, baseMs * factor ** Math.max(0, attempt - 1));
    return random === undefined ? delay : Math.floor(random() * delay);
  };
}
