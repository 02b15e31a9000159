import type fc from "fast-check";
import { nextLink } from "./link-header";
import type { Target } from "./target";
import { type LawResponse, requestUrl, shownField, Transcript } from "./transcript";

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
  /**
   * How many resources the collection holds now (your store's count, say). The idempotency law compares it
   * before and after a keyed POST is repeated. Without it the law counts what `GET collection` lists: a JSON
   * array, or the array in a `data` or `items` member (an envelope such as Stripe's list object), following
   * `Link: <…>; rel="next"` pages (RFC 8288) to the last; a link back to a page already read fails the law.
   */
  count?: () => number | Promise<number>;
  /**
   * Which methods the resource answers: `list` is `GET collection` (without it the laws read and HEAD only
   * the item, and the idempotency law needs `count`). @default all of them
   */
  supports?: { list?: boolean; put?: boolean; patch?: boolean; delete?: boolean; idempotencyKey?: boolean };
}

/** What a spec's resource answers, every default filled in (PATCH only with a `patchBody`). */
export interface Supported {
  list: boolean;
  put: boolean;
  patch: boolean;
  delete: boolean;
  idempotencyKey: boolean;
}

/** What a spec's resource answers, every default filled in (PATCH only with a `patchBody`). */
export function supported(spec: ResourceSpec): Supported {
  const s = { list: true, put: true, patch: true, delete: true, idempotencyKey: true, ...spec.supports };
  return { ...s, patch: s.patch && spec.patchBody !== undefined };
}

// The names of the fields each spec's headers have given, for the transcripts to mask (a function may give others
// on each call; it is called only to send).
const headerNames = new WeakMap<ResourceSpec, Set<string>>();

function namesOf(spec: ResourceSpec): Set<string> {
  const names = headerNames.get(spec) ?? new Set<string>();
  headerNames.set(spec, names);
  return names;
}

/** Headers of a spec, evaluated. */
export function specHeaders(spec: ResourceSpec, extra: Record<string, string> = {}): Record<string, string> {
  const base = typeof spec.headers === "function" ? spec.headers() : (spec.headers ?? {});
  const names = namesOf(spec);
  for (const name of Object.keys(base)) names.add(name);
  return { ...base, ...extra };
}

/** Removes the spec's volatile fields (top level) so states can be compared. */
export function comparable(spec: ResourceSpec, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const field of spec.volatileFields ?? []) delete copy[field];
  return copy;
}

/**
 * Where a URL a server gave (a `Location`) is sent on the target: the path relative to the target when it lies
 * under the target's base URL (`/things/t1` for `http://host/api/things/t1` and the base `http://host/api`), else
 * the absolute URL on the target's origin. The laws send to the target only: a Location on another origin (a
 * server's public URL, say) keeps just its path, so a law's PUT or DELETE never reaches another host.
 * @example targetPath(fromBaseUrl("http://h/api"), new URL("http://h/api/things/t1")) // "/things/t1"
 */
export function targetPath(target: Target, url: URL): string {
  const base = new URL(target.baseUrl);
  const prefix = base.pathname.replace(/\/$/, "");
  const path = `${url.pathname}${url.search}`;
  if (url.pathname.startsWith(`${prefix}/`)) return path.slice(prefix.length);
  return `${base.origin}${path}`;
}

/**
 * Creates one resource and returns its item path (see {@link targetPath}); fails the law when creation does not
 * answer 201 + Location.
 */
export async function createItem(t: Transcript, spec: ResourceSpec, law: string, body: unknown): Promise<string> {
  const headers = specHeaders(spec);
  const created = await t.send({ method: "POST", path: spec.collection, headers, body });
  if (created.status !== 201) t.fail(law, `POST ${spec.collection} answered ${created.status}, expected 201`);
  if (spec.itemPath) return spec.itemPath(created);
  const location = created.headers.get("location");
  if (!location) t.fail(law, "POST answered 201 without a Location header");
  // RFC 9110 §10.2.2: Location is a URI reference, resolved against the target URI of the request (the POST's).
  const post = requestUrl(t.target, spec.collection);
  if (!URL.canParse(location, post)) {
    t.fail(
      law,
      `POST answered 201 with a Location that is no URI: ${shownField("location", location, Object.keys(headers))}`,
    );
  }
  return targetPath(t.target, new URL(location, post));
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

const MAX_PAGES = 1000;

/**
 * Where a collection's body lists its members: the body itself when it is a JSON array, else its `data` or `items`
 * array (an envelope such as Stripe's list object); `undefined` for any other body.
 */
export function listedMembers(body: unknown): { members: readonly unknown[]; envelope?: "data" | "items" } | undefined {
  if (Array.isArray(body)) return { members: body };
  const wrapped = body as { data?: unknown; items?: unknown } | null;
  if (Array.isArray(wrapped?.data)) return { members: wrapped.data, envelope: "data" };
  if (Array.isArray(wrapped?.items)) return { members: wrapped.items, envelope: "items" };
  return undefined;
}

function listedItems(response: LawResponse): readonly unknown[] | undefined {
  try {
    return listedMembers(response.json())?.members;
  } catch {
    return undefined;
  }
}

/**
 * How many resources the collection holds: the spec's `count`, else the items `GET collection` lists, page by
 * page. Fails the law when a page is not a JSON list, when `rel="next"` leads back to a page already read (the
 * count would never end), or past 1000 pages.
 */
export async function countResources(t: Transcript, spec: ResourceSpec, law: string): Promise<number> {
  if (spec.count) return spec.count();
  if (!supported(spec).list)
    t.fail(law, "the collection has no list (supports.list is false): give the spec a count() hook");
  return countListed(t, spec, law, false) as Promise<number>;
}

/**
 * As {@link countResources}, for a law whose rule does not need a count: `undefined` when the spec has no `count()`
 * and the collection no list, or when its first page is no JSON list (an envelope of another shape).
 */
export async function countIfCountable(t: Transcript, spec: ResourceSpec, law: string): Promise<number | undefined> {
  if (spec.count) return spec.count();
  return supported(spec).list ? countListed(t, spec, law, true) : undefined;
}

async function countListed(
  t: Transcript,
  spec: ResourceSpec,
  law: string,
  lenient: boolean,
): Promise<number | undefined> {
  // As Transcript.send does: a path is appended to the base URL, which may have a path of its own.
  let url: string | undefined = new URL(requestUrl(t.target, spec.collection)).toString();
  const read = new Set<string>();
  let total = 0;
  while (url !== undefined) {
    if (read.has(url)) t.fail(law, `cannot count the collection: rel="next" leads back to ${url}, already read`);
    if (read.size === MAX_PAGES) t.fail(law, `cannot count the collection: more than ${MAX_PAGES} pages`);
    read.add(url);
    const response = await t.send({ method: "GET", path: url, headers: specHeaders(spec) });
    const items = response.status === 200 ? listedItems(response) : undefined;
    if (items === undefined && lenient && read.size === 1) return undefined;
    if (items === undefined) {
      t.fail(
        law,
        `cannot count the collection: GET ${url} answered ${response.status} without a JSON list; give the spec a count() hook`,
      );
    }
    total += items.length;
    const next = nextLink(response.headers.get("link"));
    // RFC 8288 §3.1: a relative target is resolved against the URL of the page it came with (RFC 3986 §5).
    url = next === undefined ? undefined : new URL(next, url).toString();
  }
  return total;
}

/**
 * Starts a transcript for one property run; it prints the fields the spec's headers name by fingerprint only, as
 * it does credentials: they carry API keys (`X-Api-Key`) as often as `Authorization` does.
 */
export function begin(target: Target, spec: ResourceSpec): Transcript {
  return new Transcript(target, namesOf(spec));
}
