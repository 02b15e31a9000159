import { MERGE_PATCH_CONTENT_TYPE } from "./merge-patch";
import { readsBody } from "./operation";
import type { RouteInfo } from "./types";

/**
 * The request media types an operation takes, as its 415 names them: a merge patch for an update (RFC 7396 §4), JSON
 * (and a form, when the spec takes forms) for another operation that reads its body, or those its spec declares
 * (`requestMediaTypes`); none when it reads no body.
 */
export function acceptedMediaTypes(info: Pick<RouteInfo, "kind" | "method" | "spec">): readonly string[] {
  if (info.kind === "update") return [MERGE_PATCH_CONTENT_TYPE];
  if (!readsBody(info)) return [];
  if (info.spec.requestMediaTypes !== undefined) return info.spec.requestMediaTypes;
  return info.spec.form === true ? ["application/json", "application/x-www-form-urlencoded"] : ["application/json"];
}
