import { describe, expectTypeOf, it } from "vitest";
import {
  type CacheControl,
  type CachingErrorCode,
  conditional,
  evaluatePreconditions,
  formatCacheControl,
  type PreconditionResult,
  parseEntityTagList,
  parseHttpDate,
  preconditionProblem,
  type RequestCacheControl,
  type ResponseCacheControl,
} from "../../src/caching/index";
import type { Handler, ResponseHeaders } from "../../src/http/message";
import type { HttpProblem } from "../../src/http/problem";

describe("caching public types", () => {
  it("precondition results are a discriminated union", () => {
    const result = evaluatePreconditions({ method: "GET", headers: {} }, undefined);
    expectTypeOf(result).toEqualTypeOf<PreconditionResult>();
    if (result.kind === "not-modified") expectTypeOf(result.headers).toEqualTypeOf<ResponseHeaders>();
    if (result.kind === "precondition-failed") {
      expectTypeOf(result.failed).toEqualTypeOf<"if-match" | "if-unmodified-since" | "if-none-match">();
    }
    if (result.kind === "malformed-precondition") {
      expectTypeOf(result.field).toEqualTypeOf<"if-match" | "if-none-match">();
    }
    // @ts-expect-error only not-modified carries headers
    if (result.kind === "proceed") void result.headers;
  });

  it("preconditionProblem gives a throwable HttpProblem or undefined", () => {
    expectTypeOf(preconditionProblem).parameter(0).toEqualTypeOf<PreconditionResult>();
    expectTypeOf(preconditionProblem).returns.toEqualTypeOf<HttpProblem | undefined>();
  });

  it("parsers answer undefined instead of throwing", () => {
    expectTypeOf(parseHttpDate("x")).toEqualTypeOf<number | undefined>();
    expectTypeOf(parseEntityTagList("x")).toEqualTypeOf<
      "*" | readonly { readonly weak: boolean; readonly tag: string }[] | undefined
    >();
  });

  it("the typed Cache-Control builders keep request and response directives apart", () => {
    expectTypeOf<{ onlyIfCached: true }>().toMatchTypeOf<RequestCacheControl>();
    // @ts-expect-error s-maxage is a response directive
    const request: RequestCacheControl = { sMaxage: 1 };
    // @ts-expect-error min-fresh is a request directive
    const response: ResponseCacheControl = { minFresh: 1 };
    // @ts-expect-error a request no-cache takes no field names
    const qualified: RequestCacheControl = { noCache: ["set-cookie"] };
    expectTypeOf(formatCacheControl).parameter(0).toMatchTypeOf<CacheControl>();
    void [request, response, qualified];
  });

  it("conditional(options) is a middleware: it takes a Handler and returns one", () => {
    expectTypeOf(conditional({})).toEqualTypeOf<(handler: Handler) => Handler>();
    expectTypeOf(conditional()(() => ({ status: 200, headers: {} }))).toEqualTypeOf<Handler>();
    // @ts-expect-error validators must return Validators
    conditional({ validators: () => "etag" });
    // @ts-expect-error the handler-first form is gone
    conditional(() => ({ status: 200, headers: {} }), {});
  });

  it("error codes are a closed union", () => {
    expectTypeOf<"invalid_date">().toMatchTypeOf<CachingErrorCode>();
    // @ts-expect-error not a caching error code
    const code: CachingErrorCode = "oops";
    void code;
  });
});
