import { type MediaType, parseMediaType } from "../../http/media-type";
import { unsupportedMediaType } from "../../http/unsupported-media-type";
import { MERGE_PATCH_CONTENT_TYPE } from "../../routing/merge-patch";
import type { Middleware } from "../../routing/types";

// The media types `PATCH /{endpoint_id}` takes: a JSON Merge Patch, or the fields to replace as JSON or a form.
const PATCH_TYPES = [MERGE_PATCH_CONTENT_TYPE, "application/json", "application/x-www-form-urlencoded"];

const isType = (media: MediaType | undefined, subtype: string): boolean =>
  media?.type === "application" && media.subtype === subtype;

/** Whether a request's Content-Type is `application/merge-patch+json` (RFC 7396 §4), parameters and case aside. */
export const isMergePatch = (contentType: string | undefined): boolean =>
  isType(parseMediaType(contentType ?? ""), "merge-patch+json");

/**
 * The endpoint's PATCH, before its body is read: a body of another media type is a 415 naming the ones it takes in
 * Accept-Patch (RFC 5789 §2.2, §3.1). The body reader takes any `+json` type as JSON, so without this a JSON Patch
 * (RFC 6902) or a vendor type would be read as the fields to replace, metadata and headers wholesale.
 */
export const patchMediaTypes: Middleware = (next) => (request) => {
  if (request.body.byteLength === 0) return next(request);
  const media = parseMediaType(request.headers["content-type"] ?? "");
  if (PATCH_TYPES.some((type) => isType(media, type.slice("application/".length)))) return next(request);
  throw unsupportedMediaType(request, PATCH_TYPES);
};
