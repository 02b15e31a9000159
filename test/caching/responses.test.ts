/**
 * preconditionProblem and preconditionResponse: the 412/428 as a throwable HttpProblem, and the response
 * built from it, for every outcome of the §13.2.2 case matrix.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  evaluatePreconditions,
  type PreconditionResult,
  preconditionProblem,
  preconditionResponse,
} from "../../src/caching/index";
import { HttpProblem, isHttpProblem } from "../../src/http/problem";
import { anyFieldArb } from "./arbitraries";
import { CASES, CURRENT, NOW } from "./precondition-cases";

const FAILED = ["if-match", "if-unmodified-since", "if-none-match"] as const;

describe("preconditionProblem", () => {
  it.each(FAILED)("makes a 412 precondition_failed problem naming %s", (failed) => {
    const problem = preconditionProblem({ kind: "precondition-failed", failed });
    expect(problem).toBeInstanceOf(HttpProblem);
    expect(problem?.status).toBe(412);
    expect(problem?.code).toBe("precondition_failed");
    expect(problem?.extensions).toEqual({ failed });
    expect(problem?.toJSON()).toMatchObject({ status: 412, code: "precondition_failed", failed });
  });

  it("makes a 428 precondition_required problem (RFC 6585 §3)", () => {
    const problem = preconditionProblem({ kind: "precondition-required" });
    expect(problem?.status).toBe(428);
    expect(problem?.code).toBe("precondition_required");
    expect(isHttpProblem(problem)).toBe(true);
  });

  it.each(["if-match", "if-none-match"] as const)("makes a 400 malformed_precondition problem naming %s", (field) => {
    const problem = preconditionProblem({ kind: "malformed-precondition", field });
    expect(problem?.status).toBe(400);
    expect(problem?.code).toBe("malformed_precondition");
    expect(problem?.toJSON()).toMatchObject({ status: 400, code: "malformed_precondition", field });
    expect(preconditionResponse({ kind: "malformed-precondition", field })).toEqual(problem?.toResponse());
  });

  it("is undefined for proceed and for not-modified, which are not errors", () => {
    expect(preconditionProblem({ kind: "proceed" })).toBeUndefined();
    expect(preconditionProblem({ kind: "not-modified", headers: { etag: '"a"' } })).toBeUndefined();
  });

  it("is what a handler throws: the adapter renders the same response preconditionResponse returns", () => {
    const result: PreconditionResult = { kind: "precondition-failed", failed: "if-match" };
    const thrown = (() => {
      try {
        throw preconditionProblem(result);
      } catch (error) {
        return error;
      }
    })();
    expect(isHttpProblem(thrown)).toBe(true);
    expect((thrown as HttpProblem).toResponse()).toEqual(preconditionResponse(result));
  });
});

describe("preconditionResponse agrees with preconditionProblem", () => {
  const results = Object.values(CASES)
    .flat()
    .map((c) => {
      const current = c.current === null ? undefined : (c.current ?? CURRENT);
      return evaluatePreconditions({ method: c.method, headers: c.headers }, current, {
        requirePrecondition: c.requirePrecondition,
        now: NOW,
      });
    });

  it("for every result of the §13.2.2 case matrix", () => {
    for (const result of results) {
      const response = preconditionResponse(result);
      const problem = preconditionProblem(result);
      if (result.kind === "proceed") expect(response).toBeUndefined();
      else if (result.kind === "not-modified") {
        expect(problem).toBeUndefined();
        expect(response).toEqual({ status: 304, headers: result.headers, body: null });
      } else expect(response).toEqual(problem?.toResponse());
    }
  });

  it("for any request: a problem exactly when the response is a 400, 412 or 428", () => {
    const headers = fc.record(
      { "if-match": anyFieldArb, "if-none-match": anyFieldArb, "if-unmodified-since": anyFieldArb },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.constantFrom("GET", "PUT", "DELETE"), headers, fc.boolean(), (method, h, require) => {
        const result = evaluatePreconditions({ method, headers: h }, CURRENT, {
          requirePrecondition: require,
          now: NOW,
        });
        const response = preconditionResponse(result);
        const problem = preconditionProblem(result);
        const status = response?.status;
        expect(problem !== undefined).toBe(status === 400 || status === 412 || status === 428);
        if (problem !== undefined) expect(response).toEqual(problem.toResponse());
      }),
    );
  });
});
