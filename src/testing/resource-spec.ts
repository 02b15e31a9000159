import type fc from "fast-check";
import type { Target } from "./target";
import { type LawResponse, Transcript } from "./transcript";

/** The small description of one resource that the HTTP laws need. */
export interface ResourceSpec {
  /** The collection path, e.g. `/users/u_1/orders`. */
  collection: string;
  /** Valid bodies for `POST collection`. */
  createBody: fc.Arbitrary<unknown>;
  /** Valid bodies for `PUT item`; defaults to {@link createBody}. */
  replaceBody?: fc.Arbitrary<unknown>;
  /** Valid JSON Merge Patch documents for `PATCH item`; the PATCH law is skipped without one. */
  patchBody?: fc.Arbitrary<Record<string, unknown>>;
  /** Headers sent with every request (authentication, say). */
  headers?: Record<string, string> | (() => Record<string, string>);
  /** The item path of a created resource; defaults to the `Location` of the 201. */
  itemPath?: (created: LawResponse) => string;
  /** Fields left out when two states are compared (server clocks such as `updated_at`). */
  volatileFields?: readonly string[];
  /** Which methods the item answers. @default all of them */
  supports?: { put?: boolean; patch?: boolean; delete?: boolean; idempotencyKey?: boolean };
}

/** Headers of a spec, evaluated. */
export function specHeaders(spec: ResourceSpec, extra: Record<string, string> = {}): Record<string, string> {
  const base = typeof spec.headers === "function" ? spec.headers() : (spec.headers ?? {});
  return { ...base, ...extra };
}

/** Removes the spec's volatile fields (top level) so states can be compared. */
export function comparable(spec: ResourceSpec, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const field of spec.volatileFields ?? []) delete copy[field];
  return copy;
}

/** Creates one resource and returns its item path; fails the law when creation does not answer 201 + Location. */
export async function createItem(t: Transcript, spec: ResourceSpec, law: string, body: unknown): Promise<string> {
  const created = await t.send({ method: "POST", path: spec.collection, headers: specHeaders(spec), body });
  if (created.status !== 201) t.fail(law, `POST ${spec.collection} answered ${created.status}, expected 201`);
  const path = spec.itemPath ? spec.itemPath(created) : created.headers.get("location");
  if (!path) t.fail(law, "POST answered 201 without a Location header");
  return path.startsWith("http") ? new URL(path).pathname : path;
}

/** The item's state as GET shows it (status and comparable JSON body). */
export async function readState(
  t: Transcript,
  spec: ResourceSpec,
  path: string,
): Promise<{ status: number; body: unknown }> {
  const response = await t.send({ method: "GET", path, headers: specHeaders(spec) });
  let body: unknown = response.text;
  try {
    body = comparable(spec, response.json());
  } catch {
    // non-JSON bodies compare as text
  }
  return { status: response.status, body };
}

/** Starts a transcript for one property run. */
export function begin(target: Target): Transcript {
  return new Transcript(target);
}
