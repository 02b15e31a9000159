import { HttpProblem, type HttpProblemCode } from "./problem";
import type { PrototypeFault, PrototypeFaultAt } from "./prototype-members";

/**
 * Where a refused member was: a body (content, so 422 as its other member faults) or a query (400, as its other
 * problems are). The two answers share the code and the `errors` entry, told apart by `in`.
 */
export interface ForbiddenMemberPlace {
  readonly status: 400 | 422;
  readonly in: "body" | "query";
}

const MESSAGES: Readonly<Record<ForbiddenMemberPlace["in"], Readonly<Record<PrototypeFault, string>>>> = {
  body: {
    proto_key: "A member is named __proto__, which copied into an object sets its prototype.",
    constructor_prototype: "A constructor member holds a prototype member, which a merge would copy into a prototype.",
  },
  query: {
    proto_key: "A query parameter is named __proto__, which copied into an object sets its prototype.",
    // A query value is text, which holds no `prototype` member: kept for a total table, never answered today.
    constructor_prototype:
      "A constructor parameter holds a prototype member, which a merge would copy into a prototype.",
  },
};

const WHERE = { body: "the request body", query: "the query" } as const;

/**
 * The RFC 9457 `forbidden_member` problem for a member that would set a prototype once copied (prototype
 * poisoning), as the body readers, the router's query check and the signed-payload reader answer it: `errors` names
 * the member with an RFC 6901 JSON Pointer and says where (`in`), as a validation problem does. For body readers of
 * one's own, so that they answer byte for byte as the built-in ones.
 * @param at the refused member: its JSON Pointer and why (`proto_key` for an own `__proto__`,
 *   `constructor_prototype` for a `constructor` member holding a `prototype` member).
 * @param place the status and the part of the request it was in: `{ status: 422, in: "body" }` for content (as the
 *   body readers answer), `{ status: 400, in: "query" }` for a query parameter.
 * @returns the problem; throw it from a handler (the adapters render it) or return `problem.toResponse()`.
 * @example
 * const value = parseForm(text); // a reader of one's own
 * if (Object.hasOwn(value, "__proto__")) {
 *   throw forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto_key" }, { status: 422, in: "body" });
 * }
 * @see https://www.rfc-editor.org/rfc/rfc9457 (problem details), https://www.rfc-editor.org/rfc/rfc6901 (pointer)
 */
export function forbiddenMemberProblem(
  at: PrototypeFaultAt,
  place: ForbiddenMemberPlace,
): HttpProblem<HttpProblemCode> {
  const message = MESSAGES[place.in][at.fault];
  return new HttpProblem({
    status: place.status,
    code: "forbidden_member",
    detail: `${message} At "${at.pointer}" of ${WHERE[place.in]}.`,
    extensions: { errors: [{ pointer: at.pointer, in: place.in, code: at.fault, message }] },
  });
}
