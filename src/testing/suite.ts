import type fc from "fast-check";
import { conditionalGetAnswers304, staleIfMatchIsRefused } from "./laws/conditional";
import {
  acknowledgesBeforeProcessing,
  badSignaturesAreRejected,
  type ConsumerSpec,
  duplicatesAreProcessedOnce,
} from "./laws/consumer";
import { idempotencyKeyMismatch, idempotencyKeyReplays } from "./laws/idempotency";
import { errorsAreProblems } from "./laws/problems";
import {
  deleteIsIdempotent,
  headMatchesGet,
  mergePatchIsIdempotent,
  postCreatesEachTime,
  putIsIdempotent,
  safeMethodsChangeNothing,
} from "./laws/resource";
import { type ResourceSpec, supported } from "./resource-spec";
import type { Target } from "./target";

/** A law with its name, ready for `fc.assert(law.property)`. */
export interface NamedLaw {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: each law has its own argument tuple; fc.assert accepts them all.
  property: fc.IAsyncPropertyWithHooks<any>;
}

/**
 * Every HTTP law that applies to the resource, for a loop of `it(law.name, () => fc.assert(law.property))`.
 * Laws for methods the spec says are unsupported are left out; the stale-If-Match law uses whichever of PUT,
 * PATCH and DELETE the resource answers.
 */
export function resourceLaws(target: Target, spec: ResourceSpec): NamedLaw[] {
  const supports = supported(spec);
  const laws: NamedLaw[] = [
    { name: "GET and HEAD change nothing", property: safeMethodsChangeNothing(target, spec) },
    { name: "HEAD's headers equal GET's", property: headMatchesGet(target, spec) },
    { name: "POST twice creates two", property: postCreatesEachTime(target, spec) },
    { name: "a GET with its own ETag answers 304", property: conditionalGetAnswers304(target, spec) },
    { name: "errors are problem documents", property: errorsAreProblems(target, spec) },
  ];
  if (supports.put) laws.push({ name: "PUT twice = PUT once", property: putIsIdempotent(target, spec) });
  if (supports.put || supports.patch || supports.delete) {
    laws.push({
      name: "a stale If-Match answers 412 and changes nothing",
      property: staleIfMatchIsRefused(target, spec),
    });
  }
  if (supports.delete) laws.push({ name: "DELETE twice leaves it gone", property: deleteIsIdempotent(target, spec) });
  if (supports.patch) {
    laws.push({ name: "merge-patch PATCH twice = once", property: mergePatchIsIdempotent(target, spec) });
  }
  if (supports.idempotencyKey) {
    laws.push({ name: "one Idempotency-Key creates one resource", property: idempotencyKeyReplays(target, spec) });
    laws.push({
      name: "a reused Idempotency-Key with another body answers 422",
      property: idempotencyKeyMismatch(target, spec),
    });
  }
  return laws;
}

/** Every webhook-consumer law. */
export function consumerLaws(target: Target, consumer: ConsumerSpec): NamedLaw[] {
  return [
    { name: "bad signatures are rejected and not processed", property: badSignaturesAreRejected(target, consumer) },
    { name: "duplicates are processed once", property: duplicatesAreProcessedOnce(target, consumer) },
    { name: "acknowledgement does not wait for processing", property: acknowledgesBeforeProcessing(target, consumer) },
  ];
}
