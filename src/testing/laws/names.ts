/**
 * Each law's name, in one place: the `name` that `resourceLaws` and `consumerLaws` give it (your test titles) and
 * the `law` of the `LawViolation` it throws are this same string.
 */
export const LAW_NAMES = {
  safeMethodsChangeNothing: "GET and HEAD change nothing",
  headMatchesGet: "HEAD's headers equal GET's",
  postCreatesEachTime: "POST twice creates two",
  putIsIdempotent: "PUT twice = PUT once",
  deleteIsIdempotent: "DELETE twice leaves it gone",
  mergePatchIsIdempotent: "merge-patch PATCH twice = once",
  conditionalGetAnswers304: "a GET with its own ETag answers 304",
  staleIfMatchIsRefused: "a stale If-Match answers 412 and changes nothing",
  idempotencyKeyReplays: "one Idempotency-Key creates one resource",
  idempotencyKeyMismatch: "a reused Idempotency-Key with another body answers 422",
  errorsAreProblems: "errors are problem documents",
  badSignaturesAreRejected: "bad signatures are rejected and not processed",
  duplicatesAreProcessedOnce: "duplicates are processed once",
  acknowledgesBeforeProcessing: "acknowledgement does not wait for processing",
} as const;
