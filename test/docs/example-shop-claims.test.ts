/**
 * docs/example-shop.md's claims about the validators the shop sends, checked against the shop in-process on a fake
 * clock: a page that says "every GET carries Last-Modified" must say when it does not.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createShop } from "../../examples/shop/app";
import { issueToken } from "../../examples/shop/tokens";
import type { HttpRequest, HttpResponse } from "../../src/http/index";
import { testConfig } from "../examples/shop-harness";

const page = readFileSync(new URL("../../docs/example-shop.md", import.meta.url), "utf8");

// Any start will do: the second it falls in is what matters, and the shop reads no other clock for its validators.
let clock = Date.UTC(2026, 0, 5, 10, 0, 0, 100);

describe("docs/example-shop.md's validators", async () => {
  const config = testConfig({ now: () => clock });
  const shop = await createShop(config);
  afterAll(() => shop.close());
  const authorization = `Bearer ${await issueToken(config.jwtSecret, { sub: "admin", admin: true })}`;
  const send = async (method: string, path: string, body?: unknown): Promise<HttpResponse> =>
    shop.handler({
      method,
      path,
      search: "",
      query: {},
      headers: {
        authorization,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: new TextEncoder().encode(body === undefined ? "" : JSON.stringify(body)),
    } satisfies HttpRequest);

  // The page said every GET carries Last-Modified; within the second of a change the shop leaves it out.
  it("says Last-Modified waits for the second of the change to end, as the shop does", async () => {
    expect(page).toContain("Last-Modified is left\nout until the second of the change is over (`settledLastModified`");
    const created = await send("POST", "/users", { name: "Ada", tier: "gold" });
    expect(created.status).toBe(201);
    expect(created.headers["etag"]).toBe('"1"');
    expect(created.headers["last-modified"]).toBeUndefined();
    const location = created.headers["location"] as string;

    const sameSecond = await send("GET", location);
    expect(sameSecond.status).toBe(200);
    expect(sameSecond.headers["etag"]).toBe('"1"');
    expect(sameSecond.headers["last-modified"]).toBeUndefined();

    clock += 1_000;
    const later = await send("GET", location);
    expect(later.headers["last-modified"]).toBe("Mon, 05 Jan 2026 10:00:00 GMT");
  });
});
