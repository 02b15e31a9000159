/**
 * rest-webhooks/testing: our HTTP and webhook rules as fast-check properties and arbitraries that
 * run against your own server or consumer. fast-check is a peer dependency of this subpath only.
 */
export * from "./arbitraries/headers";
export * from "./arbitraries/json-text";
export * from "./arbitraries/merge-patch";
export * from "./arbitraries/webhooks";
export * from "./arbitraries/zod";
export * from "./laws/conditional";
export * from "./laws/consumer";
export * from "./laws/idempotency";
export * from "./laws/problems";
export * from "./laws/resource";
export * from "./provider";
export type { ResourceSpec } from "./resource-spec";
export * from "./suite";
export * from "./target";
export { type Exchange, type LawRequest, type LawResponse, LawViolation, Transcript } from "./transcript";
