/**
 * rest-webhooks/testing: our HTTP and webhook rules as fast-check properties and arbitraries that
 * run against your own server or consumer. fast-check is a peer dependency of this subpath only.
 * Every export is named: the public API is a decision, not whatever a module happens to export.
 */
export {
  cacheControl,
  entityTag,
  entityTagList,
  formatHttpDateAs,
  type HttpDateForm,
  type HttpDateOptions,
  httpDate,
  idempotencyKeyHeader,
  malformedEntityTagList,
  malformedHttpDate,
} from "./arbitraries/headers";
export { malformedJson } from "./arbitraries/json-text";
export { jsonDocument, mergePatchDocument } from "./arbitraries/merge-patch";
export {
  type EventEnvelope,
  eventEnvelope,
  type SignedKind,
  type SignedWebhook,
  type SignedWebhookOptions,
  signedWebhook,
} from "./arbitraries/webhooks";
export { ArbitraryDerivationError, type FromZodOptions, fromZod } from "./arbitraries/zod";
export { conditionalGetAnswers304, staleIfMatchIsRefused } from "./laws/conditional";
export {
  acknowledgesBeforeProcessing,
  badSignaturesAreRejected,
  type ConsumerSpec,
  duplicatesAreProcessedOnce,
} from "./laws/consumer";
export { idempotencyKeyMismatch, idempotencyKeyReplays } from "./laws/idempotency";
export { errorsAreProblems } from "./laws/problems";
export {
  deleteIsIdempotent,
  headMatchesGet,
  mergePatchIsIdempotent,
  postCreatesEachTime,
  putIsIdempotent,
  safeMethodsChangeNothing,
} from "./laws/resource";
export {
  createFaultyProvider,
  type DeliveryFault,
  type FaultyProvider,
  type FaultyProviderOptions,
} from "./provider";
export type { ResourceSpec } from "./resource-spec";
export { consumerLaws, type NamedLaw, resourceLaws } from "./suite";
export { fromBaseUrl, fromFetchHandler, fromHandler, type Target } from "./target";
export { type Exchange, type LawRequest, type LawResponse, LawViolation, Transcript } from "./transcript";
