import { describe, expect, it } from "vitest";
import { adapt as expressAdapt } from "../../src/express/index";
import { adapt as fetchAdapt } from "../../src/fetch/index";
import { parseJsonText } from "../../src/http/body";
import type { Handler } from "../../src/http/message";
import { createServer, adapt as nodeAdapt } from "../../src/node/index";
import { createWebhookConsumer, createWebhookProcessor, runProcessorLoop } from "../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
import { startWebhookProcessor } from "../../src/webhooks/consumer/node/index";
import { createEndpointAdmin } from "../../src/webhooks/delivery/endpoint-admin";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, createDispatcher } from "../../src/webhooks/delivery/node/index";

// A numeric option that a comparison would silently ignore when it is NaN (`Number(process.env.UNSET)`): each of these
// used to be accepted, and then meant no body limit, no nesting limit, never disabling an endpoint, or a retry at NaN.
const handler: Handler = () => ({ status: 204, headers: {}, body: null });
const endpoints = createMemoryEndpointStore();
const queue = createMemoryDeliveryQueue({ endpoints });
const inbox = createMemoryInbox();
const processor = createWebhookProcessor({ inbox });
const never = new AbortController().signal;
const sleep = async () => {};

describe("numeric options are refused at construction, naming the option", () => {
  it.each([
    ["createServer bodyLimit", () => createServer(handler, { bodyLimit: Number.NaN }), /createServer: bodyLimit/],
    ["node adapt bodyLimit", () => nodeAdapt(handler, { bodyLimit: -1 }), /adapt: bodyLimit/],
    ["fetch adapt bodyLimit", () => fetchAdapt(handler, { bodyLimit: 1.5 }), /adapt: bodyLimit/],
    ["express adapt bodyLimit", () => expressAdapt(handler, { bodyLimit: Number.NaN }), /express adapt: bodyLimit/],
    [
      "createWebhookConsumer bodyLimit",
      () => createWebhookConsumer({ inbox, secrets: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", bodyLimit: Number.NaN }),
      /createWebhookConsumer: bodyLimit/,
    ],
    ["parseJsonText maxDepth", () => parseJsonText("[]", { maxDepth: Number.NaN }), /parseJsonText: maxDepth/],
    ["createDispatcher timeoutMs", () => createDispatcher({ timeoutMs: Number.NaN }), /createDispatcher: timeoutMs/],
    ["createDispatcher keepAliveMs", () => createDispatcher({ keepAliveMs: 0 }), /keepAliveMs/],
    ["createDispatcher maxResponseBytes", () => createDispatcher({ maxResponseBytes: -1 }), /maxResponseBytes/],
    ["createDispatcher logResponseBytes", () => createDispatcher({ logResponseBytes: 0.5 }), /logResponseBytes/],
    [
      "startWebhookProcessor idleMs",
      () => startWebhookProcessor(processor, { idleMs: Number.NaN }),
      /startWebhookProcessor: idleMs/,
    ],
    [
      "startWebhookProcessor errorDelayMs",
      () => startWebhookProcessor(processor, { errorDelayMs: -1 }),
      /errorDelayMs/,
    ],
    [
      "createEndpointAdmin secretGraceMs",
      () => createEndpointAdmin({ endpoints, queue, resolve: false, secretGraceMs: Number.NaN }),
      /createEndpointAdmin: secretGraceMs/,
    ],
    [
      "createDeliveryWorker disableAfterMs",
      () => createDeliveryWorker({ queue, endpoints, disableAfterMs: Number.NaN }),
      /disableAfterMs/,
    ],
    [
      "createDeliveryWorker retryAfterFactor",
      () => createDeliveryWorker({ queue, endpoints, retryAfterFactor: Number.NaN }),
      /retryAfterFactor/,
    ],
    [
      "createDeliveryWorker retryAfterFloorMs",
      () => createDeliveryWorker({ queue, endpoints, retryAfterFloorMs: -1 }),
      /retryAfterFloorMs/,
    ],
  ] as const)("%s", (_, construct, message) => {
    expect(construct).toThrow(TypeError);
    expect(construct).toThrow(message);
  });

  it("runProcessorLoop rejects a pause that is not a finite number of 0 or more", async () => {
    await expect(runProcessorLoop({ processor, sleep, signal: never, idleMs: Number.NaN })).rejects.toThrow(
      /runProcessorLoop: idleMs/,
    );
  });

  it("runProcessorLoop rejects a processor whose batchSize is not a positive integer: it would never claim", async () => {
    const stalled = { batchSize: 0, startDue: async () => [] };
    await expect(runProcessorLoop({ processor: stalled, sleep, signal: never })).rejects.toThrow(
      /runProcessorLoop: batchSize must be a positive integer/,
    );
  });

  it("keeps the values that mean something: no body at all, an endpoint never disabled, no grace", async () => {
    expect(() => nodeAdapt(handler, { bodyLimit: 0 })).not.toThrow();
    const worker = createDeliveryWorker({ queue, endpoints, disableAfterMs: Number.POSITIVE_INFINITY });
    await worker.stop();
    expect(() => createEndpointAdmin({ endpoints, queue, resolve: false, secretGraceMs: 0 })).not.toThrow();
    const dispatcher = createDispatcher({ maxResponseBytes: 0, logResponseBytes: 0 });
    await dispatcher.close();
  });
});
