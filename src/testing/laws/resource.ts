import fc from "fast-check";
import {
  begin,
  countIfCountable,
  countResources,
  createItem,
  listedMembers,
  type ResourceSpec,
  readState,
  specHeaders,
  supported,
} from "../resource-spec";
import type { Target } from "../target";
import { shownField, type Transcript } from "../transcript";
import { same, sameMembers } from "./equal";
import { LAW_NAMES } from "./names";

const MERGE_PATCH = "application/merge-patch+json";

// Where a safe request goes: the item, or the collection when it answers GET.
function onItemOrCollection(spec: ResourceSpec): fc.Arbitrary<boolean> {
  return supported(spec).list ? fc.boolean() : fc.constant(true);
}

type State = { status: number; body: unknown };

// The collection's state is the resources it holds, not the order it lists them in (RFC 9110 §9.2.1 speaks of
// state on the server; a list order left unspecified may differ from one GET to the next). The members compare as a
// multiset, each with every field; an envelope's other members (`has_more`, say) compare as they are.
function sameCollection(before: State | undefined, after: State | undefined): boolean {
  if (before === undefined || after === undefined || before.status !== after.status) return same(before, after);
  const left = listedMembers(before.body);
  const right = listedMembers(after.body);
  if (left === undefined || right === undefined || left.envelope !== right.envelope) return same(before, after);
  if (!sameMembers(left.members, right.members)) return false;
  if (left.envelope === undefined) return true;
  const { [left.envelope]: _l, ...restBefore } = before.body as Record<string, unknown>;
  const { [left.envelope]: _r, ...restAfter } = after.body as Record<string, unknown>;
  return same(restBefore, restAfter);
}

/**
 * GET and HEAD, any number of times on the item and the collection (when it answers GET), change nothing
 * (RFC 9110 §9.2.1): the item's state, and the collection's members, compared in any order (a list whose order
 * is unspecified may differ between GETs; what it holds may not).
 */
export function safeMethodsChangeNothing(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.safeMethodsChangeNothing;
  const list = supported(spec).list;
  const step = fc.record({ method: fc.constantFrom("GET", "HEAD"), onItem: onItemOrCollection(spec) });
  return fc.asyncProperty(spec.createBody, fc.array(step, { minLength: 1, maxLength: 6 }), async (body, steps) => {
    const t: Transcript = begin(target, spec);
    const item = await createItem(t, spec, law, body);
    const before = await readState(t, spec, item);
    const listBefore = list ? await readState(t, spec, spec.collection) : undefined;
    for (const s of steps)
      await t.send({ method: s.method, path: s.onItem ? item : spec.collection, headers: specHeaders(spec) });
    const after = await readState(t, spec, item);
    const listAfter = list ? await readState(t, spec, spec.collection) : undefined;
    if (!same(before, after)) t.fail(law, "the item's state changed after safe requests");
    if (!sameCollection(listBefore, listAfter)) t.fail(law, "the collection changed after safe requests");
  });
}

const IGNORED_IN_HEAD = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

// RFC 9110 §8.6: a HEAD response MAY leave out Content-Length (and MUST NOT send one GET would not); §9.3.2: a field
// whose value is determined only while generating the content may be omitted. Node's `res.end()` does so.
const OMISSIBLE_IN_HEAD = new Set(["content-length"]);

// The header fields (other than the per-message ones) whose values differ between GET's answer and HEAD's.
function differingFields(get: Headers, head: Headers): string[] {
  const names = new Set<string>();
  for (const [name] of get) names.add(name);
  for (const [name] of head) names.add(name);
  return [...names].filter((name) => {
    if (IGNORED_IN_HEAD.has(name)) return false;
    if (OMISSIBLE_IN_HEAD.has(name) && !head.has(name)) return false;
    return get.get(name) !== head.get(name);
  });
}

/**
 * HEAD answers with the status and headers GET would send, and no body (RFC 9110 §9.3.2); it may leave out
 * Content-Length, not send another (§8.6). What GET would send may
 * change with time (a Last-Modified sent once its second is over, a Cache-Control age): a field HEAD sends otherwise
 * than the GET before it must match a GET sent after it.
 */
export function headMatchesGet(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.headMatchesGet;
  return fc.asyncProperty(spec.createBody, onItemOrCollection(spec), async (body, onItem) => {
    const t: Transcript = begin(target, spec);
    const item = await createItem(t, spec, law, body);
    const path = onItem ? item : spec.collection;
    const headers = specHeaders(spec);
    const get = await t.send({ method: "GET", path, headers });
    const head = await t.send({ method: "HEAD", path, headers: specHeaders(spec) });
    if (head.status !== get.status) t.fail(law, `HEAD answered ${head.status} where GET answered ${get.status}`);
    if (head.text.length > 0) t.fail(law, "HEAD answered with a body");
    const differing = differingFields(get.headers, head.headers);
    if (differing.length === 0) return;
    const later = await t.send({ method: "GET", path, headers: specHeaders(spec) });
    for (const name of differing) {
      if (later.headers.get(name) !== head.headers.get(name)) {
        // Printed as the transcript prints them: a rotated session cookie or a token is no line for a CI log.
        const shown = (value: string | null) => shownField(name, value, Object.keys(headers));
        t.fail(
          law,
          `header ${name}: GET sent ${shown(get.headers.get(name))}, HEAD sent ${shown(head.headers.get(name))}`,
        );
      }
    }
  });
}

/**
 * PUT twice leaves the state PUT once left (RFC 9110 §9.2.2): the item's, and the number of resources in the
 * collection (counted as {@link ResourceSpec.count} says, when the spec has a `count()` or the collection a list).
 */
export function putIsIdempotent(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.putIsIdempotent;
  return fc.asyncProperty(spec.createBody, spec.replaceBody ?? spec.createBody, async (body, replacement) => {
    const t: Transcript = begin(target, spec);
    const item = await createItem(t, spec, law, body);
    const first = await t.send({ method: "PUT", path: item, headers: specHeaders(spec), body: replacement });
    // RFC 9110 §15.5.10: 409 refuses this state change (a transition the resource forbids); a refused change
    // says nothing about repeating one, so the run is discarded. A resource refusing every PUT still fails:
    // fast-check reports too many discarded runs.
    fc.pre(first.status !== 409);
    if (first.status >= 300) t.fail(law, `the first PUT answered ${first.status}`);
    const once = await readState(t, spec, item);
    // §9.2.2 speaks of the effect on the server: a PUT creating another resource each time leaves the item alone.
    const countOnce = await countIfCountable(t, spec, law);
    const second = await t.send({ method: "PUT", path: item, headers: specHeaders(spec), body: replacement });
    if (second.status >= 300) t.fail(law, `the repeated PUT answered ${second.status}`);
    const twice = await readState(t, spec, item);
    if (!same(once, twice)) t.fail(law, "the state after two PUTs differs from the state after one");
    if (countOnce !== undefined) {
      const countTwice = await countResources(t, spec, law);
      if (countTwice !== countOnce) {
        t.fail(law, `the collection held ${countOnce} resources after one PUT and ${countTwice} after two`);
      }
    }
  });
}

// RFC 9110 §9.3.5: a DELETE applied answers 200 (with a status document), 202 (accepted) or 204.
const DELETED = [200, 202, 204];

/**
 * DELETE twice leaves the resource gone (RFC 9110 §9.3.5, §9.2.2): the second answers as a first may (200, 202 or
 * 204: the same effect) or 404/410 (nothing left to delete).
 */
export function deleteIsIdempotent(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.deleteIsIdempotent;
  return fc.asyncProperty(spec.createBody, async (body) => {
    const t: Transcript = begin(target, spec);
    const item = await createItem(t, spec, law, body);
    const first = await t.send({ method: "DELETE", path: item, headers: specHeaders(spec) });
    if (!DELETED.includes(first.status)) t.fail(law, `the first DELETE answered ${first.status}`);
    const second = await t.send({ method: "DELETE", path: item, headers: specHeaders(spec) });
    if (!DELETED.includes(second.status) && second.status !== 404 && second.status !== 410) {
      t.fail(law, `the repeated DELETE answered ${second.status}, expected 200, 202, 204, 404 or 410`);
    }
    const after = await readState(t, spec, item);
    if (after.status !== 404 && after.status !== 410) t.fail(law, `GET after DELETE answered ${after.status}`);
  });
}

/** POST twice with the same body creates two resources (RFC 9110 §9.3.3: POST is not idempotent). */
export function postCreatesEachTime(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.postCreatesEachTime;
  return fc.asyncProperty(spec.createBody, async (body) => {
    const t: Transcript = begin(target, spec);
    const a = await createItem(t, spec, law, body);
    const b = await createItem(t, spec, law, body);
    if (a === b) t.fail(law, `both POSTs answered the same Location ${a}`);
    for (const path of [a, b]) {
      const state = await readState(t, spec, path);
      if (state.status !== 200) t.fail(law, `GET ${path} answered ${state.status}`);
    }
  });
}

/**
 * A JSON Merge Patch applied twice leaves the state it left once (RFC 7396 sets absolute values): the item's, and
 * the number of resources in the collection, counted as {@link putIsIdempotent} counts it. Both PATCHes
 * must succeed (2xx); a first PATCH answered 409 or 422 (refused on this state, RFC 5789 §2.2) discards the run,
 * as a 409 does in {@link putIsIdempotent}.
 */
export function mergePatchIsIdempotent(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.mergePatchIsIdempotent;
  const patches = spec.patchBody ?? fc.constant({});
  return fc.asyncProperty(spec.createBody, patches, async (body, patch) => {
    const t: Transcript = begin(target, spec);
    const item = await createItem(t, spec, law, body);
    const headers = specHeaders(spec, { "content-type": MERGE_PATCH });
    const first = await t.send({ method: "PATCH", path: item, headers, body: patch });
    // RFC 5789 §2.2: 409 (a state the patch conflicts with) and 422 (a result that would be invalid, say a required
    // member removed) refuse this patch on this state; a refused change says nothing about repeating one, so the
    // run is discarded, as a 409 to a PUT is. A resource refusing every PATCH still fails: too many discarded runs.
    fc.pre(first.status !== 409 && first.status !== 422);
    // Any other failure changed nothing to repeat: the law would pass without checking its rule.
    if (first.status < 200 || first.status >= 300) t.fail(law, `the first PATCH answered ${first.status}`);
    const once = await readState(t, spec, item);
    // As in putIsIdempotent: a PATCH creating another resource each time leaves the item alone (RFC 9110 §9.2.2).
    const countOnce = await countIfCountable(t, spec, law);
    const second = await t.send({ method: "PATCH", path: item, headers, body: patch });
    const twice = await readState(t, spec, item);
    if (second.status < 200 || second.status >= 300) {
      t.fail(law, `the repeated PATCH answered ${second.status} where the first succeeded`);
    }
    if (!same(once, twice)) t.fail(law, "the state after two PATCHes differs from the state after one");
    if (countOnce !== undefined) {
      const countTwice = await countResources(t, spec, law);
      if (countTwice !== countOnce) {
        t.fail(law, `the collection held ${countOnce} resources after one PATCH and ${countTwice} after two`);
      }
    }
  });
}
