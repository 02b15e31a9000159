/**
 * `rest-webhooks check`, spawned: the kit's resource laws pass on the example shop (memory storage, taken from its
 * own OpenAPI document), and fail, each named with its request sequence and the seed, on a broken server written
 * with bare node:http.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { generateSecret } from "../../src/webhooks/signing/index";
import { type RunningShop, startReceiver, startShop } from "../examples/shop-harness";
import { startBrokenThings } from "./fixtures/broken-things-server";
import { runCli } from "./run-cli";

interface CheckReport {
  seed: number;
  laws: { resource: string; law: string; passed: boolean; reason?: string; requests?: string }[];
}

describe("rest-webhooks check", () => {
  describe("on the example shop", () => {
    let shop: RunningShop;
    beforeAll(async () => {
      shop = await startShop(createMemoryStorage());
    });
    afterAll(() => shop.close());

    it("passes every law on its users and a user's orders (parents created to fill {user_id})", async () => {
      const run = await runCli([
        "check",
        shop.server.url,
        "--header",
        `authorization: Bearer ${shop.adminToken}`,
        "--path",
        "/users",
        "--path",
        "/users/{user_id}/orders",
        "--idempotency-key",
        "--runs",
        "5",
        "--seed",
        "20261125",
        "--json",
      ]);
      const report = JSON.parse(run.stdout) as CheckReport;
      expect(report.laws.filter((law) => !law.passed)).toEqual([]);
      expect(report.seed).toBe(20261125);
      const names = report.laws.filter((l) => l.resource === "/users/{user_id}/orders").map((l) => l.law);
      expect(names).toEqual([
        "GET and HEAD change nothing",
        "HEAD's headers equal GET's",
        "POST twice creates two",
        "a GET with its own ETag answers 304",
        "errors are problem documents",
        "PUT twice = PUT once",
        "a stale If-Match answers 412 and changes nothing",
        "DELETE twice leaves it gone",
        "merge-patch PATCH twice = once",
        "one Idempotency-Key creates one resource",
        "a reused Idempotency-Key with another body answers 422",
      ]);
      expect(run.code).toBe(0);
    });
  });

  describe("on a broken server written with bare node:http", () => {
    let broken: Awaited<ReturnType<typeof startBrokenThings>>;
    beforeAll(async () => {
      broken = await startBrokenThings();
    });
    afterAll(() => broken.close());

    it("fails, naming each broken law with its shrunk request sequence and the seed that replays it", async () => {
      const run = await runCli(["check", broken.url, "--runs", "5", "--seed", "20261125"]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("✗ PUT twice = PUT once: the state after two PUTs differs from the state after one");
      expect(run.stdout).toMatch(/✗ a GET with its own ETag answers 304: GET with If-None-Match: "\d+" answered 200/);
      expect(run.stdout).toContain(
        "✗ a stale If-Match answers 412 and changes nothing: PUT with a stale If-Match answered 200",
      );
      expect(run.stdout).toContain("--- request sequence ---");
      expect(run.stdout).toMatch(/#\d PUT \/things\/t\d+ HTTP\/1\.1/);
      expect(run.stdout).toContain("✓ DELETE twice leaves it gone");
      expect(run.stdout).toContain("seed 20261125 (replay with --seed 20261125)");
    });
  });
});

describe("rest-webhooks check --webhook-consumer", () => {
  it("passes on a consumer verifying with the standardwebhooks package, fails on one that accepts anything", async () => {
    const secret = generateSecret();
    const receiver = await startReceiver();
    receiver.secret = secret;
    const careless = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => careless.listen(0, "127.0.0.1", resolve));
    try {
      const args = ["--secret", secret, "--runs", "5", "--seed", "20261125"];
      const good = await runCli(["check", "--webhook-consumer", receiver.url, ...args]);
      expect(good.stdout).toContain("✓ bad signatures are rejected (400)");
      expect(good.code).toBe(0);
      const url = `http://127.0.0.1:${(careless.address() as AddressInfo).port}/hooks`;
      const bad = await runCli(["check", "--webhook-consumer", url, ...args]);
      expect(bad.stdout).toContain("✗ bad signatures are rejected (400)");
      expect(bad.stdout).toContain("POST /hooks HTTP/1.1");
      expect(bad.code).toBe(1);
    } finally {
      await receiver.close();
      careless.close();
      careless.closeAllConnections();
    }
  });
});
