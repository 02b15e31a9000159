/**
 * The listeners of one endpoint store's `watch` (EndpointStore.watch): told the id of each endpoint the store wrote.
 * Internal.
 */
export class EndpointWatchers {
  readonly #listeners = new Set<(endpointId: string) => void>();

  /** Adds `listener`; returns what removes it. */
  watch(listener: (endpointId: string) => void): () => void {
    if (typeof listener !== "function") throw new TypeError("EndpointStore.watch: listener must be a function.");
    // A wrapper of its own: the same function watched twice is two watches, each removed by its own stop.
    const entry = (endpointId: string) => listener(endpointId);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Tells every listener; one that throws does not stop the others, nor the write that was done. */
  changed(endpointId: string): void {
    for (const listener of this.#listeners) {
      try {
        listener(endpointId);
      } catch {
        // Ignored (EndpointStore.watch): the write is done, and the store's caller is not the listener's.
      }
    }
  }
}
