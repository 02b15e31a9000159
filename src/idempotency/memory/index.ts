export { MemoryIdempotencyStore, type MemoryStoreOptions } from "./memory-store";
