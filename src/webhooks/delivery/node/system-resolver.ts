import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { positiveNumber } from "../../../options/number-option";
import { timerDelay } from "../../../options/timer-delay";
import type { HostResolver } from "../url-policy";

/** Options of {@link createSystemResolver}. */
export interface SystemResolverOptions {
  /**
   * How long one look-up may take, ms, before it fails with `ETIMEOUT` (registration: `unresolvable_host`; an
   * attempt: a `dns` error, retried). A finite number above 0. @default 5000
   */
  timeoutMs?: number;
  /** The look-up (inject one in tests). @default node:dns/promises `lookup` */
  lookup?: (hostname: string, options: { all: true; verbatim: true }) => Promise<LookupAddress[]>;
}

/** The default time-out of a system look-up, ms: one try of the system resolver's own default (resolv.conf). */
export const SYSTEM_RESOLVER_TIMEOUT_MS = 5_000;

/**
 * The system resolver: node:dns `lookup` with every address (`all: true`), in the order the system gives them (hosts
 * file included, as the connection itself would use), failing with `ETIMEOUT` after `timeoutMs`. `lookup` runs on
 * libuv's thread pool and cannot be cancelled: the time-out answers the caller, and the look-up ends in the
 * background.
 * @example const resolve = createSystemResolver({ timeoutMs: 2_000 });
 */
export function createSystemResolver(options: SystemResolverOptions = {}): HostResolver {
  const timeoutMs = positiveNumber(
    "createSystemResolver",
    "timeoutMs",
    options.timeoutMs ?? SYSTEM_RESOLVER_TIMEOUT_MS,
    "milliseconds",
  );
  const lookup = options.lookup ?? ((hostname, all) => dnsLookup(hostname, all));
  return (hostname) =>
    new Promise((resolve, reject) => {
      // A slow name server (getaddrinfo's own retries can take 10–30 s) must not hold a registration or an attempt.
      const timer = setTimeout(() => {
        const error = new Error(`Looking up ${hostname} took more than ${timeoutMs} ms.`);
        reject(Object.assign(error, { code: "ETIMEOUT", hostname }));
      }, timerDelay(timeoutMs));
      timer.unref();
      lookup(hostname, { all: true, verbatim: true }).then(
        (addresses) => {
          clearTimeout(timer);
          resolve(addresses);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
}

/**
 * The system resolver with the default time-out ({@link createSystemResolver}): the dispatcher's default (checked at
 * connect time); pass it as the endpoint admin's or API's `resolve` to check host names at registration too.
 * @example await systemResolver("example.com") // [{ address: "93.184.215.14", family: 4 }, …]
 */
export const systemResolver: HostResolver = createSystemResolver();
