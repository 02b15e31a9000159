/**
 * docs/index.md quotes the library's refusals word for word as the examples of its one wording: each quote is what
 * the code throws today.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createMemoryInbox } from "../../src/webhooks/consumer/memory/index";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../src/webhooks/delivery/memory/index";

const index = readFileSync(new URL("../../docs/index.md", import.meta.url), "utf8");

async function refusal(act: () => unknown): Promise<string> {
  try {
    await act();
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as TypeError).message;
  }
  throw new Error("no refusal");
}

describe("docs/index.md's quoted refusals", () => {
  it("quotes createMemoryInbox's refusal of maxDone 0", async () => {
    expect(index).toContain(`\`${await refusal(() => createMemoryInbox({ maxDone: 0 }))}\``);
  });

  // The page said "a non-negative number" where the queue says "a positive number" (a lease of 0 is refused).
  it("quotes DeliveryQueue.claim's refusal of a NaN lease", async () => {
    const queue = createMemoryDeliveryQueue({ endpoints: createMemoryEndpointStore() });
    expect(index).toContain(`\`${await refusal(() => queue.claim({ now: 0, limit: 1, leaseMs: Number.NaN }))}\``);
  });
});
