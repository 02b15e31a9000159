/** rest-webhooks/webhooks/consumer/memory: the in-memory inbox (the embedded default; lost on restart). */
export { createMemoryInbox, MemoryInbox } from "./memory-inbox";
