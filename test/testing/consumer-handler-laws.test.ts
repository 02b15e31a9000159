import fc from "fast-check";
import { describe, it } from "vitest";
import { consumerLaws, fromHandler } from "../../src/testing/index";
import { createWebhookConsumer, createWebhookProcessor } from "../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
import { generateSecret } from "../../src/webhooks/signing/index";

// Issue 11: our own consumer handler (verify → inbox → 202, processor later) passes every consumer law.
describe("the consumer handler obeys the webhook consumer laws", () => {
  const secret = generateSecret();
  const inbox = createMemoryInbox();
  const processed: string[] = [];
  const processor = createWebhookProcessor({ inbox }).on("*", ({ event }) => {
    processed.push(event.id);
  });
  const target = fromHandler(createWebhookConsumer({ inbox, secrets: secret }));
  const settle = async () => {
    while ((await processor.processDue()).claimed > 0) {
      // drain: every acknowledged event is processed before the law looks
    }
  };

  for (const law of consumerLaws(target, { path: "/webhooks", secret, processed: () => processed, settle })) {
    it(law.name, async () => {
      await fc.assert(law.property, { numRuns: 30 });
    });
  }
});
