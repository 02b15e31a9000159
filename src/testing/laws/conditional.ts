import fc from "fast-check";
import { begin, createItem, type ResourceSpec, readState, specHeaders, supported } from "../resource-spec";
import type { Target } from "../target";
import { shownField, type Transcript } from "../transcript";
import { same } from "./equal";
import { LAW_NAMES } from "./names";

/**
 * A GET carrying the ETag it just received answers 304 with no body (RFC 9110 §13.1.2, §15.4.5); one carrying a tag
 * the server never sent answers as a plain GET does.
 */
export function conditionalGetAnswers304(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.conditionalGetAnswers304;
  return fc.asyncProperty(spec.createBody, async (body) => {
    const t: Transcript = begin(target, spec);
    const item = await createItem(t, spec, law, body);
    const headers = specHeaders(spec);
    const first = await t.send({ method: "GET", path: item, headers });
    const etag = first.headers.get("etag");
    if (!etag) t.fail(law, "GET answered without an ETag");
    const again = await t.send({ method: "GET", path: item, headers: specHeaders(spec, { "if-none-match": etag }) });
    if (again.status !== 304) {
      const shown = shownField("if-none-match", etag, Object.keys(headers));
      t.fail(law, `GET with If-None-Match: ${shown} answered ${again.status}, expected 304`);
    }
    if (again.text.length > 0) t.fail(law, "the 304 carried a body");
    if (again.headers.get("etag") !== etag) t.fail(law, "the 304 did not repeat the ETag (§15.4.5)");
    // §13.1.2: a tag that matches none of the current ones is a true condition: GET proceeds. A server answering
    // 304 to any If-None-Match would keep its clients on a copy they would never see change.
    const other = staleVariant(etag);
    const fresh = await t.send({ method: "GET", path: item, headers: specHeaders(spec, { "if-none-match": other }) });
    if (fresh.status !== first.status) {
      const shown = shownField("if-none-match", other, Object.keys(headers));
      t.fail(
        law,
        `GET with If-None-Match: ${shown}, a tag it never sent, answered ${fresh.status}, expected ${first.status}`,
      );
    }
  });
}

/**
 * PUT, PATCH or DELETE with a stale If-Match answers 412 and changes nothing (RFC 9110 §13.1.1); with the current
 * strong tag it is not refused with 412.
 */
export function staleIfMatchIsRefused(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.staleIfMatchIsRefused;
  const supports = supported(spec);
  const methods = [
    ...(supports.put ? ["PUT"] : []),
    ...(supports.patch ? ["PATCH"] : []),
    ...(supports.delete ? ["DELETE"] : []),
  ] as const;
  if (methods.length === 0) {
    throw new TypeError(
      "staleIfMatchIsRefused: the resource supports none of PUT, PATCH (with a patchBody) and DELETE",
    );
  }
  const replacement = spec.replaceBody ?? spec.createBody;
  const patches = spec.patchBody ?? fc.constant({});
  return fc.asyncProperty(
    spec.createBody,
    replacement,
    patches,
    fc.constantFrom(...methods),
    replacement,
    patches,
    async (body, update, updatePatch, method, attempt, attemptPatch) => {
      const t: Transcript = begin(target, spec);
      const item = await createItem(t, spec, law, body);
      const first = await t.send({ method: "GET", path: item, headers: specHeaders(spec) });
      const stale = first.headers.get("etag");
      if (!stale) t.fail(law, "GET answered without an ETag");
      if (supports.put || supports.patch) {
        // Change the resource with a method it answers, so the tag just read becomes stale.
        const changed = supports.put
          ? await t.send({ method: "PUT", path: item, headers: specHeaders(spec), body: update })
          : await t.send({ method: "PATCH", path: item, headers: specHeaders(spec, PATCH_TYPE), body: updatePatch });
        // RFC 9110 §15.5.10: a 409 refuses this change (a forbidden transition): discard the run, as in putIsIdempotent.
        fc.pre(changed.status !== 409);
        if (changed.status < 200 || changed.status > 299) {
          t.fail(law, `the ${supports.put ? "PUT" : "PATCH"} that makes the ETag stale answered ${changed.status}`);
        }
        const current = await t.send({ method: "GET", path: item, headers: specHeaders(spec) });
        // An update that left the representation as it was leaves the tag current: skip this run (fc.pre),
        // fast-check generates another (numRuns counts only the runs that did check the rule).
        fc.pre(current.headers.get("etag") !== stale);
      }
      // A DELETE-only resource cannot be changed: a tag it never sent stands for the stale one.
      const sent = supports.put || supports.patch ? stale : staleVariant(stale);
      const before = await readState(t, spec, item);
      const headers = specHeaders(spec, { "if-match": sent, ...(method === "PATCH" ? PATCH_TYPE : {}) });
      const payload = method === "PUT" ? attempt : method === "PATCH" ? attemptPatch : undefined;
      const refused = await t.send({ method, path: item, headers, body: payload });
      if (refused.status !== 412) {
        t.fail(law, `${method} with a stale If-Match answered ${refused.status}, expected 412`);
      }
      const after = await readState(t, spec, item);
      if (!same(before, after)) t.fail(law, `the refused ${method} changed the resource`);
      // §13.1.1: the current tag in If-Match is a true condition, the request proceeds: a server refusing every
      // If-Match would hold the rule above while no client could update it. The comparison is strong (§8.8.3.2),
      // so a weak tag matches nothing and is not tried.
      const current = (await t.send({ method: "GET", path: item, headers: specHeaders(spec) })).headers.get("etag");
      if (current !== null && !current.startsWith("W/")) {
        const matching = specHeaders(spec, { "if-match": current, ...(method === "PATCH" ? PATCH_TYPE : {}) });
        const allowed = await t.send({ method, path: item, headers: matching, body: payload });
        if (allowed.status === 412) t.fail(law, `${method} with the current ETag in If-Match answered 412`);
      }
    },
  );
}

const PATCH_TYPE = { "content-type": "application/merge-patch+json" };

// RFC 9110 §8.8.3: `"opaque"` or `W/"opaque"`; another strong tag the server never sent for this state.
function staleVariant(etag: string): string {
  const opaque = etag.replace(/^W\//, "").replace(/^"|"$/g, "");
  return `"${opaque}-stale"`;
}
