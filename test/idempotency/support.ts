/** Helpers shared by the idempotency tests. */
import type { HttpRequest } from "../../src/http";

const encoder = new TextEncoder();

/** A fake clock: `now` for the store, `advance` for the test. */
export function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Builds an {@link HttpRequest}, with `Content-Type: application/json` unless `headers` leaves it `undefined`. */
export function request(init: {
  method?: string;
  path?: string;
  search?: string;
  key?: string;
  caller?: string;
  body?: string;
  /** Header fields; one given as `undefined` is left out. */
  headers?: Record<string, string | undefined>;
}): HttpRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries({ "content-type": "application/json", ...init.headers })) {
    if (value !== undefined) headers[name] = value;
  }
  if (init.key !== undefined) headers["idempotency-key"] = init.key;
  if (init.caller !== undefined) headers["x-account"] = init.caller;
  return {
    method: init.method ?? "POST",
    path: init.path ?? "/orders",
    search: init.search ?? "",
    query: {},
    headers,
    body: encoder.encode(init.body ?? '{"sku":"a"}'),
  };
}

/** A promise with its resolve function outside. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The text of a response body. */
export function bodyText(body: Uint8Array | string | null | undefined): string {
  if (body == null) return "";
  return typeof body === "string" ? body : new TextDecoder().decode(body);
}

/** The `code` member of a problem response. */
export function problemCode(body: Uint8Array | string | null | undefined): unknown {
  return (JSON.parse(bodyText(body)) as { code?: unknown }).code;
}
