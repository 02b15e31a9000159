import fc from "fast-check";
import { begin, countResources, type ResourceSpec, specHeaders } from "../resource-spec";
import type { Target } from "../target";
import type { Transcript } from "../transcript";

const key = fc.uuid().map((id) => `"${id}"`);

/**
 * A POST repeated with one Idempotency-Key creates one resource and replays the first response
 * (draft-ietf-httpapi-idempotency-key-header §2.6): the collection holds exactly one more resource after all
 * the repeats, counted with the spec's `count()` or by listing the collection (see {@link ResourceSpec.count}).
 */
export function idempotencyKeyReplays(target: Target, spec: ResourceSpec) {
  const law = "a POST repeated with one Idempotency-Key creates one resource";
  return fc.asyncProperty(spec.createBody, key, fc.integer({ min: 2, max: 4 }), async (body, idempotencyKey, times) => {
    const t: Transcript = begin(target);
    const headers = specHeaders(spec, { "idempotency-key": idempotencyKey });
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

/** The same Idempotency-Key with another body answers 422 (draft-ietf-httpapi-idempotency-key-header §2.7). */
export function idempotencyKeyMismatch(target: Target, spec: ResourceSpec) {
  const law = "the same Idempotency-Key with another body answers 422";
  return fc.asyncProperty(
    fc.tuple(spec.createBody, spec.createBody).filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b)),
    key,
    async ([body, other], idempotencyKey) => {
      const t: Transcript = begin(target);
      const headers = specHeaders(spec, { "idempotency-key": idempotencyKey });
      const first = await t.send({ method: "POST", path: spec.collection, headers, body });
      if (first.status !== 201) t.fail(law, `the first POST answered ${first.status}, expected 201`);
      const reused = await t.send({ method: "POST", path: spec.collection, headers, body: other });
      if (reused.status !== 422)
        t.fail(law, `the key reused with another body answered ${reused.status}, expected 422`);
    },
  );
}
