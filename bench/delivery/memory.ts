// Run with --expose-gc: memory (JS heap + typed-array buffers) held by 1,000,000 scheduled retries in the in-memory queue.

import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { transition } from "../../src/webhooks/delivery/state-machine";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");
const ENDPOINTS = 100;
const EVENTS = 10_000;

const endpoints = createMemoryEndpointStore();
const queue = createMemoryDeliveryQueue({ endpoints });
const admin = createEndpointAdmin({ endpoints, queue, resolve: false });
for (let i = 0; i < ENDPOINTS; i++) {
  await admin.create({ url: `https://hooks${i}.example.com/in`, enabled_events: ["*"] });
}
const events = Array.from({ length: EVENTS }, (_, i) =>
  createEvent({ type: "order.created", data: { id: `ord_${i}`, total: 1999 } }),
);
gc();
gc();
// Typed arrays live outside the JS heap: count their backing stores too.
const used = () => {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};
const before = used();
const now = Date.now();
for (const event of events) await queue.publish(event, { now });
const failure = { kind: "response" as const, status: 503, durationMs: 5 };
let scheduled = 0;
for (;;) {
  const claims = await queue.claim({ limit: 10_000, now, leaseMs: 60_000 });
  if (claims.length === 0) break;
  for (const claim of claims) {
    await queue.complete(claim, transition(claim.state, { type: "attempt", result: failure }, now).state);
    scheduled++;
  }
}
gc();
gc();
const after = used();
process.stdout.write(JSON.stringify({ scheduled, bytes: after - before, due: await queue.nextDueAt() }));
