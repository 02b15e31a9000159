import { randomFillSync } from "node:crypto";
import { HttpProblem, type HttpRequest } from "rest-webhooks/http";
import type { Middleware } from "rest-webhooks/routing";
import type { Verifier } from "./auth";
import type { ShopStorage, ShopTransaction } from "./storage/types";

/** What the route modules share: storage, the clock, ids, and the middleware they mount. */
export interface ShopContext {
  readonly storage: ShopStorage;
  readonly now: () => number;
  /** A new id: the prefix, "_", then 16 random base64url characters. */
  newId(prefix: "usr" | "ord"): string;
  /**
   * Runs `work` in the request's transaction (with its idempotency record, on PostgreSQL) or in one of its own, then
   * wakes the delivery worker for the events it committed.
   */
  write<T>(request: HttpRequest, work: (tx: ShopTransaction) => Promise<T>): Promise<T>;
  /** Runs each write request in one transaction with its idempotency record (mount it before `idempotent`). */
  readonly requestScope: Middleware;
  /** Checks the bearer token (mounted with `authenticate`, which answers 401 and records the principal). */
  readonly verify: Verifier;
  /** Idempotency-Key support for POST (replays, 409 while in flight, 422 on reuse). */
  readonly idempotent: Middleware;
  /** 304 / 412 for reads whose ETag is computed from what they send (the order lists: `pageEtag`). */
  readonly conditionalList: Middleware;
}

// Random bytes drawn 4 KiB at a time: one randomFillSync per 341 ids instead of one per id.
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

/** A random id with a type prefix and 96 random bits, e.g. `ord_3k9X…` (16 base64url characters). */
export function randomId(prefix: string): string {
  if (poolOffset + 12 > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const id = POOL.toString("base64url", poolOffset, poolOffset + 12);
  poolOffset += 12;
  return `${prefix}_${id}`;
}

/** The 404 problem for a user or an order that does not exist. */
export function notFound(what: "user" | "order", id: string): HttpProblem {
  return new HttpProblem({ status: 404, code: `${what}_not_found`, detail: `No ${what} ${id}.` });
}
