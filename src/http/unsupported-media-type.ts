import type { HttpRequest } from "./message";
import { HttpProblem, type HttpProblemCode } from "./problem";

/**
 * The fields naming what a 415 takes: W3C LDP §7.1 Accept-Post on a POST, RFC 5789 §3.1 Accept-Patch on a PATCH,
 * both lists of media types; both when the method is not known; neither for other methods (no field exists).
 */
function acceptFields(method: string | undefined, accepted: string): Record<string, string> {
  if (method === undefined) return { "accept-post": accepted, "accept-patch": accepted };
  if (method === "POST") return { "accept-post": accepted };
  if (method === "PATCH") return { "accept-patch": accepted };
  return {};
}

/**
 * The 415 problem for a body of a media type not in `expected`, naming them in the detail and in the method's
 * Accept-* field: what the body readers and any check of a request's Content-Type answer alike.
 */
export function unsupportedMediaType(
  request: Pick<HttpRequest, "headers"> & { readonly method?: string },
  expected: readonly string[],
): HttpProblem<HttpProblemCode> {
  const got = request.headers["content-type"];
  const send = expected.join(" or ");
  return new HttpProblem({
    status: 415,
    code: "unsupported_media_type",
    detail: got
      ? `Content-Type "${got}" is not accepted here; send ${send}.`
      : `The request has a body but no Content-Type; send ${send}.`,
    headers: acceptFields(request.method, expected.join(", ")),
  });
}
