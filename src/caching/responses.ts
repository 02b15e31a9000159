import type { HttpResponse } from "../http/message";
import { HttpProblem } from "../http/problem";
import type { PreconditionResult } from "./preconditions";

const DETAIL = {
  "if-match": "If-Match names no current entity tag of the resource: it has changed since you read it.",
  "if-unmodified-since": "The resource was modified after the If-Unmodified-Since date.",
  "if-none-match": "If-None-Match matched: the resource already exists in that state.",
} as const;

/**
 * The problem for a precondition outcome that refuses the request: 412 `precondition_failed` (with the
 * `failed` precondition as an extension member), 428 `precondition_required`, or 400 `malformed_precondition` (with
 * the malformed `field`, on an unsafe method); `undefined` for `proceed`
 * and `not-modified`, which are not errors. Throw it from a handler, or answer with `toResponse()`.
 * @example
 * const result = evaluatePreconditions(request, { etag: etagFromVersion(row.version, { weak: false }) });
 * const problem = preconditionProblem(result);
 * if (problem !== undefined) throw problem; // inside the write transaction: nothing is written
 */
export function preconditionProblem(result: PreconditionResult): HttpProblem | undefined {
  switch (result.kind) {
    case "precondition-failed":
      // RFC 9110 §15.5.13.
      return new HttpProblem({
        status: 412,
        code: "precondition_failed",
        detail: DETAIL[result.failed],
        extensions: { failed: result.failed },
      });
    case "malformed-precondition":
      // RFC 9110 §15.5.1: the field is not `"*" / #entity-tag` (§13.1.1, §13.1.2), so the write is not attempted.
      return new HttpProblem({
        status: 400,
        code: "malformed_precondition",
        detail: `${result.field === "if-match" ? "If-Match" : "If-None-Match"} is not "*" or a list of quoted entity tags such as "v1", W/"v2".`,
        extensions: { field: result.field },
      });
    case "precondition-required":
      // RFC 6585 §3.
      return new HttpProblem({
        status: 428,
        code: "precondition_required",
        detail: "This request must be conditional: send If-Match with the entity tag you last read.",
      });
    default:
      return undefined;
  }
}

/**
 * The response for a precondition outcome: 304 with its headers and no content, the 400, 412 or 428 problem
 * document of {@link preconditionProblem} (RFC 9457), or `undefined` for `proceed`.
 * @example
 * const result = evaluatePreconditions(request, current);
 * if (result.kind !== "proceed") return preconditionResponse(result);
 */
export function preconditionResponse(result: PreconditionResult): HttpResponse | undefined {
  switch (result.kind) {
    case "proceed":
      return undefined;
    case "not-modified":
      // RFC 9110 §15.4.5: a 304 cannot contain content.
      return { status: 304, headers: { ...result.headers }, body: null };
    default:
      return preconditionProblem(result)?.toResponse();
  }
}
