import fc from "fast-check";
import { malformedJson } from "../arbitraries/json-text";
import { begin, type ResourceSpec, specHeaders } from "../resource-spec";
import type { Target } from "../target";
import { type LawRequest, shownField, type Transcript } from "../transcript";
import { LAW_NAMES } from "./names";

// Methods the resource does not answer. Only tokens node:http's parser knows: it refuses others (say CONNECTX) with
// a bare 400 before any handler runs.
const UNANSWERED_METHODS: readonly string[] = ["PROPFIND", "MKCOL", "PURGE"];

/**
 * Requests that a correct server must refuse with a 4xx (501 for a method it does not implement), without the
 * spec's headers (they are evaluated per request, when it is sent: a `headers` function may mint a short-lived
 * token).
 */
function badRequests(spec: ResourceSpec): fc.Arbitrary<LawRequest> {
  return fc.oneof(
    malformedJson().map((body) => ({
      method: "POST",
      path: spec.collection,
      headers: { "content-type": "application/json" },
      body,
    })),
    fc.constant({
      method: "POST",
      path: spec.collection,
      headers: { "content-type": "text/plain" },
      body: "hello",
    }),
    fc.constant({
      method: "POST",
      path: spec.collection,
      headers: { "content-type": "application/json" },
      body: "[]",
    }),
    fc
      .stringMatching(/^[a-z0-9]{1,12}$/)
      .map((segment) => ({ method: "GET", path: `${spec.collection}/${segment}-does-not-exist`, headers: {} })),
    fc.constant({ method: "GET", path: `${spec.collection}/%E0%A4%A`, headers: {} }),
    // RFC 9110 §15.5.6, §15.6.2: 405 for a method this resource does not allow, 501 for one the server lacks.
    fc.constantFrom(...UNANSWERED_METHODS).map((method) => ({ method, path: spec.collection, headers: {} })),
  );
}

/**
 * A malformed or impossible request is refused with a 4xx (RFC 9110 §15.5: the client's error; a 5xx says the
 * server failed, §15.6), or 501 for a method the server does not implement (§15.6.2); the answer is an RFC 9457
 * problem document whose `status` is the status it was sent with.
 */
export function errorsAreProblems(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.errorsAreProblems;
  return fc.asyncProperty(badRequests(spec), async (request) => {
    const t: Transcript = begin(target, spec);
    const own = specHeaders(spec);
    const response = await t.send({ ...request, headers: { ...own, ...request.headers } });
    const refused = `${request.method} ${request.path}, a request to refuse`;
    if (response.status < 400) t.fail(law, `${refused}, answered ${response.status}`);
    const notImplemented = response.status === 501 && UNANSWERED_METHODS.includes(request.method);
    if (response.status >= 500 && !notImplemented) {
      t.fail(
        law,
        `${refused}, answered ${response.status}, expected 4xx: a 5xx to a client's mistake says the server failed (RFC 9110 §15.5, §15.6)`,
      );
    }
    const type = response.headers.get("content-type") ?? "";
    if (!type.toLowerCase().startsWith("application/problem+json")) {
      const shown = shownField("content-type", type, Object.keys(own));
      t.fail(law, `the ${response.status} answer has Content-Type "${shown}", not application/problem+json`);
    }
    let doc: unknown;
    try {
      doc = response.json();
    } catch {
      t.fail(law, "the problem document is not JSON");
    }
    const status = (doc as { status?: unknown } | null)?.status;
    if (status !== undefined && status !== response.status) {
      t.fail(law, `the problem says status ${String(status)} but was sent with ${response.status} (RFC 9457 §3.1.4)`);
    }
    if (
      typeof (doc as { title?: unknown } | null)?.title !== "string" &&
      typeof (doc as { type?: unknown })?.type !== "string"
    ) {
      t.fail(law, "the problem document has neither type nor title");
    }
  });
}
