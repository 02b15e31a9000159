import { lookup } from "node:dns/promises";
import type { HostResolver } from "../../delivery/url-policy";

/**
 * The system resolver: node:dns `lookup` with every address (`all: true`), in the order the system gives them. The
 * default of the dispatcher (checked at connect time) and of the endpoint registration here (checked at creation).
 * @example await systemResolver("example.com") // [{ address: "93.184.215.14", family: 4 }, …]
 */
export const systemResolver: HostResolver = (hostname) => lookup(hostname, { all: true, verbatim: true });
