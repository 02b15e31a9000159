import type { EndpointWatchEvents } from "./endpoint-store";

interface Watch {
  readonly changed: (endpointId: string) => void;
  readonly events: EndpointWatchEvents | undefined;
}

// A callback's throw is ignored: the write is done (or the store reconnects) all the same, and the store's caller is
// not the watch's.
function tell(call: () => void): void {
  try {
    call();
  } catch {
    // Ignored (EndpointStore.watch).
  }
}

/**
 * The watches of one endpoint store (EndpointStore.watch): each told the id of each endpoint the store wrote, and,
 * for a store that hears writes made elsewhere, when it stops and starts hearing them again. Internal.
 */
export class EndpointWatchers {
  readonly #watches = new Set<Watch>();

  /** Adds a watch; returns what removes it (calling it again removes nothing more). */
  watch(listener: (endpointId: string) => void, events?: EndpointWatchEvents): () => void {
    if (typeof listener !== "function") throw new TypeError("EndpointStore.watch: listener must be a function.");
    // An entry of its own: the same function watched twice is two watches, each removed by its own stop.
    const entry: Watch = { changed: listener, events };
    this.#watches.add(entry);
    return () => {
      this.#watches.delete(entry);
    };
  }

  /** How many watches there are. */
  get count(): number {
    return this.#watches.size;
  }

  /** Tells every watch of a write; one that throws does not stop the others, nor the write that was done. */
  changed(endpointId: string): void {
    for (const watch of this.#watches) tell(() => watch.changed(endpointId));
  }

  /** Tells every watch that writes made elsewhere are no longer heard (EndpointWatchEvents.lost). */
  lost(error: Error): void {
    for (const watch of this.#watches) tell(() => watch.events?.lost?.(error));
  }

  /** Tells every watch that they are heard again (EndpointWatchEvents.resumed). */
  resumed(): void {
    for (const watch of this.#watches) tell(() => watch.events?.resumed?.());
  }
}
