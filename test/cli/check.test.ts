/**
 * `rest-webhooks check`, spawned: the kit's resource laws pass on the example shop (memory storage, taken from its
 * own OpenAPI document), and fail, each named with its request sequence and the seed, on a broken server written
 * with bare node:http.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { generateSecret, secretFingerprint, verify } from "../../src/webhooks/signing/index";
import { type RunningShop, startReceiver, startShop } from "../examples/shop-harness";
import { freePort } from "../support/free-port";
import { startBrokenThings } from "./fixtures/broken-things-server";
import { startMountedThings } from "./fixtures/mounted-things-server";
import { runCli } from "./run-cli";

interface CheckReport {
  seed: number;
  laws: { resource: string; law: string; passed: boolean; reason?: string; requests?: string }[];
}

// The suites run side by side (describe.concurrent), each against servers of its own; tests that share a server's
// state stay in order (it.sequential). The --timeout suite runs alone: its laws that pass need answers within 0.2 s.
describe.concurrent("rest-webhooks check", () => {
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

    it.sequential("fails, naming each broken law with its shrunk request sequence and the seed that replays it", async () => {
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

    it.sequential("prints --header values only by fingerprint, as text and as JSON (regression: the bearer token in 14 lines)", async () => {
      const args = [
        "check",
        broken.url,
        "--header",
        "authorization: Bearer s3cr3t-T0KEN",
        "--header",
        "x-api-key: k3y-S3CRET",
        "--runs",
        "2",
        "--seed",
        "20261125",
      ];
      const [text, json] = await Promise.all([runCli(args), runCli([...args, "--json"])]);
      for (const run of [text, json]) {
        expect(run.code).toBe(1);
        expect(run.stdout).not.toContain("s3cr3t-T0KEN");
        expect(run.stdout).not.toContain("k3y-S3CRET");
      }
      expect(text.stdout).toContain(`authorization: Bearer … (fingerprint ${secretFingerprint("s3cr3t-T0KEN")})`);
      expect(text.stdout).toContain(`x-api-key: … (fingerprint ${secretFingerprint("k3y-S3CRET")})`);
      const report = JSON.parse(json.stdout) as CheckReport;
      expect(report.laws.some((law) => law.requests?.includes("x-api-key: … (fingerprint "))).toBe(true);
    });
  });

  describe("on an API mounted under /api", () => {
    let mounted: Awaited<ReturnType<typeof startMountedThings>>;
    beforeAll(async () => {
      mounted = await startMountedThings();
    });
    afterAll(() => mounted.close());

    it.sequential("follows each Location as the server wrote it, a parent's too (regression: GET /api/api/things/t1)", async () => {
      // Its POST declares "application/json; charset=utf-8", and --path leaves out /files, whose schema gives no
      // values: neither stops the run.
      const run = await runCli([
        "check",
        mounted.url,
        "--path",
        "/things",
        "--path",
        "/things/{id}/parts",
        "--runs",
        "2",
        "--seed",
        "7",
        "--json",
      ]);
      const report = JSON.parse(run.stdout) as CheckReport;
      expect(mounted.seen.filter((request) => request.includes("/api/api/"))).toEqual([]);
      const passed = (resource: string) =>
        report.laws.filter((law) => law.passed && law.resource === resource).map((law) => law.law);
      expect(passed("/things")).toEqual(
        expect.arrayContaining([
          "GET and HEAD change nothing",
          "POST twice creates two",
          "DELETE twice leaves it gone",
        ]),
      );
      expect(passed("/things/{id}/parts")).toEqual(expect.arrayContaining(["POST twice creates two"]));
    });

    it.sequential("refuses a request schema no values can be derived from: exit 2 naming its operation, nothing sent", async () => {
      const before = mounted.seen.length;
      const run = await runCli(["check", mounted.url, "--runs", "1", "--seed", "7"]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        'cannot derive request bodies for POST /files from its schema: cannot derive values for JSON Schema type "file"',
      );
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(mounted.seen.slice(before)).toEqual(["GET /api/openapi.json"]);
    });
  });
});

describe.concurrent("rest-webhooks check against a server that is down", () => {
  it('says why the document could not be read: ECONNREFUSED, exit 2 (regression: a bare "fetch failed")', async () => {
    const base = `http://127.0.0.1:${await freePort()}`;
    const run = await runCli(["check", base]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `cannot read the OpenAPI document: GET ${base}/openapi.json got no answer (ECONNREFUSED)`,
    );
  });
});

describe.concurrent("rest-webhooks check: a parent that cannot be created because the server is down", () => {
  it('names the POST and ECONNREFUSED (regression: a bare "fetch failed")', async () => {
    const base = `http://127.0.0.1:${await freePort()}`;
    const json = { "application/json": { schema: { type: "object", properties: { n: { type: "integer" } } } } };
    const document = {
      openapi: "3.1.0",
      paths: {
        "/users": { post: { requestBody: { content: json } } },
        "/users/{user_id}": { get: {} },
        "/users/{user_id}/orders": { post: { requestBody: { content: json } } },
        "/users/{user_id}/orders/{order_id}": { get: {} },
      },
    };
    const file = join(mkdtempSync(join(tmpdir(), "rest-webhooks-check-")), "openapi.json");
    writeFileSync(file, JSON.stringify(document));
    const run = await runCli(["check", base, "--openapi", file, "--path", "/users/{user_id}/orders", "--json"]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.laws).toEqual([
      {
        resource: "/users/{user_id}/orders",
        law: "the collection can be reached",
        passed: false,
        runs: 0,
        reason: "creating its parent, POST /users got no answer (ECONNREFUSED)",
      },
    ]);
  });
});

describe("rest-webhooks check --timeout (regression: a server that never answers held check for ever)", () => {
  let silent: Awaited<ReturnType<typeof startBrokenThings>>;
  let hanging: Awaited<ReturnType<typeof startBrokenThings>>;
  beforeAll(async () => {
    silent = await startBrokenThings({ silent: ["GET", "POST"] });
    hanging = await startBrokenThings({ silent: ["DELETE"], stalled: ["PUT"] });
  });
  afterAll(async () => {
    await silent.close();
    await hanging.close();
  });

  it("a document that never comes is exit 2 naming its URL and the time-out, JSON with --json", async () => {
    const run = await runCli(["check", silent.url, "--timeout", "0.2"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `cannot read the OpenAPI document: GET ${silent.url}/openapi.json: no answer within 0.2 s (--timeout 0.2)`,
    );
    const json = await runCli(["check", silent.url, "--timeout", "0.2", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "cli_usage" } });
  });

  it("a law whose request never gets its answer fails naming the time-out, the others run", async () => {
    const args = ["check", hanging.url, "--timeout", "0.2", "--runs", "3", "--seed", "20261125"];
    const run = await runCli([...args, "--json"]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    const law = (name: string) => report.laws.find((l) => l.law === name);
    // No answer at all, and headers with a body that never ends: both are the time-out, neither a counterexample.
    expect(law("DELETE twice leaves it gone")).toEqual({
      resource: "/things",
      law: "DELETE twice leaves it gone",
      passed: false,
      runs: 1,
      reason: expect.stringMatching(
        /^DELETE http:\/\/127\.0\.0\.1:\d+\/things\/t\d+: no answer within 0\.2 s \(--timeout 0\.2\)$/,
      ),
    });
    expect(law("PUT twice = PUT once")?.reason).toMatch(/^PUT http:\S+: no answer within 0\.2 s \(--timeout 0\.2\)$/);
    expect(law("POST twice creates two")?.passed).toBe(true);
    expect(law("GET and HEAD change nothing")?.passed).toBe(true);

    const text = await runCli(args);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("✗ DELETE twice leaves it gone: DELETE http://");
    expect(text.stdout).toMatch(/\d+ passed, \d+ failed · seed 20261125/);
  });

  it("--webhook-consumer: a consumer that never answers fails the law naming the time-out", async () => {
    const secret = generateSecret();
    const run = await runCli([
      "check",
      "--webhook-consumer",
      `${silent.url}/webhooks`,
      "--secret",
      secret,
      "--timeout",
      "0.2",
      "--json",
    ]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.laws[0]?.reason).toBe(
      `a correctly signed delivery got no answer (POST ${silent.url}/webhooks: no answer within 0.2 s (--timeout 0.2))`,
    );
  });

  it("refuses a --timeout that is no positive number of seconds: exit 2", async () => {
    const run = await runCli(["check", "http://127.0.0.1:9", "--timeout=0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--timeout must be a number of seconds > 0 and ≤ 2147483, got "0"');
  });
});

describe.concurrent("rest-webhooks check on a malformed request schema", () => {
  it("is misuse: exit 2 naming its operation, JSON with --json (regression: a stack trace)", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rest-webhooks-check-")), "openapi.json");
    const schema = { type: "string", pattern: "(" };
    const paths = {
      "/things": { post: { requestBody: { content: { "application/json": { schema } } } } },
      "/things/{id}": { get: { responses: { "200": { description: "ok" } } } },
    };
    writeFileSync(path, JSON.stringify({ openapi: "3.1.0", paths }));
    // Bodies are derived before the first request: nothing listens at this base URL, and nothing needs to.
    const run = await runCli(["check", "http://127.0.0.1:9", "--openapi", path, "--json"]);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "cannot derive request bodies for POST /things from its schema: the schema is malformed",
    );
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: "cli_usage" } });
  });
});

describe.concurrent("rest-webhooks check --openapi FILE saved with a UTF-8 byte order mark", () => {
  it('reads it, as send reads --data @file (RFC 8259 §8.1; regression: "not an OpenAPI JSON document")', async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rest-webhooks-check-")), "openapi.json");
    const schema = { type: "string", pattern: "(" };
    const paths = {
      "/things": { post: { requestBody: { content: { "application/json": { schema } } } } },
      "/things/{id}": { get: { responses: { "200": { description: "ok" } } } },
    };
    writeFileSync(path, `\uFEFF${JSON.stringify({ openapi: "3.1.0", paths })}`);
    // Read, its collection found: the malformed schema is the next misuse, before any request.
    const run = await runCli(["check", "http://127.0.0.1:9", "--openapi", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain("is not an OpenAPI JSON document");
    expect(run.stderr).toContain("cannot derive request bodies for POST /things");
  });
});

// Regression: only a lower-case http:// or https:// was fetched; HTTP://… was read as a file path that did not exist.
describe.concurrent("rest-webhooks check --openapi with the scheme in upper case (RFC 3986 §3.1)", () => {
  it("fetches it as a URL", async () => {
    const run = await runCli(["check", "http://127.0.0.1:9", "--openapi", "HTTP://127.0.0.1:9/openapi.json"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("GET HTTP://127.0.0.1:9/openapi.json got no answer");
  });
});

describe.concurrent("rest-webhooks check --webhook-consumer", () => {
  // Regression: a secret that cannot sign failed the law as "a correctly signed delivery got no answer" (exit 1)
  // without a request sent, and of two --secret values the second was ignored, silently.
  describe("--secret it cannot sign with is misuse: exit 2, nothing sent", () => {
    const cases: [string, string[], string][] = [
      ["not base64 after whsec_", ["--secret", "whsec_!!!"], "is not whsec_ followed by base64"],
      ["a second one", ["--secret", generateSecret(), "--secret", generateSecret()], "one --secret"],
    ];
    for (const [what, secrets, message] of cases) {
      it(what, async () => {
        const run = await runCli(["check", "--webhook-consumer", "http://127.0.0.1:9/hooks", ...secrets]);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(message);
        expect(run.stdout).toBe("");
      });
    }
  });

  it("passes on a consumer verifying with the standardwebhooks package, fails on one that accepts anything", async () => {
    const secret = generateSecret();
    const receiver = await startReceiver();
    receiver.secret = secret;
    const careless = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => careless.listen(0, "127.0.0.1", resolve));
    try {
      const args = ["--secret", secret, "--runs", "5", "--seed", "20261125"];
      const url = `http://127.0.0.1:${(careless.address() as AddressInfo).port}/hooks`;
      const [good, bad] = await Promise.all([
        runCli(["check", "--webhook-consumer", receiver.url, ...args]),
        runCli(["check", "--webhook-consumer", url, ...args]),
      ]);
      expect(good.stdout).toContain("✓ bad signatures are rejected (400)");
      expect(good.code).toBe(0);
      expect(bad.stdout).toContain("✗ bad signatures are rejected (400)");
      expect(bad.stdout).toContain("POST /hooks HTTP/1.1");
      expect(bad.code).toBe(1);
    } finally {
      await receiver.close();
      careless.close();
      careless.closeAllConnections();
    }
  });

  describe("against a consumer behind an API key", () => {
    const secret = generateSecret();
    const seen: { key: string | undefined; status: number }[] = [];
    // Refuses without x-api-key (401), else verifies with the library: 400 or 204.
    const guarded = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const key = req.headers["x-api-key"] as string | undefined;
        const verified = verify({ body: Buffer.concat(chunks), headers: req.headers, secrets: secret });
        const status = key !== "k1" ? 401 : verified.ok ? 204 : 400;
        seen.push({ key, status });
        res.writeHead(status, status === 204 ? {} : { "content-type": "application/problem+json" });
        res.end(status === 204 ? undefined : JSON.stringify({ title: "refused", status }));
      });
    });
    let url: string;
    beforeAll(async () => {
      await new Promise<void>((resolve) => guarded.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(guarded.address() as AddressInfo).port}/webhooks`;
    });
    afterAll(() => {
      guarded.close();
      guarded.closeAllConnections();
    });
    const args = ["--runs", "3", "--seed", "20261125"];

    it.sequential("sends --header with every request (regression: ignored)", async () => {
      seen.length = 0;
      const run = await runCli([
        "check",
        "--webhook-consumer",
        url,
        "--secret",
        secret,
        "--header",
        "x-api-key: k1",
        ...args,
      ]);
      expect(run.stdout).toContain("✓ bad signatures are rejected (400)");
      expect(run.code).toBe(0);
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.every((request) => request.key === "k1")).toBe(true);
      expect(seen[0]?.status).toBe(204); // the signed delivery, first
    });

    it.sequential("fails when the correctly signed delivery gets no 2xx (regression: a consumer refusing everything passed)", async () => {
      const [wrongSecret, noKey] = await Promise.all([
        runCli([
          "check",
          "--webhook-consumer",
          url,
          "--secret",
          generateSecret(),
          "--header",
          "x-api-key: k1",
          ...args,
        ]),
        runCli(["check", "--webhook-consumer", url, "--secret", secret, ...args, "--json"]),
      ]);
      expect(wrongSecret.code).toBe(1);
      expect(wrongSecret.stdout).toContain(
        "✗ bad signatures are rejected (400): a correctly signed delivery answered 400, expected 2xx",
      );
      expect(wrongSecret.stdout).not.toContain("k1");
      expect(noKey.code).toBe(1);
      const report = JSON.parse(noKey.stdout) as CheckReport;
      expect(report.laws).toMatchObject([
        { passed: false, reason: expect.stringContaining("answered 401, expected 2xx") },
      ]);
    });
  });
});
