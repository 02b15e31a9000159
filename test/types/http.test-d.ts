import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { describe, expectTypeOf, it } from "vitest";
import * as fetchAdapter from "../../src/fetch";
import {
  type BareItem,
  type BodyResult,
  type Handler,
  HttpProblem,
  type HttpRequest,
  type HttpResponse,
  item,
  json,
  type MediaType,
  type Method,
  type ProblemDocument,
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
    else expectTypeOf(result.problem).toEqualTypeOf<HttpProblem>();
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
    expectTypeOf(nodeAdapter.adapt).parameters.toEqualTypeOf<[Handler, (nodeAdapter.AdapterOptions | undefined)?]>();
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
