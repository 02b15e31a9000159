// The worker's own CPU per delivery (claim, sign, decide, record) with a dispatcher that answers 200 at once: no
// sockets, so the figure hardly moves with the load of a shared machine.
import type { AttemptResult } from "../../src/webhooks/delivery/attempt";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createEvent } from "../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker } from "../../src/webhooks/delivery/node/index";

const answer: AttemptResult = { kind: "response", status: 200, body: "ok", durationMs: 0 };

/** CPU µs per delivery of one worker run over `count` deliveries at `concurrency`, without HTTP. */
export async function workerOverhead(concurrency: number, count: number): Promise<number> {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  const admin = createEndpointAdmin({
    endpoints,
    queue,
    urlPolicy: { allowHttp: true, allow: ["127.0.0.1"] },
    resolve: false,
  });
  const created = await admin.create({ url: "http://127.0.0.1:9/hooks", enabled_events: ["*"] });
  if (!created.ok) throw new Error("bench/delivery: endpoint refused");
  let sent = 0;
  const worker = createDeliveryWorker({
    queue,
    endpoints,
    concurrency,
    endpointConcurrency: concurrency,
    dispatcher: {
      dispatch: async (request) => {
        if (request.headers["webhook-signature"] === undefined) throw new Error("unsigned request");
        sent++;
        return answer;
      },
      close() {},
    },
  });
  for (let i = 0; i < count; i++) {
    await queue.publish(createEvent({ type: "order.created", data: { id: `ord_${i}`, total: 1999 } }));
  }
  const cpu = process.cpuUsage();
  worker.start();
  await worker.drained();
  const used = process.cpuUsage(cpu);
  await worker.stop();
  const delivered = (await queue.list(created.value.id, { status: ["delivered"], limit: count })).length;
  if (sent !== count || delivered !== count) throw new Error(`overhead: ${sent} sent, ${delivered} delivered`);
  return (used.user + used.system) / count;
}
