import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { empty, type Handler, type HttpResponse } from "../../src/http/message";
import { HttpProblem } from "../../src/http/problem";
import {
  acknowledgesBeforeProcessing,
  badSignaturesAreRejected,
  type ConsumerSpec,
  conditionalGetAnswers304,
  consumerLaws,
  deleteIsIdempotent,
  duplicatesAreProcessedOnce,
  errorsAreProblems,
  fromFetchHandler,
  fromHandler,
  headMatchesGet,
  idempotencyKeyMismatch,
  idempotencyKeyReplays,
  LawViolation,
  mergePatchIsIdempotent,
  postCreatesEachTime,
  putIsIdempotent,
  type ResourceSpec,
  resourceLaws,
  safeMethodsChangeNothing,
  staleIfMatchIsRefused,
  type Target,
} from "../../src/testing/index";
import { generateSecret, secretFingerprint } from "../../src/webhooks/signing/index";
import { type Breakage, type ConsumerBreakage, consumerFixture, thingServer } from "./fixtures";

const thing = fc.record({ name: fc.string({ maxLength: 8 }), n: fc.integer({ min: 0, max: 1000 }) });
const spec: ResourceSpec = {
  collection: "/things",
  createBody: thing,
  patchBody: fc.record(
    { name: fc.string({ maxLength: 8 }), n: fc.integer({ min: 0, max: 1000 }) },
    { requiredKeys: [] },
  ),
};
/** The smallest thing the arbitrary shrinks to. */
const MIN = { name: "", n: 0 };
/** The smallest key `fc.uuid()` shrinks to, quoted as an sf-string. */
const MIN_KEY = '"00000000-0000-1000-8000-000000000000"';
/** The smallest event envelope `eventEnvelope()` shrinks to. */
const MIN_EVENT = {
  id: "evt_00000000000010008000000000000000",
  type: "user.created",
  timestamp: "2020-01-01T00:00:00.000Z",
  data: {},
};
const SEED = 20261122;

/** Runs a law expected to fail and returns fast-check's details, checking it found a LawViolation and shrank it. */
// biome-ignore lint/suspicious/noExplicitAny: laws have different argument tuples.
async function expectViolation(property: fc.IAsyncPropertyWithHooks<any>) {
  const details = await fc.check(property, { numRuns: 60, seed: SEED });
  expect(details.failed).toBe(true);
  expect(details.errorInstance).toBeInstanceOf(LawViolation);
  expect((details.errorInstance as LawViolation).message).toContain("--- request sequence ---");
  expect(details.numShrinks).toBeGreaterThan(0);
  return { ...details, violation: details.errorInstance as LawViolation };
}

const broken = (breakage: Breakage) => fromHandler(thingServer(breakage));

describe("resource laws", () => {
  describe("a correct server passes every law", () => {
    const target = fromHandler(thingServer());
    for (const law of resourceLaws(target, spec)) {
      it(law.name, async () => {
        await fc.assert(law.property, { numRuns: 25 });
      });
    }
  });

  // Regression: "malformed JSON" was `{` + random text, which could be `{}`, valid JSON this server accepts.
  describe("a correct server that accepts {} as a body passes every law", () => {
    const target = fromHandler(thingServer({ lenientCreate: true }));
    for (const law of resourceLaws(target, spec)) {
      it(law.name, async () => {
        await fc.assert(law.property, { numRuns: 25 });
      });
    }
    it("errors are problem documents, over many malformed bodies", async () => {
      await fc.assert(errorsAreProblems(target, spec), { numRuns: 400 });
    });
  });

  describe("the stale-If-Match law uses whichever unsafe method the resource answers", () => {
    const patchOnly: ResourceSpec = { ...spec, supports: { put: false } };
    const deleteOnly: ResourceSpec = { ...spec, supports: { put: false, patch: false } };

    it("without PUT, a correct server passes and one ignoring If-Match fails (the tag made stale by PATCH)", async () => {
      await fc.assert(staleIfMatchIsRefused(fromHandler(thingServer()), patchOnly), { numRuns: 25 });
      const { violation } = await expectViolation(staleIfMatchIsRefused(broken({ ignoresIfMatch: true }), patchOnly));
      expect(violation.transcript).not.toMatch(/^#\d+ PUT /m);
      expect(violation.transcript).toMatch(/^#\d+ PATCH /m);
    });

    it("with DELETE only, a correct server passes and one ignoring If-Match fails", async () => {
      await fc.assert(staleIfMatchIsRefused(fromHandler(thingServer()), deleteOnly), { numRuns: 25 });
      const { counterexample, violation } = await expectViolation(
        staleIfMatchIsRefused(broken({ ignoresIfMatch: true }), deleteOnly),
      );
      expect(counterexample?.[3]).toBe("DELETE");
      expect(violation.reason).toBe("DELETE with a stale If-Match answered 204, expected 412");
    });

    it("is left out of the suite, and refuses to be built, for a resource with no unsafe method", () => {
      const readOnly: ResourceSpec = { ...spec, supports: { put: false, patch: false, delete: false } };
      expect(resourceLaws(fromHandler(thingServer()), readOnly).map((law) => law.name)).not.toContain(
        "a stale If-Match answers 412 and changes nothing",
      );
      expect(() => staleIfMatchIsRefused(fromHandler(thingServer()), readOnly)).toThrow(TypeError);
    });

    it("fails, not passes vacuously, when the update that makes the tag stale fails", async () => {
      const server = thingServer();
      const noPut = fromHandler(async (request) =>
        request.method === "PUT"
          ? { status: 405, headers: { "content-type": "application/problem+json", allow: "GET" }, body: "{}" }
          : server(request),
      );
      const details = await fc.check(staleIfMatchIsRefused(noPut, spec), { numRuns: 10, seed: SEED });
      expect(details.failed).toBe(true);
      expect((details.errorInstance as LawViolation).reason).toBe("the PUT that makes the ETag stale answered 405");
    });

    // Regression: a server refusing every If-Match with 412, the current tag included (no client could ever update
    // it conditionally), held the law.
    describe("fails a server answering 412 to the current tag too (RFC 9110 §13.1.1)", () => {
      const refusesAll = (weak: boolean) => {
        const server = thingServer();
        return fromHandler(async (request) => {
          if (request.headers["if-match"] !== undefined) {
            return new HttpProblem({ status: 412, code: "precondition_failed" }).toResponse();
          }
          const response = await server(request);
          const tag = response.headers.etag;
          return weak && tag !== undefined
            ? { ...response, headers: { ...response.headers, etag: `W/${tag}` } }
            : response;
        });
      };
      for (const [name, resource] of [
        ["PUT", spec],
        ["PATCH", patchOnly],
        ["DELETE", deleteOnly],
      ] as const) {
        it(`with ${name} available`, async () => {
          const { violation } = await expectViolation(staleIfMatchIsRefused(refusesAll(false), resource));
          expect(violation.reason).toMatch(/^(PUT|PATCH|DELETE) with the current ETag in If-Match answered 412$/);
        });
      }
      it("but not a server with weak ETags: If-Match compares strongly, so no weak tag ever matches", async () => {
        await fc.assert(staleIfMatchIsRefused(refusesAll(true), spec), { numRuns: 25, seed: SEED });
      });
    });

    it("fails with too many skipped runs when no update ever changes the tag", async () => {
      const details = await fc.check(staleIfMatchIsRefused(broken({ putChangesNothing: true }), spec), {
        numRuns: 10,
        seed: SEED,
      });
      expect(details.failed).toBe(true);
      expect(details.numSkips).toBeGreaterThan(10);
      expect(details.errorInstance).toBeNull();
    });
  });

  describe("a PUT refused with 409 (a transition the resource's state forbids) discards the run", () => {
    // A state machine: a PUT whose n is odd conflicts with the current state (RFC 9110 §15.5.10), checked after
    // the preconditions as RFC 9110 §13.2.1 orders it (an If-Match goes to the server's own evaluation).
    const conflicting = (every: boolean) => {
      const server = thingServer();
      return fromHandler(async (request) => {
        if (request.method !== "PUT" || request.headers["if-match"] !== undefined) return server(request);
        const body = JSON.parse(new TextDecoder().decode(request.body)) as { n: number };
        if (every || body.n % 2 === 1) {
          return { status: 409, headers: { "content-type": "application/problem+json" }, body: '{"status":409}' };
        }
        return server(request);
      });
    };

    const laws: {
      name: string;
      // biome-ignore lint/suspicious/noExplicitAny: laws have different argument tuples.
      law: (target: Target, spec: ResourceSpec) => fc.IAsyncPropertyWithHooks<any>;
    }[] = [
      { name: "putIsIdempotent", law: putIsIdempotent },
      { name: "staleIfMatchIsRefused", law: staleIfMatchIsRefused },
    ];
    for (const { name, law } of laws) {
      it(`${name} holds when only some PUTs conflict`, async () => {
        const details = await fc.check(law(conflicting(false), spec), { numRuns: 20, seed: SEED });
        expect(details.failed).toBe(false);
        expect(details.numSkips).toBeGreaterThan(0);
      });

      it(`${name} fails when every PUT conflicts, not passes vacuously`, async () => {
        const details = await fc.check(law(conflicting(true), spec), { numRuns: 5, seed: SEED });
        expect(details.failed).toBe(true);
      });
    }
  });

  describe("the merge-patch law checks its rule or fails, as the PUT law does", () => {
    // PATCHes without If-Match answered by `answer` when it gives a response, else by the correct server.
    const patching = (answer: (patch: { n?: number }) => HttpResponse | undefined) => {
      const server = thingServer();
      return fromHandler(async (request) => {
        if (request.method !== "PATCH" || request.headers["if-match"] !== undefined) return server(request);
        return answer(JSON.parse(new TextDecoder().decode(request.body))) ?? server(request);
      });
    };
    const problem = (status: number) => new HttpProblem({ status, code: "refused" }).toResponse();

    // Regression: the law compared the states around two failed PATCHes, which were equal, and passed.
    it("fails when every PATCH answers 500, not passes vacuously", async () => {
      const details = await fc.check(
        mergePatchIsIdempotent(
          patching(() => problem(500)),
          spec,
        ),
        {
          numRuns: 10,
          seed: SEED,
        },
      );
      expect(details.failed).toBe(true);
      expect((details.errorInstance as LawViolation).reason).toBe("the first PATCH answered 500");
    });

    // RFC 5789 §2.2: 409 for a conflicting state, 422 for a result that would be invalid.
    for (const status of [409, 422]) {
      it(`discards a run whose first PATCH answers ${status}, and holds when only some are refused`, async () => {
        const details = await fc.check(
          mergePatchIsIdempotent(
            patching((patch) => ((patch.n ?? 0) % 2 === 1 ? problem(status) : undefined)),
            spec,
          ),
          { numRuns: 20, seed: SEED },
        );
        expect(details.failed).toBe(false);
        expect(details.numSkips).toBeGreaterThan(0);
      });

      it(`fails when every PATCH answers ${status} (too many discarded runs)`, async () => {
        const details = await fc.check(
          mergePatchIsIdempotent(
            patching(() => problem(status)),
            spec,
          ),
          {
            numRuns: 5,
            seed: SEED,
          },
        );
        expect(details.failed).toBe(true);
      });
    }

    it("fails when the first PATCH answers 400 or 415", async () => {
      for (const status of [400, 415]) {
        const details = await fc.check(
          mergePatchIsIdempotent(
            patching(() => problem(status)),
            spec,
          ),
          {
            numRuns: 5,
            seed: SEED,
          },
        );
        expect((details.errorInstance as LawViolation).reason).toBe(`the first PATCH answered ${status}`);
      }
    });
  });

  // Regression: the spec's headers function was called once, when the law was built, for all its runs.
  it("errorsAreProblems evaluates the spec's headers function for each request", async () => {
    let issued = 0;
    const seen = new Set<string>();
    const server = thingServer();
    const target = fromHandler((request) => {
      seen.add(String(request.headers.authorization));
      return server(request);
    });
    const minting: ResourceSpec = { ...spec, headers: () => ({ authorization: `Bearer token-${++issued}` }) };
    await fc.assert(errorsAreProblems(target, minting), { numRuns: 30 });
    expect(issued).toBeGreaterThanOrEqual(30);
    expect(seen.size).toBe(issued);
  });

  // Regression: with one possible body, `.filter` looked for a second, different one forever (synchronously, so no
  // test time-out fired).
  it("idempotencyKeyMismatch refuses a createBody with one value with a TypeError instead of spinning", async () => {
    let generated = 0;
    // Counted, so that an unbounded search fails this test rather than hanging it.
    const one = fc.constant(MIN).map((body) => {
      if (++generated > 10_000) throw new Error("an unbounded search for a second body");
      return body;
    });
    const law = idempotencyKeyMismatch(fromHandler(thingServer()), { ...spec, createBody: one });
    await expect(fc.assert(law, { numRuns: 5 })).rejects.toThrow(TypeError);
  });

  // Regression: fast-check gives one uuid twice (and the same ones again in another process with the same seed), and
  // a key met again replayed an earlier run's resource: "2 POSTs with one key changed the collection from 156 to 156".
  it("the Idempotency-Key laws never send a key an earlier run or process sent", async () => {
    const keys: string[] = [];
    const server = thingServer();
    const target = fromHandler((request) => {
      if (request.method === "POST") keys.push(String(request.headers["idempotency-key"]));
      return server(request);
    });
    for (let process = 0; process < 2; process++) {
      await fc.assert(idempotencyKeyReplays(target, spec), { numRuns: 30, seed: SEED });
      await fc.assert(idempotencyKeyMismatch(target, spec), { numRuns: 30, seed: SEED });
    }
    // One key per run, sent once per POST of that run.
    const runs = new Set(keys);
    expect(runs.size).toBeGreaterThanOrEqual(120);
    expect(keys.every((key) => /^"[0-9a-f-]{36}\.[0-9a-f-]{36}\.\d+"$/.test(key))).toBe(true);
  });

  // Regression: a server sending Last-Modified once the second of the change is over failed when that second ended
  // between GET and HEAD.
  it("headMatchesGet accepts a field that changed with time, as a later GET sends it too", async () => {
    let requests = 0;
    const server = thingServer();
    // From the third request of each run on (GET, then HEAD after the create), the field is there.
    const target = fromHandler(async (request) => {
      const response = await server(request);
      if (request.method === "POST") requests = 0;
      if (++requests < 3) return response;
      return { ...response, headers: { ...response.headers, "last-modified": "Sun, 29 Nov 2026 07:13:22 GMT" } };
    });
    await fc.assert(headMatchesGet(target, spec), { numRuns: 20, seed: SEED });
    // A field HEAD alone sends still fails it.
    const details = await expectViolation(headMatchesGet(broken({ headAddsHeader: true }), spec));
    expect(details.violation.reason).toMatch(/header x-head-only: GET sent null, HEAD sent 1/);
  });

  // Regression: a Node server writing `res.end(body)` for GET and `res.end()` for HEAD (Node adds Content-Length to
  // the first only) failed: "header content-length: GET sent 91, HEAD sent null".
  describe("headMatchesGet: HEAD may leave out Content-Length (RFC 9110 §8.6, §9.3.2), not send another", () => {
    const server = fromHandler(thingServer());
    const withHeadLength = (length: (sent: string | null) => string | null) =>
      fromFetchHandler(async (request) => {
        const response = await server.send(request);
        if (request.method !== "HEAD") return response;
        const headers = new Headers(response.headers);
        const value = length(headers.get("content-length"));
        if (value === null) headers.delete("content-length");
        else headers.set("content-length", value);
        return new Response(null, { status: response.status, headers });
      });

    it("accepts a HEAD without Content-Length", async () => {
      await fc.assert(
        headMatchesGet(
          withHeadLength(() => null),
          spec,
        ),
        { numRuns: 30, seed: SEED },
      );
    });

    it("fails a HEAD whose Content-Length is not GET's", async () => {
      const wrong = withHeadLength((sent) => String(Number(sent) + 1));
      const { violation } = await expectViolation(headMatchesGet(wrong, spec));
      expect(violation.reason).toMatch(/^header content-length: GET sent \d+, HEAD sent \d+$/);
    });
  });

  // Regression: a server answering every DELETE 200 with a status document (RFC 9110 §9.3.5), the resource there or
  // already gone, failed: "the repeated DELETE answered 200, expected 204 or 404".
  describe("deleteIsIdempotent accepts a repeated DELETE answered as a first one may be (RFC 9110 §9.3.5)", () => {
    const server = thingServer();
    const answering = (status: number) =>
      fromHandler(async (request) => {
        const response = await server(request);
        if (request.method !== "DELETE") return response;
        return { status, headers: { "content-type": "application/json" }, body: '{"deleted":true}' };
      });
    for (const status of [200, 202]) {
      it(`passes a server answering every DELETE ${status}`, async () => {
        await fc.assert(deleteIsIdempotent(answering(status), spec), { numRuns: 20, seed: SEED });
      });
    }
    it("still fails a repeated DELETE answered 500", async () => {
      const { violation } = await expectViolation(deleteIsIdempotent(broken({ deleteErrorsTwice: true }), spec));
      expect(violation.reason).toMatch(/repeated DELETE answered 500/);
    });
  });

  // Regression: a server answering 304 to every If-None-Match (its clients never see a change) held the law.
  it("conditionalGetAnswers304 fails a server answering 304 to a tag it never sent (RFC 9110 §13.1.2)", async () => {
    const server = thingServer();
    const target = fromHandler(async (request) => {
      const response = await server(request);
      const tag = response.headers.etag;
      if (request.method !== "GET" || request.headers["if-none-match"] === undefined || tag === undefined) {
        return response;
      }
      return empty(304, { etag: tag });
    });
    const { violation, counterexample } = await expectViolation(conditionalGetAnswers304(target, spec));
    expect(counterexample).toEqual([MIN]);
    expect(violation.reason).toMatch(/^GET with If-None-Match: ".+", a tag it never sent, answered 304, expected 200$/);
  });

  describe("safeMethodsChangeNothing compares the collection's members, not their order", () => {
    // Regression: a server listing the same things in another order on each GET failed the law.
    it("passes a server listing the same things in another order on each GET", async () => {
      const target = broken({ listRotates: true });
      await fc.assert(safeMethodsChangeNothing(target, spec), { numRuns: 30, seed: SEED });
    });
    it("still fails a server whose collection GET changes a member's state", async () => {
      const server = thingServer({ listRotates: true });
      let gets = 0;
      const target = fromHandler(async (request) => {
        const response = await server(request);
        if (request.method !== "GET" || request.path !== "/things" || gets++ === 0) return response;
        // Every list after the first shows its first member renamed: the same count, another state.
        const items = JSON.parse(response.body as string) as { name: string }[];
        if (items[0] !== undefined) items[0].name += "!";
        return { ...response, body: JSON.stringify(items) };
      });
      const { violation } = await expectViolation(safeMethodsChangeNothing(target, spec));
      expect(violation.reason).toBe("the collection changed after safe requests");
    });
  });

  describe("putIsIdempotent counts the collection only where it can, as it needs no count to check the item", () => {
    it("passes a collection listed in an envelope of another shape, and one with no list nor count()", async () => {
      const server = thingServer();
      const results = fromHandler(async (request) => {
        const response = await server(request);
        if (request.method !== "GET" || request.path !== "/things") return response;
        return { ...response, headers: { "content-type": "application/json" }, body: `{"results":${response.body}}` };
      });
      const listed = await results.send(new Request(`${results.baseUrl}/things`));
      expect(await listed.json()).toEqual({ results: expect.any(Array) });
      await fc.assert(putIsIdempotent(results, spec), { numRuns: 20, seed: SEED });
      const unlisted: ResourceSpec = { ...spec, supports: { list: false } };
      await fc.assert(putIsIdempotent(fromHandler(thingServer()), unlisted), { numRuns: 20, seed: SEED });
    });
    it("counts with count() when there is no list", async () => {
      const things: ResourceSpec = { ...spec, supports: { list: false }, count: () => counted };
      let counted = 0;
      const server = thingServer({ putCreates: true });
      const target = fromHandler(async (request) => {
        const response = await server(request);
        if (request.method === "PUT" || request.method === "POST") counted++;
        return response;
      });
      const { violation } = await expectViolation(putIsIdempotent(target, things));
      expect(violation.reason).toMatch(/after one PUT and/);
    });
  });

  // Regression: the reason quoted both values as they were, so a rotated session cookie reached the CI log that the
  // transcript had kept it out of.
  describe("headMatchesGet's reason shows credentials as the transcript does: by fingerprint", () => {
    // A server that sends a fresh secret value of `field` with every answer, as one rotating its session cookie.
    const rotating = (field: string, sent: string[]) => {
      const server = thingServer();
      return fromHandler(async (request) => {
        const response = await server(request);
        sent.push(`session=SECRET-${sent.length}; HttpOnly`);
        return { ...response, headers: { ...response.headers, [field]: sent.at(-1) as string } };
      });
    };
    const FINGERPRINTED =
      /^header ([a-z-]+): GET sent … \(fingerprint ([0-9a-f]{8})\), HEAD sent … \(fingerprint ([0-9a-f]{8})\)$/;

    it("masks Set-Cookie", async () => {
      const sent: string[] = [];
      const { violation } = await expectViolation(headMatchesGet(rotating("set-cookie", sent), spec));
      expect(violation.message).not.toContain("SECRET");
      const [, name, get, head] = FINGERPRINTED.exec(violation.reason) ?? [];
      expect(name).toBe("set-cookie");
      // The fingerprints are those of values the server sent, to compare with your own.
      expect(sent.map(secretFingerprint)).toEqual(expect.arrayContaining([get, head]));
    });

    it("masks a field the spec's headers name (the CLI's --header)", async () => {
      const keyed: ResourceSpec = { ...spec, headers: () => ({ "X-Api-Key": "sk_test_key" }) };
      const { violation } = await expectViolation(headMatchesGet(rotating("x-api-key", []), keyed));
      expect(violation.reason).not.toContain("SECRET");
      expect(violation.reason).toMatch(FINGERPRINTED);
    });
  });

  // Regression: the transcript a failing law prints showed the fields the spec's headers name (an X-Api-Key) as
  // they were, so the token reached the CI log that the reason already kept it out of.
  describe("a violation's transcript shows the spec's headers by fingerprint, as its reason does", () => {
    const forms: [string, ResourceSpec["headers"]][] = [
      ["a record", { "X-Api-Key": "sk_live_S3CRET" }],
      ["a function", () => ({ "X-Api-Key": "sk_live_S3CRET" })],
    ];
    for (const [form, headers] of forms) {
      it(`with headers as ${form}`, async () => {
        const keyed: ResourceSpec = { ...spec, headers };
        const { violation } = await expectViolation(putIsIdempotent(broken({ putAppends: true }), keyed));
        expect(violation.message).not.toContain("sk_live_S3CRET");
        expect(violation.transcript).toContain(`X-Api-Key: … (fingerprint ${secretFingerprint("sk_live_S3CRET")})`);
        // Other fields are shown as they are.
        expect(violation.transcript).toContain("content-type: application/json");
      });
    }
  });

  // Regression: any status from 400 up passed, so a server crashing (500) on a client's mistake held the law.
  describe("errorsAreProblems wants a 4xx: a 5xx to a client's mistake is the server's failure (RFC 9110 §15.6)", () => {
    it("fails a server answering every request with a 500 problem document", async () => {
      const crashing = fromFetchHandler(async () =>
        Response.json(
          { title: "Internal Server Error", status: 500 },
          { status: 500, headers: { "content-type": "application/problem+json" } },
        ),
      );
      const { violation } = await expectViolation(errorsAreProblems(crashing, spec));
      expect(violation.reason).toMatch(/a request to refuse, answered 500, expected 4xx: a 5xx .* server failed/);
    });

    it("accepts 501 for a method the server does not implement (RFC 9110 §15.6.2)", async () => {
      const server = thingServer();
      const target = fromHandler((request) =>
        ["PROPFIND", "MKCOL", "PURGE"].includes(request.method)
          ? new HttpProblem({ status: 501, code: "not_implemented" }).toResponse()
          : server(request),
      );
      await fc.assert(errorsAreProblems(target, spec), { numRuns: 100, seed: SEED });
    });
  });

  describe("each broken server fails the matching law, with a shrunk counterexample", () => {
    const cases: {
      broken: string;
      breakage: Breakage;
      // biome-ignore lint/suspicious/noExplicitAny: laws have different argument tuples.
      law: (target: Target, spec: ResourceSpec) => fc.IAsyncPropertyWithHooks<any>;
      counterexample: unknown[];
      reason: RegExp;
    }[] = [
      {
        broken: "GET that counts visits into the state",
        breakage: { getCountsVisits: true },
        law: safeMethodsChangeNothing,
        // The smallest body and one safe request (the law's own reads are GETs too).
        counterexample: [MIN, [{ method: "GET", onItem: false }]],
        reason: /the item's state changed/,
      },
      {
        broken: "HEAD whose headers differ from GET's",
        breakage: { headAddsHeader: true },
        law: headMatchesGet,
        counterexample: [MIN, true],
        reason: /header x-head-only: GET sent null, HEAD sent 1/,
      },
      {
        broken: "PUT that appends",
        breakage: { putAppends: true },
        law: putIsIdempotent,
        counterexample: [MIN, MIN],
        reason: /two PUTs differs/,
      },
      {
        // Regression: the item was as the first PUT left it, so the law held.
        broken: "PUT that creates another resource each time, the item left as it was",
        breakage: { putCreates: true },
        law: putIsIdempotent,
        counterexample: [MIN, MIN],
        reason: /^the collection held \d+ resources after one PUT and \d+ after two$/,
      },
      {
        // Regression: the item was as the first PATCH left it, so the law held.
        broken: "merge-patch PATCH that also creates another resource each time",
        breakage: { patchCreates: true },
        law: mergePatchIsIdempotent,
        counterexample: [MIN, {}],
        reason: /^the collection held \d+ resources after one PATCH and \d+ after two$/,
      },
      {
        broken: "GET of the collection that creates a resource",
        breakage: { listGetCreates: true },
        law: safeMethodsChangeNothing,
        counterexample: [MIN, [{ method: "GET", onItem: false }]],
        reason: /^the collection changed after safe requests$/,
      },
      {
        broken: "DELETE that errors on the second call",
        breakage: { deleteErrorsTwice: true },
        law: deleteIsIdempotent,
        counterexample: [MIN],
        reason: /repeated DELETE answered 500/,
      },
      {
        broken: "POST that answers the existing equal resource instead of creating one",
        breakage: { postReturnsExisting: true },
        law: postCreatesEachTime,
        counterexample: [MIN],
        reason: /both POSTs answered the same Location/,
      },
      {
        broken: "merge-patch PATCH that appends",
        breakage: { patchAppends: true },
        law: mergePatchIsIdempotent,
        // The shortest name that appends something.
        counterexample: [MIN, { name: " " }],
        reason: /two PATCHes differs/,
      },
      {
        broken: "a weak-ETag server answering 200 to its own ETag",
        breakage: { ignoresOwnEtag: true },
        law: conditionalGetAnswers304,
        counterexample: [MIN],
        reason: /answered 200, expected 304/,
      },
      {
        broken: "a server ignoring a stale If-Match",
        breakage: { ignoresIfMatch: true },
        law: staleIfMatchIsRefused,
        // [created, update making the tag stale, its patch, method, the refused attempt, its patch]
        counterexample: [MIN, { name: "", n: 1 }, {}, "PUT", MIN, {}],
        reason: /PUT with a stale If-Match answered 200, expected 412/,
      },
      {
        broken: "a server ignoring Idempotency-Key",
        breakage: { ignoresIdempotencyKey: true },
        law: idempotencyKeyReplays,
        counterexample: [MIN, MIN_KEY, 2],
        reason: /repeat 1/,
      },
      {
        broken: "a server replaying the response but running the handler again",
        breakage: { replaysButRunsAgain: true },
        law: idempotencyKeyReplays,
        counterexample: [MIN, MIN_KEY, 2],
        reason: /2 POSTs with one key changed the collection from \d+ to \d+ resources, expected \+1/,
      },
      {
        broken: "a server accepting a reused key with another body",
        breakage: { acceptsKeyReuse: true },
        law: idempotencyKeyMismatch,
        counterexample: [[MIN, { name: "", n: 1 }], MIN_KEY],
        reason: /answered 201, expected 422/,
      },
      {
        broken: "a server whose errors are plain text",
        breakage: { plainErrors: true },
        law: errorsAreProblems,
        counterexample: [{ method: "GET", path: "/things/0-does-not-exist", headers: {} }],
        reason: /Content-Type "text\/plain", not application\/problem\+json/,
      },
    ];
    for (const c of cases) {
      it(`${c.broken} fails it`, async () => {
        const details = await expectViolation(c.law(broken(c.breakage), spec));
        expect(details.counterexample).toEqual(c.counterexample);
        expect(details.violation.reason).toMatch(c.reason);
      });
    }

    it("the same broken servers pass every other law they do not break", async () => {
      // Each fixture breaks one rule: the counterexamples above are about that rule, not a side effect.
      const passing = await fc.check(putIsIdempotent(broken({ replaysButRunsAgain: true }), spec), { numRuns: 20 });
      expect(passing.failed).toBe(false);
    });
  });
});

// Regression: several laws threw a LawViolation whose `law` differed from the name the suite gives them ("GET with
// its own ETag answers 304" under "a GET with its own ETag answers 304").
describe("each law's violation names it as the suite does", () => {
  const failing = fromHandler(() => empty(500));
  const consumer: ConsumerSpec = {
    path: "/webhooks",
    secret: generateSecret(),
    processed: () => [],
    settle: async () => {},
  };
  for (const law of [...resourceLaws(failing, spec), ...consumerLaws(failing, consumer)]) {
    it(law.name, async () => {
      const details = await fc.check(law.property, { numRuns: 1, seed: SEED });
      expect(details.errorInstance).toBeInstanceOf(LawViolation);
      expect((details.errorInstance as LawViolation).law).toBe(law.name);
    });
  }
});

describe("consumer laws", () => {
  const secret = generateSecret();
  const spec = (consumer: ReturnType<typeof consumerFixture>): ConsumerSpec => ({
    path: "/webhooks",
    secret,
    ...consumer,
  });

  describe("a correct consumer passes every law", () => {
    const consumer = consumerFixture(secret);
    for (const law of consumerLaws(fromHandler(consumer.handler), spec(consumer))) {
      it(law.name, async () => {
        await fc.assert(law.property, { numRuns: 25 });
      });
    }
  });

  it("a consumer that processes duplicates fails 'processed once', shrunk to one event delivered twice", async () => {
    const consumer = consumerFixture(secret, { processesDuplicates: true });
    const details = await expectViolation(duplicatesAreProcessedOnce(fromHandler(consumer.handler), spec(consumer)));
    const [[planned, order, concurrency]] = details.counterexample as [
      [[typeof MIN_EVENT, number][], number[], number],
    ];
    // Minimal: two deliveries in all, of one event id (two envelopes whose ids shrank to the same value count as one event).
    expect(planned.reduce((sum, [, times]) => sum + times, 0)).toBe(2);
    expect(new Set(planned.map(([event]) => event.id)).size).toBe(1);
    for (const [event] of planned) expect(event).toEqual(MIN_EVENT);
    expect(order).toEqual([]);
    expect(concurrency).toBe(1);
  });

  // Regression: processing between batches ran when the batch's start index was odd, never with a concurrency
  // of 2 or 4, so their duplicates never arrived after their event had been processed.
  it("'processed once' settles after every second batch, at every concurrency", async () => {
    const consumer = consumerFixture(secret);
    const log: string[] = [];
    const handler: Handler = (request) => {
      log.push("D");
      return consumer.handler(request);
    };
    const recording: ConsumerSpec = {
      ...spec(consumer),
      processed: () => {
        log.push("P");
        return consumer.processed();
      },
      settle: async () => {
        log.push("S");
        await consumer.settle();
      },
    };
    await fc.assert(duplicatesAreProcessedOnce(fromHandler(handler), recording), { numRuns: 200, seed: SEED });
    // Each run reads processed() before and after its deliveries: between two reads, the deliveries sent before
    // the first settle that more deliveries follow are two batches' worth (2, 4, 6 or 8).
    const firstPause = new Set<number>();
    for (const run of log.join("").split("P")) {
      const pause = /^(D+)S+D/.exec(run);
      if (pause) firstPause.add((pause[1] as string).length);
    }
    expect([...firstPause].sort()).toEqual([2, 4, 6, 8]);
  });

  it("a consumer that runs business logic before replying fails the acknowledgement law, shrunk", async () => {
    const consumer = consumerFixture(secret, { processesBeforeReply: true });
    const details = await expectViolation(acknowledgesBeforeProcessing(fromHandler(consumer.handler), spec(consumer)));
    expect(details.counterexample).toEqual([MIN_EVENT, expect.any(String)]);
    expect(details.violation.reason).toBe("the event was processed before the acknowledgement was sent");
  });

  it("a consumer that accepts any signature fails the bad-signature law, shrunk to the first fault", async () => {
    const consumer = consumerFixture(secret);
    const acceptsAll = fromHandler(async () => ({ status: 202, headers: {}, body: null }));
    const details = await expectViolation(badSignaturesAreRejected(acceptsAll, spec(consumer)));
    expect(details.counterexample).toEqual([MIN_EVENT, "bad-signature", expect.any(String)]);
    expect(details.violation.reason).toBe('a delivery with fault "bad-signature" answered 202, expected 400');
  });

  describe("a failing seed reproduces: event ids come from fast-check's values, not Math.random", () => {
    const breakages: [string, ConsumerBreakage][] = [
      ["duplicates", { processesDuplicates: true }],
      ["processing before the reply", { processesBeforeReply: true }],
    ];
    for (const [what, breakage] of breakages) {
      it(`the same seed sends the same event ids (${what})`, async () => {
        const run = async () => {
          const consumer = consumerFixture(secret, breakage);
          const target = fromHandler(consumer.handler);
          // biome-ignore lint/suspicious/noExplicitAny: two laws with different argument tuples.
          const law: fc.IAsyncPropertyWithHooks<any> = breakage.processesDuplicates
            ? duplicatesAreProcessedOnce(target, spec(consumer))
            : acknowledgesBeforeProcessing(target, spec(consumer));
          const details = await fc.check(law, { numRuns: 40, seed: SEED });
          return (details.errorInstance as LawViolation).transcript.match(/evt_[A-Za-z0-9_]+/g);
        };
        const first = await run();
        expect(first?.length).toBeGreaterThan(0);
        expect(await run()).toEqual(first);
      });
    }

    it("two laws on one consumer never share an event id", async () => {
      const consumer = consumerFixture(secret);
      const target = fromHandler(consumer.handler);
      for (let i = 0; i < 2; i++) {
        await fc.assert(acknowledgesBeforeProcessing(target, spec(consumer)), { numRuns: 20, seed: SEED });
      }
      const ids = consumer.processed();
      expect(new Set(ids).size).toBe(ids.length);
    });
  });
});
