/** An abort controller that also follows other signals, and the release of what it listens to. */
export interface LinkedAbort {
  readonly controller: AbortController;
  /** Stops listening to the signals: one that outlives many requests must not keep a listener per request. */
  release(): void;
}

/**
 * A controller aborted by the first of `signals` to abort, with its reason, or by its owner (`AbortSignal.any`
 * needs Node 20.3; the package supports Node 20.0).
 * @example const { controller, release } = linkedAbort([AbortSignal.timeout(30_000), stop]);
 */
export function linkedAbort(signals: readonly (AbortSignal | undefined)[]): LinkedAbort {
  const controller = new AbortController();
  const follow = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const signal of signals) {
    if (signal?.aborted) controller.abort(signal.reason);
    signal?.addEventListener("abort", follow, { once: true });
  }
  return {
    controller,
    release() {
      for (const signal of signals) signal?.removeEventListener("abort", follow);
    },
  };
}
