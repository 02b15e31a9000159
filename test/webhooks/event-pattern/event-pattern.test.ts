import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { subscribesTo } from "../../../src/webhooks/delivery/event-type";
import {
  isEventPattern,
  matchesEventPattern,
  patternsMatching,
} from "../../../src/webhooks/event-pattern/event-pattern";
import { EventRouter } from "../../../src/webhooks/event-pattern/event-router";

const word = fc.constantFrom("a", "b", "c_d", "order");
const type = fc.array(word, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("."));
const pattern = fc.oneof(
  fc.constant("*"),
  type,
  type.map((prefix) => `${prefix}.*`),
);

describe("the event-pattern grammar", () => {
  it.each([
    [["*"], "order.created", true],
    [["order.created"], "order.created", true],
    [["order.created"], "order.updated", false],
    [["order.*"], "order.updated", true],
    [["order.*"], "orders.updated", false],
    [["order.*"], "order", false],
    [["invoice.payment.*"], "invoice.payment.failed", true],
    [["invoice.*"], "invoice.payment.failed", true],
  ] as const)("%j matches %s: %s", (patterns, eventType, expected) => {
    expect(subscribesTo(patterns, eventType)).toBe(expected);
  });

  it("patternsMatching lists exactly the patterns that match (what SQL stores look up), most specific first", () => {
    fc.assert(
      fc.property(type, pattern, (eventType, candidate) => {
        expect(patternsMatching(eventType).includes(candidate)).toBe(matchesEventPattern(candidate, eventType));
        expect(patternsMatching(eventType).every(isEventPattern)).toBe(true);
        expect(patternsMatching(eventType)[0]).toBe(eventType);
        expect(patternsMatching(eventType).at(-1)).toBe("*");
      }),
    );
  });

  it("the consumer's router picks a pattern that matches, the most specific one registered", () => {
    fc.assert(
      fc.property(fc.uniqueArray(pattern, { maxLength: 6 }), type, (patterns, eventType) => {
        const router = new EventRouter<string>();
        for (const p of patterns) router.add(p, p);
        const matching = patterns.filter((p) => matchesEventPattern(p, eventType));
        const chosen = router.match(eventType);
        expect(chosen).toBe(patternsMatching(eventType).find((p) => matching.includes(p)));
      }),
    );
  });
});
