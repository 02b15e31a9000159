import { lookup } from "node:dns/promises";
import type { HostResolver } from "../url-policy";

/**
 * The system resolver: node:dns `lookup` with every address (`all: true`), in the order the system gives them. The
 * dispatcher's default (checked at connect time); pass it as the endpoint admin's or API's `resolve` to check host
 * names at registration too.
 * @example await systemResolver("example.com") // [{ address: "93.184.215.14", family: 4 }, …]
 */
export const systemResolver: HostResolver = (hostname) => lookup(hostname, { all: true, verbatim: true });
