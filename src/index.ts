/**
 * rest-webhooks: REST and webhook primitives. The root export is the HTTP vocabulary;
 * each module has its own subpath (`rest-webhooks/routing`, `rest-webhooks/caching`, …).
 */
export * from "./http/index";
