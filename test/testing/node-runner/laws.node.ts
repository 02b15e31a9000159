// The laws under node's own test runner (node --test), to show they do not depend on vitest.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  acknowledgesBeforeProcessing,
  consumerLaws,
  fromHandler,
  LawViolation,
  type ResourceSpec,
  resourceLaws,
  safeMethodsChangeNothing,
} from "../../../src/testing/index";
import { generateSecret } from "../../../src/webhooks/signing/index";
import { consumerFixture, thingServer } from "../fixtures";

const spec: ResourceSpec = {
  collection: "/things",
  createBody: fc.record({ name: fc.string({ maxLength: 8 }), n: fc.integer({ min: 0, max: 1000 }) }),
  patchBody: fc.record({ name: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }),
};

describe("rest-webhooks/testing under node:test: resource laws", () => {
  for (const law of resourceLaws(fromHandler(thingServer()), spec)) {
    it(law.name, async () => {
      await fc.assert(law.property, { numRuns: 10 });
    });
  }

  it("reports a broken server with the shrunk request sequence", async () => {
    const details = await fc.check(
      safeMethodsChangeNothing(fromHandler(thingServer({ getCountsVisits: true })), spec),
      { numRuns: 50, seed: 7 },
    );
    assert.equal(details.failed, true);
    assert.ok(details.numShrinks > 0);
    assert.deepEqual(details.counterexample?.[0], { name: "", n: 0 });
    assert.ok(details.errorInstance instanceof LawViolation);
    assert.match(details.errorInstance.message, /#\d+ GET \/things\/t\d+ HTTP\/1\.1/);
  });
});

describe("rest-webhooks/testing under node:test: consumer laws", () => {
  const secret = generateSecret();
  const consumer = consumerFixture(secret);
  for (const law of consumerLaws(fromHandler(consumer.handler), { path: "/webhooks", secret, ...consumer })) {
    it(law.name, async () => {
      await fc.assert(law.property, { numRuns: 10 });
    });
  }

  it("reports a consumer that processes before replying, shrunk", async () => {
    const early = consumerFixture(secret, { processesBeforeReply: true });
    const details = await fc.check(
      acknowledgesBeforeProcessing(fromHandler(early.handler), { path: "/webhooks", secret, ...early }),
      { numRuns: 50, seed: 7 },
    );
    assert.equal(details.failed, true);
    assert.ok(details.numShrinks > 0);
    const [event] = details.counterexample ?? [];
    assert.deepEqual(event?.data, {});
    assert.ok(details.errorInstance instanceof LawViolation);
    assert.equal(details.errorInstance.reason, "the event was processed before the acknowledgement was sent");
  });
});
