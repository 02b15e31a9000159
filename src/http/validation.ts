import type { z } from "zod";
import { HttpProblem, type HttpProblemCode } from "./problem";

/** One field error in a 422 problem: where (a JSON Pointer, RFC 6901) and why. */
export interface FieldError {
  /** JSON Pointer to the offending value inside `in`, e.g. `/items/0/quantity`. */
  pointer: string;
  /** Which part of the request the value came from. */
  in: "body" | "query" | "params" | "headers";
  /** zod's issue code, e.g. `invalid_type`, `too_small`, `unrecognized_keys`. */
  code: string;
  message: string;
}

function escapePointerToken(token: PropertyKey): string {
  return String(token).replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Converts zod issues to field errors with RFC 6901 pointers. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[], location: FieldError["in"] = "body"): FieldError[] {
  return issues.map((issue) => ({
    pointer: issue.path.length === 0 ? "" : `/${issue.path.map(escapePointerToken).join("/")}`,
    in: location,
    code: issue.code,
    message: issue.message,
  }));
}

/**
 * A 422 problem listing every field error of a failed zod parse (RFC 9457 §3.2 extension `errors`). Its type is
 * `about:blank`, so its title is the status phrase (RFC 9457 §4.2.1): "Unprocessable Content" for 422.
 * @example
 * const parsed = schema.safeParse(body);
 * if (!parsed.success) throw validationProblem(parsed.error);
 */
export function validationProblem(
  error: z.ZodError,
  location: FieldError["in"] = "body",
  status = 422,
): HttpProblem<HttpProblemCode> {
  const errors = fieldErrors(error.issues, location);
  return new HttpProblem({
    status,
    code: "validation_failed",
    // No title of our own: with type about:blank it SHOULD be the status phrase (RFC 9457 §4.2.1).
    detail: `${errors.length} field error${errors.length === 1 ? "" : "s"} in the request ${location}.`,
    extensions: { errors },
    cause: error,
  });
}
