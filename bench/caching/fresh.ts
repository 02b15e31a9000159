/**
 * The 304 decision from request and response headers: our `isFresh` against jshttp `fresh`, on the
 * cases a server sees most. Both must agree on every input before anything is timed.
 */
import fresh from "fresh";
import { isFresh } from "../../src/caching/index";
import type { RequestHeaders } from "../../src/http/message";
import { type Comparison, compare, consume } from "./measure";

const TAG = '"qvTGHdzF6KLavt4PO0gs2a6pQ00"';
const LAST_MODIFIED = "Wed, 01 May 2024 12:00:00 GMT";
const BASE = {
  host: "api.example.com",
  accept: "application/json",
  "user-agent": "bench/1.0",
  "accept-encoding": "gzip, br",
};
const RESPONSE = {
  "content-type": "application/json",
  "content-length": "1024",
  etag: TAG,
  "last-modified": LAST_MODIFIED,
  "cache-control": "no-cache",
};

const CASES: [string, RequestHeaders, boolean][] = [
  ["unconditional", { ...BASE }, false],
  ["If-None-Match hit", { ...BASE, "if-none-match": TAG }, true],
  ["If-None-Match weak hit", { ...BASE, "if-none-match": `W/${TAG}` }, true],
  ["If-None-Match miss", { ...BASE, "if-none-match": '"0123456789abcdefghijklmnopqr"' }, false],
  ["If-None-Match list of 4, hit last", { ...BASE, "if-none-match": `"a1", "b2", "c3", ${TAG}` }, true],
  ["If-Modified-Since not modified", { ...BASE, "if-modified-since": LAST_MODIFIED }, true],
  ["If-Modified-Since modified", { ...BASE, "if-modified-since": "Tue, 30 Apr 2024 12:00:00 GMT" }, false],
];

/** Runs the freshness comparisons. */
export function runFresh(): Comparison[] {
  console.log("\n# 304 decision from request + response headers (ours: isFresh; fresh: fresh)");
  const results: Comparison[] = [];
  for (const [label, request, expected] of CASES) {
    const ours = isFresh(request, RESPONSE);
    const theirs = fresh(request, RESPONSE);
    if (ours !== expected || theirs !== expected) {
      throw new Error(`${label}: expected ${expected}, ours ${ours}, fresh ${theirs}`);
    }
    results.push(
      compare(
        `fresh ${label}`,
        "fresh",
        () => consume(isFresh(request, RESPONSE)),
        () => consume(fresh(request, RESPONSE)),
      ),
    );
  }
  return results;
}
