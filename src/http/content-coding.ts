import { splitHeaderList } from "./header-list";
import type { RequestHeaders } from "./message";
import { HttpProblem, type HttpProblemCode } from "./problem";

/**
 * The 415 for a request body in a content coding the body readers do not decode, or `undefined` when the body is in
 * none: no `Content-Encoding`, or only `identity`. RFC 9110 §8.4: the coding is part of the representation, so bytes
 * labelled `gzip` are not JSON however they parse, and §15.5.16 answers 415 to a coding the server does not take,
 * with `Accept-Encoding` naming what it does take (§12.5.3): none but identity.
 * @example contentCodingProblem({ "content-encoding": "gzip" })?.status // 415
 */
export function contentCodingProblem(headers: RequestHeaders): HttpProblem<HttpProblemCode> | undefined {
  // Repeated field lines arrive joined with ", " (RFC 9110 §5.3), one list.
  const value = headers["content-encoding"];
  if (value === undefined) return undefined;
  // Codings are case-insensitive (§8.4.1); "identity" belongs to Accept-Encoding, and is tolerated here as no coding.
  const codings = splitHeaderList(value).filter((coding) => coding.toLowerCase() !== "identity");
  if (codings.length === 0) return undefined;
  return new HttpProblem({
    status: 415,
    code: "unsupported_content_coding",
    detail: `Content-Encoding "${value}" is not accepted here: send the body without a content coding.`,
    headers: { "accept-encoding": "identity" },
  });
}
