/**
 * A tiny document resource used by the handler tests: GET/HEAD read, PUT replaces, DELETE removes.
 * Its ETag is the wrapper's body hash, so `validators` hashes the same serialisation.
 */
import { etagFromBody, type Validators } from "../../src/caching/index";
import type { Handler, HttpRequest, HttpResponse } from "../../src/http/message";

export interface Document {
  body: string;
  modified: number;
}

export function documentResource(initial: Record<string, Document>) {
  const documents = new Map(Object.entries(initial));
  const calls: string[] = [];
  const handler: Handler = (request: HttpRequest): HttpResponse => {
    calls.push(`${request.method} ${request.path}`);
    const doc = documents.get(request.path);
    switch (request.method) {
      case "GET":
      case "HEAD":
        if (doc === undefined) return { status: 404, headers: {}, body: null };
        return {
          status: 200,
          headers: {
            "content-type": "application/json",
            "cache-control": "no-cache",
            vary: "accept",
            "last-modified": new Date(doc.modified).toUTCString(),
          },
          body: doc.body,
        };
      case "PUT": {
        const created = doc === undefined;
        documents.set(request.path, {
          body: new TextDecoder().decode(request.body),
          modified: Date.parse("2024-05-02T00:00:00Z"),
        });
        return { status: created ? 201 : 204, headers: {}, body: null };
      }
      case "DELETE":
        documents.delete(request.path);
        return { status: 204, headers: {}, body: null };
      default:
        return { status: 405, headers: { allow: "GET, HEAD, PUT, DELETE" }, body: null };
    }
  };
  const validators = (request: HttpRequest): Validators | undefined => {
    const doc = documents.get(request.path);
    return doc === undefined ? undefined : { etag: etagFromBody(doc.body), lastModified: doc.modified };
  };
  return { documents, calls, handler, validators };
}
