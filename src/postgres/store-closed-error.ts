/**
 * A write refused because its store is closing (its `close()` was called): it is not written, so the caller knows to
 * stop (at shutdown, the store is going away) rather than wait for a write that would race the pool's end. Stable
 * `code`: `store_closed`.
 * @example if ((error as { code?: unknown }).code === "store_closed") … // shutting down: answer 503, retry elsewhere
 */
export class StoreClosedError extends Error {
  override readonly name = "StoreClosedError";
  readonly code = "store_closed";
  constructor() {
    super("The write was refused: its store is closing (close() was called), so nothing more is written.");
  }
}
