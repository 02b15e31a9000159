import { unsupportedMediaType } from "../../http/unsupported-media-type";
import { MERGE_PATCH_CONTENT_TYPE } from "../../routing/merge-patch";
import { takesMediaType } from "../../routing/request-media-types";
import type { Middleware } from "../../routing/types";

/**
 * The media types `PATCH /{endpoint_id}` takes: a JSON Merge Patch, or the fields to replace as JSON or a form (its
 * `requestMediaTypes`, so that its OPTIONS answer, every 415 and OpenAPI name all three).
 */
export const PATCH_TYPES = [MERGE_PATCH_CONTENT_TYPE, "application/json", "application/x-www-form-urlencoded"];

/** Whether a request's Content-Type is `application/merge-patch+json` (RFC 7396 §4), parameters and case aside. */
export const isMergePatch = (contentType: string | undefined): boolean =>
  takesMediaType([MERGE_PATCH_CONTENT_TYPE], contentType);

/**
 * The endpoint's PATCH, before its body is read: a body of another media type is a 415 naming the ones it takes in
 * Accept-Patch (RFC 5789 §2.2, §3.1). The body reader takes any `+json` type as JSON, so without this a JSON Patch
 * (RFC 6902) or a vendor type would be read as the fields to replace, metadata and headers wholesale. The router
 * refuses them too (the route's `requestMediaTypes`); here first, so that the 415 answers before the preconditions.
 */
export const patchMediaTypes: Middleware = (next) => (request) => {
  if (request.body.byteLength === 0) return next(request);
  if (takesMediaType(PATCH_TYPES, request.headers["content-type"])) return next(request);
  throw unsupportedMediaType(request, PATCH_TYPES);
};
