import { stringFault } from "../http/json-limits";
import { positiveInteger } from "../options/number-option";
import { STORED_TEXT_REFUSALS } from "../options/stored-text";
import type { StoredResponse } from "./store";

/*
 * The checks every IdempotencyStore makes of its arguments before it reads or writes, so that the memory, Redis and
 * PostgreSQL stores refuse the same values with the same TypeError. Unchecked, a lease of 0 or less was acquired
 * already dead in memory and PostgreSQL where Redis threw a ReplyError, and the memory store alone kept 1.5, NaN or
 * Infinity (a 409 with an infinite Retry-After).
 */

/** `IdempotencyStore.begin`'s `leaseMs`: a positive integer number of milliseconds (Redis `PX` takes no other). */
export function checkLeaseMs(leaseMs: number): void {
  positiveInteger("IdempotencyStore.begin", "leaseMs", leaseMs, "milliseconds");
}

/** `IdempotencyStore.complete`'s `ttlMs`: a positive integer number of milliseconds. */
export function checkTtlMs(ttlMs: number): void {
  positiveInteger("IdempotencyStore.complete", "ttlMs", ttlMs, "milliseconds");
}

/**
 * `IdempotencyStore.complete`'s `response.status`: an integer in 100..599 (RFC 9110 §15: values outside are invalid).
 * Redis and PostgreSQL read no other back: unchecked, they wrote the record and then failed every begin on the key
 * (idempotency_record_invalid) until it expired, where memory replayed it.
 */
export function checkStatus(response: StoredResponse): void {
  const status: unknown = response?.status;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new TypeError(
      `IdempotencyStore.complete: response.status must be an integer in 100..599, got ${String(status)}.`,
    );
  }
}

// Why `value` is no text every store keeps as given; undefined when it is. One scan, no allocation, on the way in.
function fault(value: unknown): string | undefined {
  if (typeof value !== "string") return `a ${typeof value}, not a string`;
  const found = stringFault(value, false);
  return found === undefined ? undefined : STORED_TEXT_REFUSALS[found];
}

/*
 * The text a store keeps must be text every store keeps as given: PostgreSQL cannot hold U+0000 in text or jsonb (the
 * database threw), reads a lone surrogate in text as U+FFFD and refuses one in jsonb; Redis read it as U+FFFD in keys
 * and fingerprints (two keys shared one record). Memory kept both. So every store refuses both, as the rate limit
 * stores do for their keys (src/ratelimit/store-key.ts): a program tested on memory does not fail on PostgreSQL.
 * The argument is named, never quoted: a key or a header value may be a secret.
 */

function checkText(owner: string, argument: string, value: string): void {
  const found = fault(value);
  if (found !== undefined) throw new TypeError(`${owner}: ${argument} holds ${found}.`);
}

/**
 * `IdempotencyStore.begin`'s `key` and `fingerprint`: strings without U+0000 or a lone surrogate.
 * @throws TypeError naming the argument.
 */
export function checkBeginText(key: string, fingerprint: string): void {
  checkText("IdempotencyStore.begin", "key", key);
  checkText("IdempotencyStore.begin", "fingerprint", fingerprint);
}

/**
 * `IdempotencyStore.complete`'s `key`, `leaseToken` and `response.headers` (see {@link checkResponseText}).
 * @throws TypeError naming the argument.
 */
export function checkCompleteText(key: string, leaseToken: string, response: StoredResponse): void {
  checkText("IdempotencyStore.complete", "key", key);
  checkText("IdempotencyStore.complete", "leaseToken", leaseToken);
  checkResponseText(response);
}

/**
 * `IdempotencyStore.release`'s `key` and `leaseToken`: strings without U+0000 or a lone surrogate.
 * @throws TypeError naming the argument.
 */
export function checkReleaseText(key: string, leaseToken: string): void {
  checkText("IdempotencyStore.release", "key", key);
  checkText("IdempotencyStore.release", "leaseToken", leaseToken);
}

/**
 * `IdempotencyStore.complete`'s `response.headers`: names and values (each item of a list) are strings without
 * U+0000 or a lone surrogate (a number was written by Redis and PostgreSQL, then failed every begin on the key as
 * idempotency_record_invalid, where memory replayed it). No HTTP response carries either: RFC 9110 §5.1, §5.5 allow neither in a field, and
 * node:http and the Fetch API's Headers refuse both. The body is bytes, which every store keeps as they are.
 * @throws TypeError naming `response.headers` and the field.
 */
export function checkResponseText(response: StoredResponse): void {
  const headers = response.headers;
  for (const name in headers) {
    const found = fault(name);
    if (found !== undefined) {
      throw new TypeError(`IdempotencyStore.complete: response.headers has a field name that holds ${found}.`);
    }
    const value: unknown = headers[name];
    // Left out, as toStoredResponse leaves it out: JSON (Redis, PostgreSQL) drops the field, memory keeps no value.
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) headerValue(name, value[i]);
    } else headerValue(name, value);
  }
}

function headerValue(name: string, value: unknown): void {
  const found = fault(value);
  if (found !== undefined) {
    throw new TypeError(`IdempotencyStore.complete: response.headers[${JSON.stringify(name)}] holds ${found}.`);
  }
}
