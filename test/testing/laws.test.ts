import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  acknowledgesBeforeProcessing,
  badSignaturesAreRejected,
  conditionalGetAnswers304,
  consumerLaws,
  deleteIsIdempotent,
  duplicatesAreProcessedOnce,
  fromHandler,
  idempotencyKeyReplays,
  LawViolation,
  putIsIdempotent,
  type ResourceSpec,
  resourceLaws,
  safeMethodsChangeNothing,
} from "../../src/testing/index";
import { generateSecret } from "../../src/webhooks/signing/index";
import { type Breakage, consumerFixture, thingServer } from "./fixtures";

const spec: ResourceSpec = {
  collection: "/things",
  createBody: fc.record({ name: fc.string({ maxLength: 8 }), n: fc.integer({ min: 0, max: 1000 }) }),
  patchBody: fc.record(
    { name: fc.string({ maxLength: 8 }), n: fc.integer({ min: 0, max: 1000 }) },
    { requiredKeys: [] },
  ),
};

/** Runs a law expected to fail and returns fast-check's details. */
async function expectViolation<Ts extends unknown[]>(property: fc.IAsyncPropertyWithHooks<Ts>) {
  const details = await fc.check(property, { numRuns: 60, seed: 20261122 });
  expect(details.failed).toBe(true);
  expect(details.errorInstance).toBeInstanceOf(LawViolation);
  expect((details.errorInstance as LawViolation).message).toContain("--- request sequence ---");
  return details;
}

describe("resource laws", () => {
  describe("a correct server passes every law", () => {
    const target = fromHandler(thingServer());
    for (const law of resourceLaws(target, spec)) {
      it(law.name, async () => {
        await fc.assert(law.property, { numRuns: 25 });
      });
    }
  });

  describe("each broken server fails the matching law, with a shrunk counterexample", () => {
    const broken = (breakage: Breakage) => fromHandler(thingServer(breakage));

    it("GET that counts visits into the state fails 'GET and HEAD change nothing'", async () => {
      const details = await expectViolation(safeMethodsChangeNothing(broken({ getCountsVisits: true }), spec));
      const [body, steps] = details.counterexample as [unknown, { method: string; onItem: boolean }[]];
      // Shrunk to the smallest body and a single safe request (the law's own reads are GETs too).
      expect(body).toEqual({ name: "", n: 0 });
      expect(steps).toHaveLength(1);
      expect(details.numShrinks).toBeGreaterThan(0);
    });

    it("PUT that appends fails 'PUT twice = PUT once'", async () => {
      const details = await expectViolation(putIsIdempotent(broken({ putAppends: true }), spec));
      expect(details.counterexample).toEqual([
        { name: "", n: 0 },
        { name: "", n: 0 },
      ]);
    });

    it("DELETE that errors on the second call fails 'DELETE twice leaves it gone'", async () => {
      const details = await expectViolation(deleteIsIdempotent(broken({ deleteErrorsTwice: true }), spec));
      expect(details.counterexample).toEqual([{ name: "", n: 0 }]);
      expect((details.errorInstance as LawViolation).reason).toContain("500");
    });

    it("a weak-ETag server answering 200 to its own ETag fails the 304 law", async () => {
      const details = await expectViolation(conditionalGetAnswers304(broken({ ignoresOwnEtag: true }), spec));
      expect(details.counterexample).toEqual([{ name: "", n: 0 }]);
    });

    it("a server ignoring Idempotency-Key fails the idempotency law", async () => {
      const details = await expectViolation(idempotencyKeyReplays(broken({ ignoresIdempotencyKey: true }), spec));
      const [body, , times] = details.counterexample as [unknown, string, number];
      expect(body).toEqual({ name: "", n: 0 });
      expect(times).toBe(2);
    });
  });
});

describe("consumer laws", () => {
  const secret = generateSecret();

  describe("a correct consumer passes every law", () => {
    const consumer = consumerFixture(secret);
    const target = fromHandler(consumer.handler);
    for (const law of consumerLaws(target, { path: "/webhooks", secret, ...consumer })) {
      it(law.name, async () => {
        await fc.assert(law.property, { numRuns: 25 });
      });
    }
  });

  it("a consumer that processes duplicates fails 'processed once', shrunk to one event delivered twice", async () => {
    const consumer = consumerFixture(secret, { processesDuplicates: true });
    const details = await expectViolation(
      duplicatesAreProcessedOnce(fromHandler(consumer.handler), { path: "/webhooks", secret, ...consumer }),
    );
    const [[planned]] = details.counterexample as [[[{ id: string }, number][], number[], number]];
    // Minimal: two deliveries in all, of one event id (two envelopes whose ids shrank to the same value count as one event).
    expect(planned.reduce((sum, [, times]) => sum + times, 0)).toBe(2);
    expect(new Set(planned.map(([event]) => event.id)).size).toBe(1);
  });

  it("a consumer that runs business logic before replying fails the acknowledgement law", async () => {
    const consumer = consumerFixture(secret, { processesBeforeReply: true });
    await expectViolation(
      acknowledgesBeforeProcessing(fromHandler(consumer.handler), { path: "/webhooks", secret, ...consumer }),
    );
  });

  it("a consumer that accepts any signature fails the bad-signature law", async () => {
    const consumer = consumerFixture(secret);
    const acceptsAll = fromHandler(async () => ({ status: 202, headers: {}, body: null }));
    await expectViolation(badSignaturesAreRejected(acceptsAll, { path: "/webhooks", secret, ...consumer }));
  });
});
