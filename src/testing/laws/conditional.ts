import fc from "fast-check";
import { begin, createItem, type ResourceSpec, readState, specHeaders } from "../resource-spec";
import type { Target } from "../target";
import type { Transcript } from "../transcript";
import { same } from "./equal";

/** A GET carrying the ETag it just received answers 304 with no body (RFC 9110 §13.1.2, §15.4.5). */
export function conditionalGetAnswers304(target: Target, spec: ResourceSpec) {
  const law = "GET with its own ETag answers 304";
  return fc.asyncProperty(spec.createBody, async (body) => {
    const t: Transcript = begin(target);
    const item = await createItem(t, spec, law, body);
    const first = await t.send({ method: "GET", path: item, headers: specHeaders(spec) });
    const etag = first.headers.get("etag");
    if (!etag) t.fail(law, "GET answered without an ETag");
    const again = await t.send({ method: "GET", path: item, headers: specHeaders(spec, { "if-none-match": etag }) });
    if (again.status !== 304) t.fail(law, `GET with If-None-Match: ${etag} answered ${again.status}, expected 304`);
    if (again.text.length > 0) t.fail(law, "the 304 carried a body");
    if (again.headers.get("etag") !== etag) t.fail(law, "the 304 did not repeat the ETag (§15.4.5)");
  });
}

/** PUT, PATCH or DELETE with a stale If-Match answers 412 and changes nothing (RFC 9110 §13.1.1). */
export function staleIfMatchIsRefused(target: Target, spec: ResourceSpec) {
  const law = "a stale If-Match answers 412 and changes nothing";
  const methods = ["PUT", ...(spec.patchBody ? ["PATCH"] : []), "DELETE"] as const;
  const replacement = spec.replaceBody ?? spec.createBody;
  return fc.asyncProperty(
    spec.createBody,
    replacement,
    replacement,
    fc.constantFrom(...methods),
    spec.patchBody ?? fc.constant({}),
    async (body, update, attempt, method, patch) => {
      const t: Transcript = begin(target);
      const item = await createItem(t, spec, law, body);
      const stale = (await t.send({ method: "GET", path: item, headers: specHeaders(spec) })).headers.get("etag");
      if (!stale) t.fail(law, "GET answered without an ETag");
      await t.send({ method: "PUT", path: item, headers: specHeaders(spec), body: update });
      const current = await t.send({ method: "GET", path: item, headers: specHeaders(spec) });
      // When the update left the representation as it was, the old tag is not stale: nothing to check.
      if (current.headers.get("etag") === stale) return;
      const before = await readState(t, spec, item);
      const headers = specHeaders(spec, {
        "if-match": stale,
        ...(method === "PATCH" ? { "content-type": "application/merge-patch+json" } : {}),
      });
      const sent = method === "PUT" ? attempt : method === "PATCH" ? patch : undefined;
      const refused = await t.send({ method, path: item, headers, body: sent });
      if (refused.status !== 412)
        t.fail(law, `${method} with a stale If-Match answered ${refused.status}, expected 412`);
      const after = await readState(t, spec, item);
      if (!same(before, after)) t.fail(law, `the refused ${method} changed the resource`);
    },
  );
}
