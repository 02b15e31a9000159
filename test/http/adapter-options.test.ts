import { describe, expect, it } from "vitest";
import { bodyConsumed } from "../../src/http/adapter-options";
import { HTTP_PROBLEM_CODES } from "../../src/http/problem";

describe("bodyConsumed: the one 500 every adapter answers a body read before it with", () => {
  it("is a 500 body_consumed problem, a code of HTTP_PROBLEM_CODES, that keeps its cause for onError", () => {
    const cause = new TypeError("rest-webhooks/node: read before the adapter");
    const problem = bodyConsumed(cause);
    expect(problem.status).toBe(500);
    expect(problem.code).toBe("body_consumed");
    expect(HTTP_PROBLEM_CODES).toContain(problem.code);
    expect(problem.cause).toBe(cause);
  });

  it("sends the same document whichever adapter's cause it carries, and never the cause (RFC 9457 §5)", () => {
    const node = bodyConsumed(new TypeError("rest-webhooks/node: secret internals"));
    const fetch = bodyConsumed(new TypeError("rest-webhooks/fetch: other internals"));
    expect(node.toResponse()).toStrictEqual(fetch.toResponse());
    expect(node.toResponse().headers).toStrictEqual({ "content-type": "application/problem+json" });
    expect(node.toResponse().body).not.toContain("internals");
    expect(node.toJSON()).toMatchObject({ type: "about:blank", status: 500, code: "body_consumed" });
  });
});
