import type { LookupAddress } from "node:dns";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createSystemResolver,
  SYSTEM_RESOLVER_TIMEOUT_MS,
  systemResolver,
} from "../../../../src/webhooks/delivery/node/system-resolver";
import { checkResolvedEndpointUrl } from "../../../../src/webhooks/delivery/url-policy";

// A name server that never answers.
const silent = () => new Promise<LookupAddress[]>(() => {});

describe("the system resolver", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fails a look-up that takes longer than its time-out with ETIMEOUT (5 s by default), and registration refuses the host as unresolvable", async () => {
    vi.useFakeTimers();
    const resolve = createSystemResolver({ lookup: silent });
    const pending = resolve("slow.example");
    const outcome = pending.then(
      () => "resolved",
      (error: NodeJS.ErrnoException) => error,
    );
    await vi.advanceTimersByTimeAsync(SYSTEM_RESOLVER_TIMEOUT_MS - 1);
    let settled = false;
    void outcome.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: "ETIMEOUT", hostname: "slow.example" });

    const check = checkResolvedEndpointUrl("https://slow.example/in", resolve);
    await vi.advanceTimersByTimeAsync(SYSTEM_RESOLVER_TIMEOUT_MS);
    expect(await check).toEqual({
      ok: false,
      code: "unresolvable_host",
      detail: "The host slow.example could not be resolved (ETIMEOUT).",
      host: "slow.example",
    });
  });

  it("takes its own time-out, and hands on the look-up's addresses and errors as they are", async () => {
    vi.useFakeTimers();
    const calls: [string, unknown][] = [];
    const resolve = createSystemResolver({
      timeoutMs: 50,
      lookup: async (hostname, options) => {
        calls.push([hostname, options]);
        if (hostname === "missing.example") {
          throw Object.assign(new Error("getaddrinfo ENOTFOUND missing.example"), { code: "ENOTFOUND" });
        }
        return [
          { address: "2001:db8::1", family: 6 },
          { address: "93.184.216.34", family: 4 },
        ];
      },
    });
    expect(await resolve("hooks.example")).toEqual([
      { address: "2001:db8::1", family: 6 },
      { address: "93.184.216.34", family: 4 },
    ]);
    await expect(resolve("missing.example")).rejects.toMatchObject({ code: "ENOTFOUND" });
    expect(calls).toEqual([
      ["hooks.example", { all: true, verbatim: true }],
      ["missing.example", { all: true, verbatim: true }],
    ]);
    const slow = createSystemResolver({ timeoutMs: 50, lookup: silent })("slow.example");
    const assertion = expect(slow).rejects.toMatchObject({ code: "ETIMEOUT" });
    await vi.advanceTimersByTimeAsync(50);
    await assertion;
    // Answered look-ups leave no timer behind.
    expect(vi.getTimerCount()).toBe(0);
  });

  it("refuses a time-out that is not a finite number above 0, naming the option", () => {
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "5000" as unknown as number]) {
      expect(() => createSystemResolver({ timeoutMs }), String(timeoutMs)).toThrow(
        /createSystemResolver: timeoutMs must be a positive number/,
      );
    }
  });

  it("resolves through the system, hosts file included: localhost, with no network", async () => {
    const addresses = await systemResolver("localhost");
    expect(addresses.length).toBeGreaterThan(0);
    for (const entry of addresses) expect([4, 6]).toContain(entry.family);
  });
});
