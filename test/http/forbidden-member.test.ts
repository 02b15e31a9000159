import { describe, expect, it } from "vitest";
import { parseJsonText, safeFormBody, safeJsonOrFormBody } from "../../src/http/body";
import { forbiddenMemberProblem } from "../../src/http/forbidden-member";
import * as http from "../../src/http/index";
import type { HttpProblem } from "../../src/http/problem";

const encoder = new TextEncoder();
const form = (text: string) => ({
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: encoder.encode(text),
});
const problemOf = (read: { ok: true } | { ok: false; problem: HttpProblem }) =>
  read.ok ? undefined : JSON.stringify(read.problem.toJSON());

const PROTO = "A member is named __proto__, which copied into an object sets its prototype.";
const CONSTRUCTOR = "A constructor member holds a prototype member, which a merge would copy into a prototype.";
const QUERY_PROTO = "A query parameter is named __proto__, which copied into an object sets its prototype.";

// The documents the body readers answered before the builder was shared, byte for byte.
const bodyDocument = (pointer: string, code: string, message: string) =>
  JSON.stringify({
    type: "about:blank",
    title: "Unprocessable Content",
    status: 422,
    detail: `${message} At "${pointer}" of the request body.`,
    code: "forbidden_member",
    errors: [{ pointer, in: "body", code, message }],
  });

describe("forbiddenMemberProblem: one builder for a body's and a query's prototype member", () => {
  describe("a body's answer is unchanged, byte for byte", () => {
    it.each([
      ["an own __proto__ in JSON", parseJsonText('{"a":{"__proto__":{}}}'), "/a/__proto__", "proto_key", PROTO],
      [
        "a constructor.prototype in JSON",
        parseJsonText('{"constructor":{"prototype":{}}}'),
        "/constructor/prototype",
        "constructor_prototype",
        CONSTRUCTOR,
      ],
      ["a form field named __proto__", safeFormBody(form("__proto__=x")), "/__proto__", "proto_key", PROTO],
      ["a form list __proto__[]", safeJsonOrFormBody(form("__proto__[]=x")), "/__proto__", "proto_key", PROTO],
    ])("%s", (_, read, pointer, code, message) => {
      expect(problemOf(read)).toBe(bodyDocument(pointer, code, message));
    });
  });

  it("builds the body's 422 from the fault and its pointer", () => {
    const problem = forbiddenMemberProblem(
      { pointer: "/x/__proto__", fault: "proto_key" },
      { status: 422, in: "body" },
    );
    expect(JSON.stringify(problem.toJSON())).toBe(bodyDocument("/x/__proto__", "proto_key", PROTO));
  });

  it("builds the query's 400 with the same code and errors, in: query", () => {
    const problem = forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto_key" }, { status: 400, in: "query" });
    expect(problem.toJSON()).toStrictEqual({
      type: "about:blank",
      title: "Bad Request",
      status: 400,
      detail: `${QUERY_PROTO} At "/__proto__" of the query.`,
      code: "forbidden_member",
      errors: [{ pointer: "/__proto__", in: "query", code: "proto_key", message: QUERY_PROTO }],
    });
  });

  it("is public from rest-webhooks/http, for body readers of one's own, answering as the built-in readers do", () => {
    const own = http.forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto_key" }, { status: 422, in: "body" });
    expect(problemOf({ ok: false, problem: own })).toBe(problemOf(safeFormBody(form("__proto__=x"))));
  });
});
