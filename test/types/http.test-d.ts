import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { describe, expectTypeOf, it } from "vitest";
import * as fetchAdapter from "../../src/fetch";
import {
  type BareItem,
  type BodyResult,
  bodyTooLarge,
  type ForbiddenMemberPlace,
  forbiddenMemberProblem,
  type Handler,
  type HTTP_PROBLEM_CODES,
  HttpProblem,
  type HttpProblemCode,
  type HttpRequest,
  type HttpResponse,
  item,
  json,
  type MediaType,
  type Method,
  type ProblemDocument,
  type PrototypeFault,
  type PrototypeFaultAt,
  parseDictionary,
  parseItem,
  parseList,
  parseMediaType,
  type ReadRequestResult,
  type SfItem,
  type SfMember,
  safeJsonBody,
  serializeItem,
  splitHeaderList,
  Token,
  validationProblem,
} from "../../src/http";
import * as nodeAdapter from "../../src/node";

describe("rest-webhooks/http types", () => {
  it("accepts sync and async handlers", () => {
    expectTypeOf<(r: HttpRequest) => HttpResponse>().toMatchTypeOf<Handler>();
    expectTypeOf<(r: HttpRequest) => Promise<HttpResponse>>().toMatchTypeOf<Handler>();
    // @ts-expect-error a handler must return a response
    const bad: Handler = () => "hello";
    void bad;
  });

  it("keeps the request read-only", () => {
    const request = {} as HttpRequest;
    // @ts-expect-error method is readonly
    request.method = "POST";
    expectTypeOf(request.body).toEqualTypeOf<Uint8Array>();
    expectTypeOf(request.headers["x-any"]).toEqualTypeOf<string | undefined>();
    expectTypeOf(request.query["q"]).toEqualTypeOf<string | readonly string[] | undefined>();
  });

  it("builds responses", () => {
    expectTypeOf(json(200, { a: 1 })).toEqualTypeOf<HttpResponse>();
    // @ts-expect-error header values are strings or string arrays
    json(200, {}, { "x-n": 1 });
  });

  it("narrows body results on ok", () => {
    const result = safeJsonBody({ headers: {}, body: new Uint8Array() });
    expectTypeOf(result).toEqualTypeOf<BodyResult<unknown>>();
    if (result.ok) expectTypeOf(result.value).toBeUnknown();
    else expectTypeOf(result.problem).toEqualTypeOf<HttpProblem<HttpProblemCode>>();
  });

  it("builds the forbidden_member problem from a fault and a place", () => {
    expectTypeOf<PrototypeFault>().toEqualTypeOf<"proto_key" | "constructor_prototype">();
    expectTypeOf(forbiddenMemberProblem).parameters.toEqualTypeOf<[PrototypeFaultAt, ForbiddenMemberPlace]>();
    expectTypeOf(forbiddenMemberProblem).returns.toEqualTypeOf<HttpProblem<HttpProblemCode>>();
    // @ts-expect-error a body's forbidden member is a 422 and a query's a 400: no other status
    forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto_key" }, { status: 500, in: "body" });
    // @ts-expect-error the fault is one of the two refused kinds
    forbiddenMemberProblem({ pointer: "/__proto__", fault: "proto" }, { status: 422, in: "body" });
  });

  it("exports the union of the codes this module and the adapters use (STYLE §7)", () => {
    expectTypeOf<HttpProblemCode>().toEqualTypeOf<(typeof HTTP_PROBLEM_CODES)[number]>();
    expectTypeOf<"body_too_large">().toMatchTypeOf<HttpProblemCode>();
    expectTypeOf<"malformed_json">().toMatchTypeOf<HttpProblemCode>();
    expectTypeOf<"unsupported_media_type">().toMatchTypeOf<HttpProblemCode>();
    expectTypeOf<"body_required">().toMatchTypeOf<HttpProblemCode>();
    expectTypeOf(bodyTooLarge(1).code).toEqualTypeOf<HttpProblemCode>();
    expectTypeOf(validationProblem).returns.toEqualTypeOf<HttpProblem<HttpProblemCode>>();
    const read = {} as ReadRequestResult;
    if (!read.ok) expectTypeOf(read.problem.code).toEqualTypeOf<HttpProblemCode>();
    // An annotated problem only takes a code of the union.
    const known: HttpProblem<HttpProblemCode> = new HttpProblem({ status: 400, code: "malformed_json" });
    // @ts-expect-error "malformed_jsn" is not one of the codes
    const typo: HttpProblem<HttpProblemCode> = new HttpProblem({ status: 400, code: "malformed_jsn" });
    void known;
    void typo;
    // Without an annotation a problem takes any code, and a variable can hold any problem.
    let any = new HttpProblem({ status: 404, code: "not_found" });
    any = new HttpProblem({ status: 409, code: "conflict" });
    expectTypeOf(any.code).toEqualTypeOf<string>();
  });

  it("types problem documents", () => {
    const problem = new HttpProblem({ status: 404, code: "not_found" });
    expectTypeOf(problem).toMatchTypeOf<Error>();
    expectTypeOf(problem.toJSON()).toEqualTypeOf<ProblemDocument>();
    expectTypeOf(problem.code).toEqualTypeOf<string>();
    // @ts-expect-error code is required
    new HttpProblem({ status: 404 });
  });

  it("names the known methods", () => {
    expectTypeOf<"GET">().toMatchTypeOf<Method>();
    expectTypeOf<"get">().not.toMatchTypeOf<Method>();
  });

  it("returns undefined on parse failure rather than throwing", () => {
    expectTypeOf(parseMediaType).returns.toEqualTypeOf<MediaType | undefined>();
    expectTypeOf(splitHeaderList).returns.toEqualTypeOf<string[]>();
  });
});

describe("structured field types", () => {
  it("has the RFC 9651 data model", () => {
    expectTypeOf(parseItem).returns.toEqualTypeOf<SfItem | undefined>();
    expectTypeOf(parseList).returns.toEqualTypeOf<SfMember[] | undefined>();
    expectTypeOf(parseDictionary).returns.toEqualTypeOf<Map<string, SfMember> | undefined>();
    expectTypeOf<BareItem>().toEqualTypeOf<number | string | boolean | Token | Uint8Array>();
    expectTypeOf(serializeItem(item("name", { q: 100, w: new Token("x") }))).toBeString();
    // @ts-expect-error a bare item cannot be an object
    item({ a: 1 });
    // @ts-expect-error parameters are bare items too
    item(1, { q: [1] });
  });
});

describe("adapters share names and meaning", () => {
  it("node", () => {
    // The node adapter takes the shared options plus its connection limits.
    expectTypeOf(nodeAdapter.adapt).parameters.toEqualTypeOf<
      [Handler, (nodeAdapter.NodeAdapterOptions | undefined)?]
    >();
    expectTypeOf<nodeAdapter.NodeAdapterOptions>().toExtend<nodeAdapter.AdapterOptions>();
    expectTypeOf<nodeAdapter.NodeAdapterOptions["limits"]>().toEqualTypeOf<
      Partial<nodeAdapter.ServerLimits> | undefined
    >();
    expectTypeOf(nodeAdapter.adapt).returns.toEqualTypeOf<(req: IncomingMessage, res: ServerResponse) => void>();
    expectTypeOf(nodeAdapter.createServer).returns.toEqualTypeOf<Server>();
    expectTypeOf(nodeAdapter.readRequest).returns.toEqualTypeOf<Promise<ReadRequestResult>>();
    expectTypeOf(nodeAdapter.sendResponse).parameters.toEqualTypeOf<[ServerResponse, HttpResponse]>();
  });

  it("fetch", () => {
    expectTypeOf(fetchAdapter.adapt).parameters.toEqualTypeOf<[Handler, (fetchAdapter.AdapterOptions | undefined)?]>();
    expectTypeOf(fetchAdapter.adapt).returns.toEqualTypeOf<(request: Request) => Promise<Response>>();
    expectTypeOf(fetchAdapter.readRequest).returns.toEqualTypeOf<Promise<ReadRequestResult>>();
    expectTypeOf(fetchAdapter.sendResponse).returns.toEqualTypeOf<Response>();
    // @ts-expect-error the fetch adapter takes a Fetch Request, not a node request
    fetchAdapter.readRequest({} as IncomingMessage);
  });
});
