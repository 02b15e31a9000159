/**
 * Hostile input against the example shop (issue 16), one suite taking a storage factory: every route and parameter
 * gets NUL, lone surrogates, invalid percent-encodings, JSON nested 5,000 and 50,000 deep, numbers like 1e400 and
 * 2^63, and 1 MB strings, from typed tables and from fast-check. The law: no answer is 5xx, and every 4xx is an
 * RFC 9457 problem document.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Reply, type RunningShop, startShop } from "./shop-harness";
import type { StorageUnderTest } from "./shop-suite";

/** One request of the suite, with what it tried (for the failure message). */
interface Probe {
  readonly method: string;
  readonly path: string;
  readonly token: "admin" | "api";
  /** Raw body text (JSON unless `contentType` says otherwise). */
  readonly body?: string;
  readonly contentType?: string;
}

const JSON_TYPE = "application/json";
const MERGE_PATCH = "application/merge-patch+json";
const FORM = "application/x-www-form-urlencoded";

/** Strings no store should see, or that test every bound: as JSON string literals (raw text). */
const HOSTILE_STRINGS: Readonly<Record<string, string>> = {
  nul: '"x\\u0000y"',
  "lone high surrogate": '"x\\ud800"',
  "lone low surrogate": '"\\udc00x"',
  "reversed pair": '"\\udc00\\ud800"',
  "1 MB": JSON.stringify("a".repeat(1_000_000)),
  "1 MB of escapes": JSON.stringify("\u00e9".repeat(200_000)).replaceAll("\u00e9", "\\u00e9"),
};

/** Numbers out of every store's range, as JSON number literals (raw text: 1e400 cannot be made by stringify). */
const HOSTILE_NUMBERS: Readonly<Record<string, string>> = {
  "1e400": "1e400",
  "-1e400": "-1e400",
  "2^63": "9223372036854775808",
  "-2^63-1": "-9223372036854775809",
  "1e20": "100000000000000000000",
  "2^53+1": "9007199254740993",
  "-0": "-0",
  "0.5": "0.5",
};

const nested = (depth: number, leaf = "1") => "[".repeat(depth) + leaf + "]".repeat(depth);
const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

/** Whole documents that are hostile wherever a body goes. */
const HOSTILE_DOCUMENTS: Readonly<Record<string, string>> = {
  "arrays 5,000 deep": nested(5_000),
  "arrays 50,000 deep": nested(50_000),
  "objects 5,000 deep": nestedObjects(5_000),
  "objects 50,000 deep": nestedObjects(50_000),
  "65 deep": nested(65),
  "NUL key": '{"\\u0000":1}',
  "surrogate key": '{"\\ud800":1}',
  "1e400": "1e400",
  "a lone surrogate": '"\\ud800"',
};

/** Path segments no record can be named by (as sent, percent-encoded). */
const HOSTILE_SEGMENTS: Readonly<Record<string, string>> = {
  "%00": "%00",
  "x%00": "x%00",
  "overlong NUL": "%C0%80",
  "encoded surrogate": "%ED%A0%80",
  "truncated UTF-8": "%C3",
  "bad escape": "%zz",
  "lone %": "%",
  "not UTF-8": "%FF%FE",
  "2^63": "9223372036854775808",
  "1e400": "1e400",
  "10,000 characters": "a".repeat(10_000),
};

/** Query values (as sent). */
const HOSTILE_QUERY_VALUES: Readonly<Record<string, string>> = {
  ...HOSTILE_SEGMENTS,
  "-1": "-1",
  NaN: "NaN",
  "1e20": "99999999999999999999",
  empty: "",
  "8 KB": "b".repeat(8_000),
};

/** Puts `raw` (JSON text) at the place of the `marker` string in the JSON text of `template`. */
function withRaw(template: unknown, marker: string, raw: string): string {
  return JSON.stringify(template).replace(JSON.stringify(marker), raw);
}

/** Every leaf of `value`, replaced in turn by a marker: one template per leaf, with the leaf's kind. */
function leafTemplates(value: unknown): Array<{ template: unknown; kind: "string" | "number"; at: string }> {
  const out: Array<{ template: unknown; kind: "string" | "number"; at: string }> = [];
  const walk = (node: unknown, replace: (leaf: unknown) => unknown, at: string) => {
    if (typeof node === "string" || typeof node === "number") {
      out.push({ template: replace(MARKER), kind: typeof node === "string" ? "string" : "number", at });
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        walk(node[i], (leaf) => replace(node.map((x, j) => (j === i ? leaf : x))), `${at}/${i}`);
      }
    } else if (node !== null && typeof node === "object") {
      for (const key of Object.keys(node)) {
        walk((node as Record<string, unknown>)[key], (leaf) => replace({ ...node, [key]: leaf }), `${at}/${key}`);
      }
    }
  };
  walk(value, (leaf) => leaf, "");
  return out;
}
const MARKER = "\u{1F9EA}marker";

/** Bodies for one route: every leaf replaced by every hostile value of its kind and by every hostile string, plus
 * the hostile documents whole and under a member. */
function hostileBodies(valid: unknown): Array<{ name: string; body: string }> {
  const bodies: Array<{ name: string; body: string }> = [];
  for (const { template, kind, at } of leafTemplates(valid)) {
    for (const [name, raw] of Object.entries(HOSTILE_STRINGS))
      bodies.push({ name: `${at} = ${name}`, body: withRaw(template, MARKER, raw) });
    if (kind === "number") {
      for (const [name, raw] of Object.entries(HOSTILE_NUMBERS))
        bodies.push({ name: `${at} = ${name}`, body: withRaw(template, MARKER, raw) });
    }
  }
  for (const [name, raw] of Object.entries(HOSTILE_DOCUMENTS)) {
    bodies.push({ name: `body = ${name}`, body: raw });
    if (valid !== null && typeof valid === "object" && !Array.isArray(valid)) {
      const key = Object.keys(valid)[0] as string;
      bodies.push({ name: `/${key} = ${name}`, body: withRaw({ ...valid, [key]: MARKER }, MARKER, raw) });
    }
  }
  return bodies;
}

/** Form bodies: each field's value replaced by hostile percent-encodings. */
function hostileForms(fields: Readonly<Record<string, string>>): Array<{ name: string; body: string }> {
  const bodies: Array<{ name: string; body: string }> = [];
  for (const field of Object.keys(fields)) {
    for (const [name, value] of Object.entries(HOSTILE_SEGMENTS)) {
      const pairs = Object.entries({ ...fields, [field]: value }).map(
        ([k, v]) => `${k}=${v === value && k === field ? v : encodeURIComponent(v)}`,
      );
      bodies.push({ name: `${field} = ${name}`, body: pairs.join("&") });
    }
  }
  bodies.push({ name: "name %00", body: `${Object.keys(fields)[0]}%00=1` });
  return bodies;
}

/** Checks the law on one answer: no 5xx, and a 4xx is a problem document whose status is the response's. */
function expectNoServerError(probe: Probe, reply: Reply, what: string): void {
  const label = `${probe.method} ${probe.path.slice(0, 120)} (${what}) answered ${reply.status}: ${reply.text.slice(0, 300)}`;
  expect(reply.status, label).toBeLessThan(500);
  if (reply.status >= 400) {
    expect(reply.headers.get("content-type"), label).toMatch(/^application\/problem\+json/);
    const problem = reply.json<{ status: number; code: string }>();
    expect(problem.status, label).toBe(reply.status);
    expect(typeof problem.code, label).toBe("string");
  }
}

/** Runs the hostile-input suite against a shop on the storage `open` returns. */
export function hostileInputSuite(open: () => Promise<StorageUnderTest>): void {
  let running: RunningShop | undefined;
  let underTest: StorageUnderTest | undefined;
  const ids = { user: "", order: "", endpoint: "", delivery: "" };
  const shop = (): RunningShop => {
    if (running === undefined) throw new Error("the shop is not running");
    return running;
  };
  const send = async (probe: Probe): Promise<Reply> => {
    const token = probe.token === "api" ? shop().config.apiKey : shop().adminToken;
    const headers: Record<string, string> = {};
    if (probe.body !== undefined) headers["content-type"] = probe.contentType ?? JSON_TYPE;
    return shop().api(probe.method, probe.path, {
      token,
      ...(probe.body === undefined ? {} : { body: probe.body }),
      headers,
    });
  };
  const check = async (probe: Probe, what: string): Promise<Reply> => {
    const reply = await send(probe);
    expectNoServerError(probe, reply, what);
    return reply;
  };

  beforeAll(async () => {
    underTest = await open();
    // A 2 MiB body limit, so 1 MB strings and 50,000-deep documents reach the JSON reader instead of the 413.
    running = await startShop(underTest.storage, { bodyLimit: 2 * 1024 * 1024 });
    const user = await shop().api("POST", "/users", { body: { name: "Target", tier: "basic" } });
    ids.user = user.json<{ id: string }>().id;
    const order = await shop().api("POST", `/users/${ids.user}/orders`, {
      body: { items: [{ sku: "TEA-1", quantity: 2, unit_price: 450 }] },
    });
    ids.order = order.json<{ id: string }>().id;
    const endpoint = await shop().api("POST", "/v1/webhook_endpoints", {
      token: shop().config.apiKey,
      body: { url: "http://127.0.0.1:9/hooks", enabled_events: ["user.*"] },
    });
    ids.endpoint = endpoint.json<{ id: string }>().id;
    // An event after the endpoint exists makes a delivery (the worker is off: it stays pending).
    await shop().api("POST", "/users", { body: { name: "Second", tier: "basic" } });
    const deliveries = await shop().api("GET", `/v1/webhook_endpoints/${ids.endpoint}/deliveries`, {
      token: shop().config.apiKey,
    });
    ids.delivery = (deliveries.json<{ data: { id: string }[] }>().data[0] as { id: string }).id;
  });
  afterAll(async () => {
    await running?.close();
    await underTest?.cleanup?.();
  });

  /** Every route with path parameters, as a function of its parameter values. */
  const pathRoutes = (): Array<{
    name: string;
    method: string;
    token: Probe["token"];
    path: (value: string, param: number) => string;
    params: number;
  }> => [
    { name: "users.read", method: "GET", token: "admin", params: 1, path: (v) => `/users/${v}` },
    { name: "users.replace", method: "PUT", token: "admin", params: 1, path: (v) => `/users/${v}` },
    { name: "orders.list", method: "GET", token: "admin", params: 1, path: (v) => `/users/${v}/orders` },
    { name: "orders.create", method: "POST", token: "admin", params: 1, path: (v) => `/users/${v}/orders` },
    ...(["GET", "PUT", "PATCH", "DELETE"] as const).map((method) => ({
      name: `orders.${method}`,
      method,
      token: "admin" as const,
      params: 2,
      path: (v: string, p: number) => (p === 0 ? `/users/${v}/orders/${ids.order}` : `/users/${ids.user}/orders/${v}`),
    })),
    ...(["GET", "POST", "DELETE"] as const).map((method) => ({
      name: `endpoints.${method}`,
      method,
      token: "api" as const,
      params: 1,
      path: (v: string) => `/v1/webhook_endpoints/${v}`,
    })),
    ...["rotate_secret", "replay", "test", "attempts", "deliveries"].map((tail) => ({
      name: `endpoints.${tail}`,
      method: tail === "attempts" || tail === "deliveries" ? "GET" : "POST",
      token: "api" as const,
      params: 1,
      path: (v: string) => `/v1/webhook_endpoints/${v}/${tail}`,
    })),
    ...[
      ["GET", ""],
      ["POST", "/retry"],
    ].map(([method, tail]) => ({
      name: `deliveries${tail}`,
      method: method as string,
      token: "api" as const,
      params: 2,
      path: (v: string, p: number) =>
        p === 0
          ? `/v1/webhook_endpoints/${v}/deliveries/${ids.delivery}${tail}`
          : `/v1/webhook_endpoints/${ids.endpoint}/deliveries/${v}${tail}`,
    })),
  ];

  describe("path parameters: no 5xx, a problem for every 4xx", () => {
    it("answers every route and parameter with every hostile segment", async () => {
      for (const route of pathRoutes()) {
        for (let param = 0; param < route.params; param++) {
          for (const [name, segment] of Object.entries(HOSTILE_SEGMENTS)) {
            const probe: Probe = { method: route.method, path: route.path(segment, param), token: route.token };
            const reply = await check(
              route.method === "POST" || route.method === "PUT" || route.method === "PATCH"
                ? { ...probe, body: "{}", contentType: route.method === "PATCH" ? MERGE_PATCH : JSON_TYPE }
                : probe,
              `${route.name} param ${param} = ${name}`,
            );
            // A NUL or bytes that are not UTF-8 never reach a handler or a store.
            if (/%00|%C0%80|%ED|%C3$|%zz|^%$|%FF/.test(segment))
              expect(reply.status, `${route.name} ${name}`).toBe(400);
          }
        }
      }
    });

    it("never finds a record by an id with trailing characters (…_0%00 is not …_0)", async () => {
      const api = { token: shop().config.apiKey };
      const base = `/v1/webhook_endpoints/${ids.endpoint}/deliveries`;
      expect((await shop().api("GET", `${base}/${ids.delivery}`, api)).status).toBe(200);
      for (const suffix of ["%00", "x", "%20", "0", "_0"]) {
        const reply = await shop().api("GET", `${base}/${ids.delivery}${suffix}`, api);
        expect([400, 404], suffix).toContain(reply.status);
      }
      expect((await shop().api("GET", `/v1/webhook_endpoints/${ids.endpoint}x`, api)).status).toBe(404);
      expect((await shop().api("GET", `/users/${ids.user}x`)).status).toBe(404);
      expect((await shop().api("GET", `/users/${ids.user}/orders/${ids.order}x`)).status).toBe(404);
      expect((await shop().api("GET", `/users/${ids.user}%00`)).json()).toMatchObject({ code: "malformed_path" });
    });

    it("answers arbitrary percent-encoded bytes in a path parameter without a 5xx (fast-check)", async () => {
      const segment = fc
        .uint8Array({ minLength: 1, maxLength: 12 })
        .map((bytes) => Array.from(bytes, (b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join(""));
      await fc.assert(
        fc.asyncProperty(segment, fc.integer({ min: 0, max: 1 }), async (value, which) => {
          const path = which === 0 ? `/users/${value}` : `/v1/webhook_endpoints/${ids.endpoint}/deliveries/${value}`;
          await check({ method: "GET", path, token: which === 0 ? "admin" : "api" }, "fast-check segment");
        }),
        { numRuns: 60 },
      );
    });
  });

  describe("query parameters: no 5xx, a problem for every 4xx", () => {
    const lists = (): Array<{ path: string; token: Probe["token"]; params: string[] }> => [
      { path: `/users/${ids.user}/orders`, token: "admin", params: ["status", "limit", "cursor"] },
      { path: "/orders", token: "admin", params: ["status", "limit", "cursor"] },
      { path: "/v1/webhook_endpoints", token: "api", params: ["limit", "starting_after"] },
      { path: `/v1/webhook_endpoints/${ids.endpoint}/deliveries`, token: "api", params: ["limit", "status", "since"] },
      {
        path: `/v1/webhook_endpoints/${ids.endpoint}/attempts`,
        token: "api",
        params: ["limit", "delivery_id", "starting_after"],
      },
    ];

    it("answers every list and parameter with every hostile value, and an unknown or hostile name", async () => {
      for (const list of lists()) {
        for (const param of [...list.params, "%00", "x%ED%A0%80"]) {
          for (const [name, value] of Object.entries(HOSTILE_QUERY_VALUES)) {
            const reply = await check(
              { method: "GET", path: `${list.path}?${param}=${value}`, token: list.token },
              `${param} = ${name}`,
            );
            if (/%00|%C0%80|%ED|%zz|%FF/.test(value)) expect(reply.status, `${list.path} ${param}=${name}`).toBe(400);
            // Numeric parameters outside the safe integer range (or any store's) are refused.
            if ((param === "limit" || param === "since") && /^(1e20|2\^63|1e400)$/.test(name)) {
              expect(reply.status, `${param}=${name}`).toBe(400);
            }
          }
        }
      }
      const replay = `/v1/webhook_endpoints/${ids.endpoint}/replay`;
      for (const [name, value] of Object.entries(HOSTILE_QUERY_VALUES)) {
        await check({ method: "POST", path: `${replay}?since=${value}`, token: "api" }, `replay since = ${name}`);
      }
    });

    it("names the parameter of a NUL or a byte that is not UTF-8 (400 malformed_query)", async () => {
      const reply = await shop().api("GET", `/v1/webhook_endpoints?starting_after=%00`, {
        token: shop().config.apiKey,
      });
      expect(reply.status).toBe(400);
      expect(reply.json()).toMatchObject({ code: "malformed_query", parameter: "starting_after" });
      const bytes = await shop().api("GET", `/orders?cursor=%FF`);
      expect(bytes.json()).toMatchObject({ code: "malformed_query", parameter: "cursor" });
    });
  });

  describe("bodies: no 5xx, a problem for every 4xx", () => {
    const bodyRoutes = (): Array<{
      method: string;
      path: string;
      token: Probe["token"];
      valid: unknown;
      contentType: string;
    }> => [
      { method: "POST", path: "/users", token: "admin", valid: { name: "N", tier: "basic" }, contentType: JSON_TYPE },
      {
        method: "PUT",
        path: `/users/${ids.user}`,
        token: "admin",
        valid: { name: "N", tier: "basic" },
        contentType: JSON_TYPE,
      },
      {
        method: "POST",
        path: `/users/${ids.user}/orders`,
        token: "admin",
        valid: { items: [{ sku: "S", quantity: 1, unit_price: 1 }] },
        contentType: JSON_TYPE,
      },
      {
        method: "PUT",
        path: `/users/${ids.user}/orders/${ids.order}`,
        token: "admin",
        valid: { status: "pending", items: [{ sku: "S", quantity: 1, unit_price: 1 }] },
        contentType: JSON_TYPE,
      },
      {
        method: "PATCH",
        path: `/users/${ids.user}/orders/${ids.order}`,
        token: "admin",
        valid: { items: [{ sku: "S", quantity: 1, unit_price: 1 }], note: { a: "b" } },
        contentType: MERGE_PATCH,
      },
      {
        method: "POST",
        path: "/v1/webhook_endpoints",
        token: "api",
        valid: {
          url: "http://127.0.0.1:9/h",
          enabled_events: ["user.*"],
          description: "d",
          metadata: { k: "v" },
          rate_limit: 5,
        },
        contentType: JSON_TYPE,
      },
      {
        method: "POST",
        path: `/v1/webhook_endpoints/${ids.endpoint}`,
        token: "api",
        valid: { description: "d", metadata: { k: "v" }, rate_limit: 5 },
        contentType: JSON_TYPE,
      },
      {
        method: "POST",
        path: `/v1/webhook_endpoints/${ids.endpoint}/replay`,
        token: "api",
        valid: { since: 1 },
        contentType: JSON_TYPE,
      },
    ];

    it("answers every body route with hostile strings, numbers and documents at every leaf", async () => {
      for (const route of bodyRoutes()) {
        for (const { name, body } of hostileBodies(route.valid)) {
          const reply = await check(
            { method: route.method, path: route.path, token: route.token, body, contentType: route.contentType },
            name,
          );
          if (/nul|surrogate|reversed/.test(name))
            expect(reply.status, `${route.method} ${route.path} ${name}`).toBe(422);
          if (/deep/.test(name))
            expect(reply.json(), `${route.method} ${route.path} ${name}`).toMatchObject({ code: "json_too_deep" });
        }
      }
    });

    it("answers form bodies with hostile percent-encodings", async () => {
      const forms: Array<{ path: string; fields: Record<string, string> }> = [
        {
          path: "/v1/webhook_endpoints",
          fields: {
            url: "http://127.0.0.1:9/h",
            "enabled_events[]": "user.*",
            description: "d",
            "metadata[k]": "v",
            rate_limit: "5",
          },
        },
        { path: `/v1/webhook_endpoints/${ids.endpoint}`, fields: { description: "d", rate_limit: "5" } },
        { path: `/v1/webhook_endpoints/${ids.endpoint}/replay`, fields: { since: "1" } },
      ];
      for (const form of forms) {
        for (const { name, body } of hostileForms(form.fields)) {
          await check({ method: "POST", path: form.path, token: "api", body, contentType: FORM }, `form ${name}`);
        }
      }
    });

    it("names the string it refuses with a JSON pointer, and keeps the stored user unchanged under its ETag", async () => {
      const before = await shop().api("GET", `/users/${ids.user}`);
      const surrogate = await shop().api("PUT", `/users/${ids.user}`, { body: '{"name":"x\\ud800","tier":"basic"}' });
      expect(surrogate.status).toBe(422);
      expect(surrogate.json()).toMatchObject({
        code: "invalid_string",
        errors: [{ pointer: "/name", in: "body", code: "lone_surrogate" }],
      });
      const nul = await shop().api("POST", `/users/${ids.user}/orders`, {
        body: '{"items":[{"sku":"A\\u0000","quantity":1,"unit_price":1}]}',
      });
      expect(nul.json()).toMatchObject({
        code: "invalid_string",
        errors: [{ pointer: "/items/0/sku", code: "nul_character" }],
      });
      const created = await shop().api("POST", "/users", { body: '{"name":"x\\ud800","tier":"basic"}' });
      expect(created.status).toBe(422);
      const after = await shop().api("GET", `/users/${ids.user}`);
      expect(after.text).toBe(before.text);
      expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    });

    it("stores any name it accepts exactly as sent (fast-check, UTF-16 code units including surrogates and NUL)", async () => {
      const unit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
      await fc.assert(
        fc.asyncProperty(fc.string({ unit, minLength: 1, maxLength: 12 }), async (name) => {
          const probe: Probe = {
            method: "POST",
            path: "/users",
            token: "admin",
            body: JSON.stringify({ name, tier: "basic" }),
          };
          const reply = await check(probe, "fast-check name");
          if (reply.status !== 201) return;
          const read = await shop().api("GET", reply.headers.get("location") as string);
          expect(read.json<{ name: string }>().name).toBe(name.trim());
        }),
        { numRuns: 60 },
      );
    });

    it("answers merge patches of arbitrary JSON without a 5xx (fast-check)", async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (patch) => {
          await check(
            {
              method: "PATCH",
              path: `/users/${ids.user}/orders/${ids.order}`,
              token: "admin",
              body: JSON.stringify(patch),
              contentType: MERGE_PATCH,
            },
            "fast-check patch",
          );
        }),
        { numRuns: 60 },
      );
    });
  });
}
