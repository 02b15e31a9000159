import { afterEach, describe, expect, it } from "vitest";
import { createRouter } from "../../../src/routing/index";
import { createEndpointAdmin } from "../../../src/webhooks/delivery/endpoint-admin";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { createDeliveryWorker, systemResolver } from "../../../src/webhooks/delivery/node/index";
import {
  checkResolvedAddresses,
  checkResolvedEndpointUrl,
  type HostResolver,
} from "../../../src/webhooks/delivery/url-policy";
import { scheduleBackoff } from "../../../src/webhooks/retry/backoff";
import { localServer } from "./node/local-server";
import { registerEndpoint as register } from "./register-endpoint";

// No real DNS: names resolve to what the table says at the time of the call.
function resolver(table: Record<string, string[]>, calls: string[] = []): HostResolver {
  return async (hostname) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    }
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

const PUBLIC = "93.184.216.34";

describe("registration resolves the host name (SSRF)", () => {
  it.each([
    ["loopback", "127.0.0.1"],
    ["loopback v6", "::1"],
    ["private", "10.0.0.1"],
    ["private 172.16", "172.16.5.4"],
    ["private 192.168", "192.168.1.1"],
    ["link-local (cloud metadata)", "169.254.169.254"],
    ["link-local v6", "fe80::1"],
    ["CGNAT", "100.64.0.1"],
    ["multicast", "224.0.0.1"],
    ["unspecified", "0.0.0.0"],
    ["unique-local v6", "fd00::1"],
    ["IPv4-mapped v6", "::ffff:127.0.0.1"],
    ["NAT64 of loopback", "64:ff9b::7f00:1"],
  ])("refuses a name that resolves to %s (%s)", async (_kind, address) => {
    const result = await checkResolvedEndpointUrl(
      "https://evil.example/hooks",
      resolver({ "evil.example": [address] }),
    );
    expect(result).toMatchObject({ ok: false, code: "forbidden_address", address });
  });

  it("refuses 127.0.0.1.nip.io (a public wildcard name for loopback)", async () => {
    const resolve = resolver({ "127.0.0.1.nip.io": ["127.0.0.1"] });
    expect(await checkResolvedEndpointUrl("https://127.0.0.1.nip.io/hooks", resolve)).toMatchObject({
      ok: false,
      code: "forbidden_address",
      addressClass: "loopback",
    });
  });

  it("refuses a name when ANY of its addresses is forbidden (no partial trust)", async () => {
    const resolve = resolver({ "mixed.example": [PUBLIC, "2606:4700::1", "10.1.2.3"] });
    expect(await checkResolvedEndpointUrl("https://mixed.example/", resolve)).toMatchObject({
      ok: false,
      code: "forbidden_address",
      addressClass: "private",
    });
  });

  it("accepts a name whose every address is public", async () => {
    const resolve = resolver({ "hooks.example": [PUBLIC, "2606:4700:4700::1111"] });
    const result = await checkResolvedEndpointUrl("https://hooks.example/in", resolve);
    expect(result.ok).toBe(true);
  });

  it("refuses a name that does not resolve, or resolves to nothing, as unresolvable_host", async () => {
    expect(await checkResolvedEndpointUrl("https://nowhere.example/", resolver({}))).toMatchObject({
      ok: false,
      code: "unresolvable_host",
      host: "nowhere.example",
    });
    expect(checkResolvedAddresses("empty.example", [])).toMatchObject({ code: "unresolvable_host" });
  });

  it("does not resolve IP literals, allow-listed names, or URLs refused already", async () => {
    const calls: string[] = [];
    const resolve = resolver({}, calls);
    expect((await checkResolvedEndpointUrl(`https://${PUBLIC}/`, resolve)).ok).toBe(true);
    const policy = { allowHttp: true, allow: ["dev.internal"] };
    expect((await checkResolvedEndpointUrl("http://dev.internal:3000/", resolve, policy)).ok).toBe(true);
    expect(await checkResolvedEndpointUrl("http://plain.example/", resolve)).toMatchObject({ code: "insecure_scheme" });
    expect(await checkResolvedEndpointUrl("https://localhost./", resolve)).toMatchObject({ code: "forbidden_address" });
    expect(calls).toEqual([]);
  });

  it("the endpoint admin refuses such a URL on create and on a URL change", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const resolve = resolver({ "good.example": [PUBLIC], "evil.example": ["169.254.169.254"] });
    const admin = createEndpointAdmin({ endpoints, queue, resolve });
    expect(await admin.create({ url: "https://evil.example/in", enabled_events: ["*"] })).toMatchObject({
      ok: false,
      code: "unresolvable_host",
      host: "evil.example",
    });
    const created = await admin.create({ url: "https://good.example/in", enabled_events: ["*"] });
    if (!created.ok) throw new Error("create failed");
    expect(await admin.update(created.value.id, { url: "https://evil.example/in" })).toMatchObject({
      ok: false,
      code: "unresolvable_host",
    });
    expect((await endpoints.get(created.value.id))?.url).toBe("https://good.example/in");
  });

  it("the endpoint API answers 422 unresolvable_host for a name resolving to a forbidden address, or to none", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const handler = declareEndpointApi(createRouter(), {
      endpoints,
      queue,
      apiKeys: ["sk_test_key"],
      resolve: resolver({ "evil.example": ["127.0.0.1"] }),
    }).handler();
    for (const [url, code] of [
      ["https://evil.example/in", "unresolvable_host"],
      ["https://nowhere.example/in", "unresolvable_host"],
      ["https://127.0.0.1/in", "forbidden_address"],
    ]) {
      const res = await register(handler, url as string);
      expect(res.status).toBe(422);
      expect(JSON.parse(String(res.body))).toMatchObject({ code, errors: [{ pointer: "/url", code }] });
    }
  });

  // RFC 9110 §4.2.4 (userinfo deprecated in http(s) URIs) and RFC 6335 §6 (port 0 reserved, not connectable): the
  // same refusal the dispatcher makes before each attempt (url_refused), here before any DNS.
  it.each([
    "https://user:pass@good.example/in",
    "https://user@good.example/in",
    "https://:pass@good.example/in",
    "https://good.example:0/in",
  ])("the endpoint API and admin refuse %s with 422 invalid_url, without resolving", async (url) => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const calls: string[] = [];
    const resolve = resolver({ "good.example": [PUBLIC] }, calls);
    const handler = declareEndpointApi(createRouter(), {
      endpoints,
      queue,
      apiKeys: ["sk_test_key"],
      resolve,
    }).handler();
    const res = await register(handler, url);
    expect(res.status).toBe(422);
    expect(JSON.parse(String(res.body))).toMatchObject({ code: "invalid_url", errors: [{ pointer: "/url" }] });
    const admin = createEndpointAdmin({ endpoints, queue, resolve });
    expect(await admin.create({ url, enabled_events: ["*"] })).toMatchObject({ ok: false, code: "invalid_url" });
    const created = await admin.create({ url: "https://good.example/in", enabled_events: ["*"] });
    if (!created.ok) throw new Error("create failed");
    expect(await admin.update(created.value.id, { url })).toMatchObject({ ok: false, code: "invalid_url" });
    expect(calls).toEqual(["good.example"]);
  });

  // Regression: the 422 named the address ("resolves to 10.20.0.5"): a map of the provider's internal DNS.
  it("names the class of a forbidden address a name resolves to, never the address (no internal DNS oracle)", async () => {
    const internal = "10.20.0.5";
    const resolve = resolver({ "db.internal": [internal] });
    const checked = await checkResolvedEndpointUrl("https://db.internal/", resolve);
    expect(checked).toMatchObject({ ok: false, code: "forbidden_address", addressClass: "private", address: internal });
    expect(checked.ok ? "" : checked.detail).not.toContain(internal);
    expect(checked.ok ? "" : checked.detail).toContain("private");
    const endpoints = createMemoryEndpointStore();
    const handler = declareEndpointApi(createRouter(), {
      endpoints,
      queue: createMemoryDeliveryQueue({ endpoints }),
      apiKeys: ["sk_test_key"],
      resolve,
    }).handler();
    const res = await register(handler, "https://db.internal/");
    expect(res.status).toBe(422);
    expect(String(res.body)).not.toContain(internal);
  });

  // Regression: registration answered forbidden_address (with the address's class) for a name the provider's resolver
  // knew, and unresolvable_host for one it did not: a registrant could ask whether `db.internal` exists in the
  // provider's own DNS (split horizon), and what kind of address it has. Now both answers are one, but for the host.
  it.each([["10.20.0.5"], ["127.0.0.1"], ["169.254.169.254"], ["fd00::1"]])(
    "answers a name resolving to %s exactly as a name that does not resolve (no internal DNS oracle)",
    async (address) => {
      const endpoints = createMemoryEndpointStore();
      const handler = declareEndpointApi(createRouter(), {
        endpoints,
        queue: createMemoryDeliveryQueue({ endpoints }),
        apiKeys: ["sk_test_key"],
        resolve: resolver({ "db.internal": [address] }),
      }).handler();
      const answer = async (host: string) => {
        const res = await register(handler, `https://${host}/`);
        return { status: res.status, body: String(res.body).replaceAll(host, "HOST") };
      };
      const known = await answer("db.internal");
      expect(known).toEqual(await answer("nx.internal"));
      expect(known.status).toBe(422);
      expect(JSON.parse(known.body)).toMatchObject({ code: "unresolvable_host", errors: [{ pointer: "/url" }] });
      expect(await endpoints.list({ limit: 10 })).toEqual([]);
    },
  );

  it("`resolve` is a visible choice: a resolver, or `false` for IP literals only; anything else is refused", async () => {
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const injected = createEndpointAdmin({ endpoints, queue, resolve: resolver({ "evil.example": ["10.0.0.1"] }) });
    expect(await injected.create({ url: "https://evil.example/", enabled_events: ["*"] })).toMatchObject({
      code: "unresolvable_host",
    });
    const off = createEndpointAdmin({ endpoints, queue, resolve: false });
    expect((await off.create({ url: "https://evil.example/", enabled_events: ["*"] })).ok).toBe(true);
    expect(() => createEndpointAdmin({ endpoints, queue } as never)).toThrow(/resolve/);
    // The default resolver is the system's: localhost comes from the hosts file, no network needed.
    const local = await systemResolver("localhost");
    expect(local.length).toBeGreaterThan(0);
    expect(checkResolvedAddresses("localhost", local)).toMatchObject({ code: "forbidden_address" });
  });
});

describe("DNS rebinding: public at registration, loopback at send time", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()?.();
  });

  it("is refused at send time: nothing reaches the server, the attempt is logged as ssrf_blocked", async () => {
    const server = await localServer();
    const table: Record<string, string[]> = { "rebind.example": [PUBLIC] };
    const resolve = resolver(table);
    const endpoints = createMemoryEndpointStore();
    const queue = createMemoryDeliveryQueue({ endpoints });
    const urlPolicy = { allowHttp: true };
    const admin = createEndpointAdmin({ endpoints, queue, urlPolicy, resolve });
    const created = await admin.create({ url: `http://rebind.example:${server.port}/hooks`, enabled_events: ["*"] });
    expect(created.ok).toBe(true);
    if (!created.ok) return;

    // The attacker's DNS now answers loopback.
    table["rebind.example"] = ["127.0.0.1"];
    const worker = createDeliveryWorker({
      queue,
      endpoints,
      dispatcher: { urlPolicy, resolve, timeoutMs: 30_000 },
      retry: scheduleBackoff([0], 0),
    });
    cleanups.push(async () => {
      await worker.stop();
      await server.close();
    });
    worker.start();
    const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }));
    await worker.drained();

    expect(server.received).toHaveLength(0);
    expect((await queue.get(deliveryIds[0]!))?.state).toMatchObject({
      status: "exhausted",
      lastErrorKind: "ssrf_blocked",
    });
    const [line] = await queue.attempts({ endpointId: created.value.id });
    expect(line).toMatchObject({ errorKind: "ssrf_blocked", status: null });
  });
});
