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
 * The `forbidden_member` problem for a member that would set a prototype once copied (prototype poisoning):
 * `errors` names it with an RFC 6901 JSON Pointer and says where (`in`), as a validation problem does.
 * @param at the refused member and why (`proto_key` or `constructor_prototype`).
 * @param place the status and the part of the request it was in.
 * @example forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto_key" }, { status: 400, in: "query" })
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
