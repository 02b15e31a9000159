import { describe, expect, it } from "vitest";
import type { HttpRequest } from "../../../src/http/message";
import { createRouter } from "../../../src/routing/index";
import { authenticate, compileApiKeys } from "../../../src/webhooks/delivery/api-key";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";

const KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";

const declare = (apiKeys: unknown) => {
  const endpoints = createMemoryEndpointStore();
  const queue = createMemoryDeliveryQueue({ endpoints });
  return declareEndpointApi(createRouter(), { endpoints, queue, apiKeys: apiKeys as string[], resolve: false });
};

const get = (authorization?: string): HttpRequest => ({
  method: "GET",
  path: "/v1/webhook_endpoints",
  search: "",
  query: {},
  headers: authorization === undefined ? {} : { authorization },
  body: new Uint8Array(0),
});

describe("API keys (RFC 6750)", () => {
  describe("a fixed key no Authorization: Bearer field can carry is refused when the API is declared", () => {
    // RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="; authenticate reads
    // only that, so such a key would answer 401 to every request, its own holder's included.
    it.each([
      ["empty", ""],
      ["a trailing newline (read from a file)", `${KEY}\n`],
      ["a space inside", "sk test"],
      ["a colon", "user:password"],
      ["a leading space", ` ${KEY}`],
      ["padding inside", "a=b"],
      ["non-ASCII", "sk_tëst"],
    ])("%s → TypeError", (_name, key) => {
      expect(() => declare([KEY, key])).toThrow(TypeError);
      expect(() => compileApiKeys([key])).toThrow(/b64token|API key/);
    });

    it.each([
      ["not a string", [42]],
      ["undefined (an unset environment variable)", [undefined]],
      ["a Set", new Set([KEY])],
      ["a string, not a list", KEY],
    ])("%s → TypeError", (_name, keys) => {
      expect(() => declare(keys)).toThrow(TypeError);
    });

    it("every key of the b64token alphabet, padding at the end included, is kept and matches", async () => {
      const keys = ["sk_live-A.b~c+d/e", "YWJjZA==", "k"];
      const check = compileApiKeys(keys);
      for (const key of keys) expect(await authenticate(get(`Bearer ${key}`), check)).toBeUndefined();
    });
  });

  describe("the challenge of a 401 (RFC 6750 §3, §3.1)", () => {
    const handler = declare([KEY]).handler();

    it("a wrong key is invalid_token", async () => {
      const res = await handler(get("Bearer sk_test_wrong"));
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Bearer realm="webhooks", error="invalid_token"');
    });

    it.each([
      ["no Authorization", undefined],
      ["another scheme", "Basic dXNlcjpwYXNz"],
    ])("%s carries no error code (§3: the request lacks authentication information)", async (_name, value) => {
      const res = await handler(get(value));
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Bearer realm="webhooks"');
    });
  });
});
