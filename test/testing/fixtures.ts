/**
 * Fixture servers for the testing kit: one correct resource server and consumer, and the
 * deliberately broken variants each law must catch. Plain handlers over the HTTP model only.
 */
import { createHash } from "node:crypto";
import { safeJsonBody } from "../../src/http/body";
import { empty, type Handler, type HttpRequest, type HttpResponse, json } from "../../src/http/message";
import { HttpProblem } from "../../src/http/problem";
import { mergePatch } from "../../src/routing/index";
import { verify } from "../../src/webhooks/signing/index";

export interface Breakage {
  /** GET counts visits into the state. */
  getCountsVisits?: boolean;
  /** PUT appends to a history list instead of replacing. */
  putAppends?: boolean;
  /** The second DELETE answers 500. */
  deleteErrorsTwice?: boolean;
  /** Weak ETags, and If-None-Match is ignored (200 to its own tag). */
  ignoresOwnEtag?: boolean;
  /** Idempotency-Key is ignored. */
  ignoresIdempotencyKey?: boolean;
  /** A keyed POST repeated replays the first response, but runs the handler again (a second thing). */
  replaysButRunsAgain?: boolean;
  /** The same key with another body replays the first response instead of 422. */
  acceptsKeyReuse?: boolean;
  /** HEAD answers a header GET does not send. */
  headAddsHeader?: boolean;
  /** POST of a thing equal to an existing one answers that one (same Location) instead of creating. */
  postReturnsExisting?: boolean;
  /** A merge-patch `name` is appended to the current name instead of replacing it. */
  patchAppends?: boolean;
  /** PUT creates another thing from the body each time and leaves the item as it was. */
  putCreates?: boolean;
  /** PUT answers 200 with the current state and stores nothing (the ETag never changes). */
  putChangesNothing?: boolean;
  /** If-Match is not checked. */
  ignoresIfMatch?: boolean;
  /** Errors are plain text, not problem documents. */
  plainErrors?: boolean;
  /** Not a breakage: `{}` creates a thing with defaults (so `{}` is a valid body). */
  lenientCreate?: boolean;
  /** A merge-patch PATCH applies the patch and also creates another thing each time. */
  patchCreates?: boolean;
  /** GET of the collection creates another thing each time. */
  listGetCreates?: boolean;
  /** Not a breakage: each GET of the collection lists the same things in another order (rotated by one). */
  listRotates?: boolean;
}

interface Thing {
  id: string;
  name: string;
  n: number;
  history?: unknown[];
  visits?: number;
}

function etagOf(value: unknown): string {
  return `"${createHash("sha1").update(JSON.stringify(value)).digest("base64url")}"`;
}

function notFound(): HttpResponse {
  return new HttpProblem({ status: 404, code: "not_found", detail: "No such thing." }).toResponse();
}

function validThing(value: unknown, lenient = false): { name: string; n: number } {
  const given = value as { name?: unknown; n?: unknown } | null;
  const object = typeof given === "object" && given !== null && !Array.isArray(given);
  const v = lenient && object ? { name: "", n: 0, ...given } : given;
  if (typeof v !== "object" || v === null || Array.isArray(v) || typeof v.name !== "string" || !Number.isInteger(v.n)) {
    throw new HttpProblem({ status: 422, code: "validation_failed", detail: "Send {name: string, n: integer}." });
  }
  return { name: v.name, n: v.n as number };
}

function plainText(response: HttpResponse): HttpResponse {
  if (response.status < 400) return response;
  return { status: response.status, headers: { "content-type": "text/plain" }, body: "something went wrong" };
}

/** An in-memory `/things` resource following every law unless told to break one. */
export function thingServer(breakage: Breakage = {}): Handler {
  const serve = thingHandler(breakage);
  if (!breakage.plainErrors) return serve;
  return async (request) => plainText(await serve(request));
}

function thingHandler(breakage: Breakage): Handler {
  const things = new Map<string, Thing>();
  const deleted = new Set<string>();
  const keys = new Map<string, { body: string; response: HttpResponse }>();
  let next = 1;
  let rotation = 0;

  const listed = (): Thing[] => {
    const all = [...things.values()];
    if (!breakage.listRotates || all.length === 0) return all;
    const by = rotation++ % all.length;
    return [...all.slice(by), ...all.slice(0, by)];
  };

  const represent = (thing: Thing, request: HttpRequest): HttpResponse => {
    const tag = breakage.ignoresOwnEtag ? `W/${etagOf(thing)}` : etagOf(thing);
    const inm = request.headers["if-none-match"];
    if (
      !breakage.ignoresOwnEtag &&
      inm !== undefined &&
      inm.split(/\s*,\s*/).some((t) => t.replace(/^W\//, "") === tag)
    ) {
      return empty(304, { etag: tag });
    }
    return json(200, thing, { etag: tag, "cache-control": "no-cache" });
  };

  return (request) => {
    const parts = request.path.split("/").filter(Boolean);
    if (parts[0] !== "things" || parts.length > 2) return notFound();
    if (parts.length === 1) {
      if (request.method === "GET" || request.method === "HEAD") {
        const response = json(200, listed());
        if (breakage.listGetCreates && request.method === "GET") {
          const id = `t${next++}`;
          things.set(id, { id, name: "visit", n: 0 });
        }
        return response;
      }
      if (request.method !== "POST") {
        return new HttpProblem({
          status: 405,
          code: "method_not_allowed",
          headers: { allow: "GET, HEAD, POST" },
        }).toResponse();
      }
      const key = breakage.ignoresIdempotencyKey ? undefined : request.headers["idempotency-key"];
      const raw = new TextDecoder().decode(request.body);
      if (key !== undefined) {
        const seen = keys.get(key);
        if (seen && seen.body !== raw && !breakage.acceptsKeyReuse) {
          return new HttpProblem({ status: 422, code: "idempotency_key_reused" }).toResponse();
        }
        if (seen && breakage.replaysButRunsAgain) {
          const again = validThing(JSON.parse(raw), breakage.lenientCreate);
          const id = `t${next++}`;
          things.set(id, { id, ...again });
        }
        if (seen) return { ...seen.response, headers: { ...seen.response.headers, "idempotent-replayed": "true" } };
      }
      const parsed = safeJsonBody(request);
      if (!parsed.ok) return parsed.problem.toResponse();
      const value = validThing(parsed.value, breakage.lenientCreate);
      const existing = [...things.values()].find((t) => t.name === value.name && t.n === value.n);
      if (breakage.postReturnsExisting && existing) {
        return json(201, existing, { location: `/things/${existing.id}` });
      }
      const thing: Thing = { id: `t${next++}`, ...value };
      things.set(thing.id, thing);
      const response = json(201, thing, { location: `/things/${thing.id}` });
      if (key !== undefined) keys.set(key, { body: raw, response });
      return response;
    }
    let id: string;
    try {
      id = decodeURIComponent(parts[1] as string);
    } catch {
      return new HttpProblem({ status: 400, code: "malformed_path" }).toResponse();
    }
    const thing = things.get(id);
    if (!thing) {
      if (request.method === "DELETE" && deleted.has(id) && breakage.deleteErrorsTwice) {
        return new HttpProblem({ status: 500, code: "internal_error" }).toResponse();
      }
      return notFound();
    }
    const ifMatch = request.headers["if-match"];
    const stale = ifMatch !== undefined && ifMatch !== "*" && !ifMatch.split(/\s*,\s*/).includes(etagOf(thing));
    if (stale && !breakage.ignoresIfMatch) {
      return new HttpProblem({ status: 412, code: "precondition_failed" }).toResponse();
    }
    switch (request.method) {
      case "GET":
      case "HEAD": {
        const response = represent(thing, request);
        if (breakage.getCountsVisits && request.method === "GET") thing.visits = (thing.visits ?? 0) + 1;
        if (breakage.headAddsHeader && request.method === "HEAD") {
          return { ...response, headers: { ...response.headers, "x-head-only": "1" } };
        }
        return response;
      }
      case "PUT": {
        const parsed = safeJsonBody(request);
        if (!parsed.ok) return parsed.problem.toResponse();
        const value = validThing(parsed.value);
        if (breakage.putChangesNothing) return represent(thing, { ...request, headers: {} });
        if (breakage.putCreates) {
          const copy = `t${next++}`;
          things.set(copy, { id: copy, ...value });
          return represent(thing, { ...request, headers: {} });
        }
        const replaced: Thing = breakage.putAppends
          ? { ...thing, ...value, history: [...(thing.history ?? []), value] }
          : { id, ...value };
        things.set(id, replaced);
        return represent(replaced, { ...request, headers: {} });
      }
      case "PATCH": {
        if (!request.headers["content-type"]?.startsWith("application/merge-patch+json")) {
          return new HttpProblem({ status: 415, code: "unsupported_media_type" }).toResponse();
        }
        const patch = JSON.parse(new TextDecoder().decode(request.body)) as unknown;
        const merged = mergePatch({ name: thing.name, n: thing.n }, patch) as Record<string, unknown>;
        const value = validThing({ name: merged.name, n: merged.n });
        if (breakage.patchAppends && typeof (patch as { name?: unknown }).name === "string") {
          value.name = thing.name + (patch as { name: string }).name;
        }
        const patched: Thing = { ...thing, ...value };
        things.set(id, patched);
        if (breakage.patchCreates) {
          const copy = `t${next++}`;
          things.set(copy, { id: copy, ...value });
        }
        return represent(patched, { ...request, headers: {} });
      }
      case "DELETE":
        things.delete(id);
        deleted.add(id);
        return empty(204);
      default:
        return new HttpProblem({
          status: 405,
          code: "method_not_allowed",
          headers: { allow: "GET, HEAD, PUT, PATCH, DELETE" },
        }).toResponse();
    }
  };
}

export interface ConsumerBreakage {
  processesDuplicates?: boolean;
  processesBeforeReply?: boolean;
}

/** A webhook consumer fixture: verifies, keeps an inbox, and processes only in `settle()`. */
export function consumerFixture(secret: string, breakage: ConsumerBreakage = {}) {
  const inbox: { id: string }[] = [];
  const seen = new Set<string>();
  const processed: string[] = [];
  const handler: Handler = (request) => {
    const result = verify({ body: request.body, headers: request.headers, secrets: secret });
    if (!result.ok) {
      return new HttpProblem({ status: 400, code: result.error.code, detail: result.error.message }).toResponse();
    }
    const id = (result.payload as { id: string }).id;
    if (breakage.processesBeforeReply) processed.push(id);
    else if (breakage.processesDuplicates || !seen.has(id)) inbox.push({ id });
    seen.add(id);
    return empty(202);
  };
  return {
    handler,
    processed: () => processed,
    settle: async () => {
      for (const item of inbox.splice(0)) processed.push(item.id);
    },
  };
}
