/**
 * SHOP_WEBHOOK_PROXY: the shop's deliveries go through an egress proxy's CONNECT tunnels, to the address the URL
 * policy checked, and arrive signed as without one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../examples/shop/config";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { type ConnectProxy, startConnectProxy } from "../support/connect-proxy";
import { eventually, type Receiver, type RunningShop, startReceiver, startShop } from "./shop-harness";

describe("SHOP_WEBHOOK_PROXY", () => {
  it("takes an http:// or https:// proxy URL, and refuses any other", () => {
    const read = (value: string) => loadConfig({ SHOP_WEBHOOK_PROXY: value });
    const http = read("http://egress.internal:3128");
    expect(http.ok && http.shop.webhookProxy).toBe("http://egress.internal:3128");
    const unset = loadConfig({});
    expect(unset.ok && unset.shop.webhookProxy).toBeUndefined();
    for (const wrong of ["socks5://egress.internal:1080", "egress.internal:3128"]) {
      const refused = read(wrong);
      expect(refused.ok, wrong).toBe(false);
      expect(!refused.ok && refused.errors[0]).toMatch(/^SHOP_WEBHOOK_PROXY: /);
    }
  });

  describe("a shop delivering through a proxy", () => {
    let proxy: ConnectProxy;
    let receiver: Receiver;
    let shop: RunningShop;
    beforeAll(async () => {
      proxy = await startConnectProxy();
      receiver = await startReceiver();
      shop = await startShop(createMemoryStorage(), {
        deliver: true,
        allowInsecureWebhookUrls: true,
        webhookProxy: proxy.url,
      });
    });
    afterAll(async () => {
      await shop.close();
      await receiver.close();
      await proxy.close();
    });

    it("delivers the user.created event through a tunnel to the receiver's checked address", async () => {
      const registered = await shop.api("POST", "/v1/webhook_endpoints", {
        token: shop.config.apiKey,
        body: `url=${encodeURIComponent(receiver.url)}&enabled_events[]=user.*`,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(registered.status).toBe(201);
      receiver.secret = registered.json<{ secret: string }>().secret;
      const user = (await shop.api("POST", "/users", { body: { name: "Proxied", tier: "basic" } })).json<{
        id: string;
      }>();
      const event = await eventually("the delivery", () => receiver.received.find((r) => r.data.id === user.id));
      expect(event.type).toBe("user.created");
      expect(receiver.refused).toBe(0);
      expect(proxy.connects.map((c) => c.authority)).toEqual([new URL(receiver.url).host]);
    });
  });
});
