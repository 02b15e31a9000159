import type fc from "fast-check";
import { conditionalGetAnswers304, staleIfMatchIsRefused } from "./laws/conditional";
import {
  acknowledgesBeforeProcessing,
  badSignaturesAreRejected,
  type ConsumerSpec,
  duplicatesAreProcessedOnce,
} from "./laws/consumer";
import { idempotencyKeyMismatch, idempotencyKeyReplays } from "./laws/idempotency";
import { LAW_NAMES } from "./laws/names";
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
  /** Each law has its own argument tuple: a counterexample is read as `unknown[]`. */
  property: fc.IAsyncPropertyWithHooks<unknown[]>;
}

/**
 * Every HTTP law that applies to the resource, for a loop of `it(law.name, () => fc.assert(law.property))`.
 * Laws for methods the spec says are unsupported are left out; the stale-If-Match law uses whichever of PUT,
 * PATCH and DELETE the resource answers.
 */
export function resourceLaws(target: Target, spec: ResourceSpec): NamedLaw[] {
  const supports = supported(spec);
  const laws: NamedLaw[] = [
    { name: LAW_NAMES.safeMethodsChangeNothing, property: safeMethodsChangeNothing(target, spec) },
    { name: LAW_NAMES.headMatchesGet, property: headMatchesGet(target, spec) },
    { name: LAW_NAMES.postCreatesEachTime, property: postCreatesEachTime(target, spec) },
    { name: LAW_NAMES.conditionalGetAnswers304, property: conditionalGetAnswers304(target, spec) },
    { name: LAW_NAMES.errorsAreProblems, property: errorsAreProblems(target, spec) },
  ];
  if (supports.put) laws.push({ name: LAW_NAMES.putIsIdempotent, property: putIsIdempotent(target, spec) });
  if (supports.put || supports.patch || supports.delete) {
    laws.push({
      name: LAW_NAMES.staleIfMatchIsRefused,
      property: staleIfMatchIsRefused(target, spec),
    });
  }
  if (supports.delete) laws.push({ name: LAW_NAMES.deleteIsIdempotent, property: deleteIsIdempotent(target, spec) });
  if (supports.patch) {
    laws.push({ name: LAW_NAMES.mergePatchIsIdempotent, property: mergePatchIsIdempotent(target, spec) });
  }
  if (supports.idempotencyKey) {
    laws.push({ name: LAW_NAMES.idempotencyKeyReplays, property: idempotencyKeyReplays(target, spec) });
    laws.push({
      name: LAW_NAMES.idempotencyKeyMismatch,
      property: idempotencyKeyMismatch(target, spec),
    });
  }
  return laws;
}

/** Every webhook-consumer law. */
export function consumerLaws(target: Target, consumer: ConsumerSpec): NamedLaw[] {
  return [
    { name: LAW_NAMES.badSignaturesAreRejected, property: badSignaturesAreRejected(target, consumer) },
    { name: LAW_NAMES.duplicatesAreProcessedOnce, property: duplicatesAreProcessedOnce(target, consumer) },
    { name: LAW_NAMES.acknowledgesBeforeProcessing, property: acknowledgesBeforeProcessing(target, consumer) },
  ];
}
