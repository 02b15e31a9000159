import fc from "fast-check";
import { BoundedFilter } from "../arbitraries/bounded-filter";
import { begin, countResources, type ResourceSpec, specHeaders } from "../resource-spec";
import type { Target } from "../target";
import type { Transcript } from "../transcript";
import { LAW_NAMES } from "./names";

const key = fc.uuid().map((id) => `"${id}"`);

/**
 * The Idempotency-Key of each run of one law. fast-check may give one uuid twice (its bias toward small values, and
 * shrinking), and a server keeps a key's first answer for hours, across processes: a key met again would replay an
 * earlier run's resource (or answer 422 to another body). So each key also carries this law's nonce and the run's
 * number, inside the quotes of the generated key (an sf-string); the uuid stays the part fast-check shrinks.
 */
function freshKeys(): (key: string) => string {
  const nonce = crypto.randomUUID();
  let run = 0;
  return (key) => `${key.slice(0, -1)}.${nonce}.${++run}"`;
}

// Two values of an arbitrary with two values are equal 100 times in a row with a chance of 2^-100.
const MAX_SAME_BODIES = 100;

/**
 * A POST repeated with one Idempotency-Key creates one resource and replays the first response
 * (draft-ietf-httpapi-idempotency-key-header §2.6): the collection holds exactly one more resource after all
 * the repeats, counted with the spec's `count()` or by listing the collection (see {@link ResourceSpec.count}).
 */
export function idempotencyKeyReplays(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.idempotencyKeyReplays;
  const fresh = freshKeys();
  return fc.asyncProperty(spec.createBody, key, fc.integer({ min: 2, max: 4 }), async (body, generated, times) => {
    const t: Transcript = begin(target, spec);
    const headers = specHeaders(spec, { "idempotency-key": fresh(generated) });
    const before = await countResources(t, spec, law);
    const first = await t.send({ method: "POST", path: spec.collection, headers, body });
    if (first.status !== 201) t.fail(law, `the first POST answered ${first.status}, expected 201`);
    for (let i = 1; i < times; i++) {
      const again = await t.send({ method: "POST", path: spec.collection, headers, body });
      if (again.status !== first.status) t.fail(law, `repeat ${i} answered ${again.status}, the first ${first.status}`);
      if (again.text !== first.text) t.fail(law, `repeat ${i} did not replay the first body byte for byte`);
      if (again.headers.get("location") !== first.headers.get("location")) {
        t.fail(law, `repeat ${i} answered another Location: a second resource was created`);
      }
    }
    const after = await countResources(t, spec, law);
    if (after - before !== 1) {
      t.fail(
        law,
        `${times} POSTs with one key changed the collection from ${before} to ${after} resources, expected +1`,
      );
    }
  });
}

/**
 * The same Idempotency-Key with another body answers 422 (draft-ietf-httpapi-idempotency-key-header §2.7). The
 * spec's `createBody` must give more than one value: with one (`fc.constant`), generation throws a TypeError.
 */
export function idempotencyKeyMismatch(target: Target, spec: ResourceSpec) {
  const law = LAW_NAMES.idempotencyKeyMismatch;
  // Two bodies that differ: a createBody with one value has no such pair, and `.filter` would look forever.
  const differ = (pair: unknown) => {
    const [a, b] = pair as [unknown, unknown];
    return JSON.stringify(a) !== JSON.stringify(b);
  };
  const bodies = new BoundedFilter(fc.tuple(spec.createBody, spec.createBody), differ, MAX_SAME_BODIES, (last) => {
    const [body] = last as [unknown, unknown];
    return new TypeError(
      `idempotencyKeyMismatch: spec.createBody gave the same body ${MAX_SAME_BODIES} times in a row (${JSON.stringify(body)}): it gives only one value, so no second body differs from the first. Give createBody more than one value, or leave this law out (supports.idempotencyKey: false leaves out both Idempotency-Key laws).`,
    );
  });
  const fresh = freshKeys();
  return fc.asyncProperty(bodies, key, async ([body, other], generated) => {
    const t: Transcript = begin(target, spec);
    const headers = specHeaders(spec, { "idempotency-key": fresh(generated) });
    const first = await t.send({ method: "POST", path: spec.collection, headers, body });
    if (first.status !== 201) t.fail(law, `the first POST answered ${first.status}, expected 201`);
    const reused = await t.send({ method: "POST", path: spec.collection, headers, body: other });
    if (reused.status !== 422) t.fail(law, `the key reused with another body answered ${reused.status}, expected 422`);
  });
}
