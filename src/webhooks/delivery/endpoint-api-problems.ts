import { HttpProblem } from "../../http/problem";
import type { AdminResult } from "./endpoint-admin";

// The problem documents (RFC 9457) the endpoint API answers with, from the admin's refusals and its own checks.

/** 404 `endpoint_not_found` / `delivery_not_found`. */
export function notFound(what: "endpoint" | "delivery"): HttpProblem {
  return new HttpProblem({ status: 404, code: `${what}_not_found`, detail: `No such ${what}.` });
}

/**
 * 400 `invalid_cursor`: `starting_after` names no record of the list. The ids of endpoints and deliveries are random
 * and their lists are in creation order, so a page cannot be placed after an id whose record is gone: refused rather
 * than answered with an empty page that would end the client's walk early. The attempt log's ids are ordered, so only
 * one that is no line id at all (the queue's `AttemptCursorError`) is refused there.
 */
export function invalidCursor(what: "endpoint" | "delivery" | "attempt", id: string): HttpProblem {
  return new HttpProblem({
    status: 400,
    code: "invalid_cursor",
    detail:
      what === "attempt"
        ? "starting_after is not the id of a line of the delivery log: list again from the start."
        : `starting_after names no ${what} of this list (deleted, or never one): list again from the start.`,
    extensions: { parameter: "starting_after", value: id },
  });
}

/** The problem of an admin refusal: 404, 409, or 422 pointing at the field refused. */
export function refusal(result: Extract<AdminResult<unknown>, { ok: false }>): HttpProblem {
  if (result.code === "unknown_event_type") {
    const pointer = `/enabled_events/${result.index}`;
    return new HttpProblem({
      status: 422,
      code: result.code,
      detail: result.detail,
      extensions: { errors: [{ pointer, in: "body", code: result.code, message: result.detail }] },
    });
  }
  if (result.code === "too_many_endpoints") {
    // RFC 9110 §15.5.10: the request conflicts with the state of the tenant's endpoints; deleting one resolves it.
    return new HttpProblem({
      status: 409,
      code: result.code,
      detail: result.detail,
      extensions: { limit: result.limit },
    });
  }
  if (result.code === "all_tenants_refused") {
    const error = { pointer: "/all_tenants", in: "body", code: result.code, message: result.detail };
    return new HttpProblem({ status: 422, code: result.code, detail: result.detail, extensions: { errors: [error] } });
  }
  if (!("detail" in result)) {
    if (result.code === "endpoint_not_found") return notFound("endpoint");
    if (result.code === "endpoint_disabled") {
      // RFC 9110 §15.5.10: the endpoint's state is the conflict; enabling it resolves it.
      return new HttpProblem({
        status: 409,
        code: result.code,
        detail: "The endpoint is disabled: enable it to send it events.",
      });
    }
    if (result.code === "delivery_not_found") return notFound("delivery");
    return new HttpProblem({ status: 409, code: "not_retryable", detail: "The delivery is delivered or in flight." });
  }
  return new HttpProblem({
    status: 422,
    code: result.code,
    detail: result.detail,
    extensions: { errors: [{ pointer: "/url", in: "body", code: result.code, message: result.detail }] },
  });
}

/** The value of an admin result, or its refusal's problem thrown. */
export function unwrap<T>(result: AdminResult<T>): T {
  if (!result.ok) throw refusal(result);
  return result.value;
}
