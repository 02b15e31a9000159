/** rest-webhooks/webhooks/consumer/memory: the in-memory inbox (the embedded default; lost on restart). */
export { createMemoryInbox, MemoryInbox, type MemoryInboxOptions } from "./memory-inbox";
