// The laws under node's own test runner (node --test), to show they do not depend on vitest.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  fromHandler,
  LawViolation,
  type ResourceSpec,
  resourceLaws,
  safeMethodsChangeNothing,
} from "../../../src/testing/index";
import { thingServer } from "../fixtures";

const spec: ResourceSpec = {
  collection: "/things",
  createBody: fc.record({ name: fc.string({ maxLength: 8 }), n: fc.integer({ min: 0, max: 1000 }) }),
  patchBody: fc.record({ name: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }),
};

describe("rest-webhooks/testing under node:test", () => {
  for (const law of resourceLaws(fromHandler(thingServer()), spec)) {
    it(law.name, async () => {
      await fc.assert(law.property, { numRuns: 10 });
    });
  }

  it("reports a broken server with the shrunk request sequence", async () => {
    const details = await fc.check(
      safeMethodsChangeNothing(fromHandler(thingServer({ getCountsVisits: true })), spec),
      {
        numRuns: 50,
        seed: 7,
      },
    );
    assert.equal(details.failed, true);
    assert.ok(details.errorInstance instanceof LawViolation);
    assert.match(details.errorInstance.message, /#\d+ GET \/things\/t\d+ HTTP\/1\.1/);
  });
});
