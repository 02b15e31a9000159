/**
 * rest-webhooks/routing: declare resources as the API is documented (OpenAPI path templates,
 * zod schemas), get a linear-time matcher, correct HTTP edge cases, enforced method rules
 * and an OpenAPI 3.1 document.
 */
export { RoutingError, type RoutingErrorCode } from "./errors";
export type { BadPathCode, MatchOptions, MatchResult, PathPolicy } from "./match-result";
export { allowList, compileMatcher, type Matcher, type MatcherRoute } from "./matcher";
export { type JsonObject, type JsonValue, MERGE_PATCH_CONTENT_TYPE, mergePatch } from "./merge-patch";
export {
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiExtra,
  type OpenApiInfo,
  openApiDocument,
  type WebhookCatalog,
} from "./openapi";
export { type RouteMatch, routeOf } from "./operation";
export { queryInteger } from "./query-integer";
export { type CollectionTemplate, ResourceBuilder } from "./resource";
export { createRouter, Router } from "./router";
export { type ParsedTemplate, type PathParams, parseTemplate, type TemplateSegment } from "./template";
export type {
  BodyContext,
  CreateContext,
  Middleware,
  ObjectSchema,
  OperationKind,
  OperationResponse,
  OperationSpec,
  ReplaceContext,
  Reply,
  RouteContext,
  RouteInfo,
  RouterOptions,
  UpdateContext,
} from "./types";
