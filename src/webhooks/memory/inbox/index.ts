export { createMemoryInbox, MemoryInbox } from "./memory-inbox";
