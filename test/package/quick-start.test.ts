import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { app } from "../../examples/quick-start";
import { adapt } from "../../src/fetch/index";
import { fromHandler, type ResourceSpec, resourceLaws } from "../../src/testing/index";

const root = new URL("../..", import.meta.url);
const serve = adapt(app);
const send = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
  serve(
    new Request(`http://quick.start${path}`, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

describe("README quick start", () => {
  it("is the code of examples/quick-start.ts, word for word", () => {
    const readme = readFileSync(new URL("README.md", root), "utf8");
    const source = readFileSync(new URL("examples/quick-start.ts", root), "utf8").trim();
    expect(readme).toContain(source);
  });

  it("does what the README says: 201 + Location, 304, 412 before the handler, idempotent POST", async () => {
    const created = await send("POST", "/notes", { "idempotency-key": '"k-1"' }, { text: "hello" });
    expect(created.status).toBe(201);
    const location = created.headers.get("location") as string;
    expect(location).toMatch(/^\/notes\//);
    const replay = await send("POST", "/notes", { "idempotency-key": '"k-1"' }, { text: "hello" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(await created.text());

    const read = await send("GET", location);
    const etag = read.headers.get("etag") as string;
    expect((await send("GET", location, { "if-none-match": etag })).status).toBe(304);

    expect((await send("PUT", location, { "if-match": etag }, { text: "v2" })).status).toBe(200);
    const stale = await send("PUT", location, { "if-match": etag }, { text: "v3" });
    expect(stale.status).toBe(412);
    expect(((await (await send("GET", location)).json()) as { text: string }).text).toBe("v2");
  });

  // The quick start obeys the library's own laws: PUT twice = PUT once, 304 for its own ETag, 412 for a stale one…
  const notes: ResourceSpec = {
    collection: "/notes",
    createBody: fc.record({ text: fc.string({ minLength: 1, maxLength: 20 }) }),
    supports: { list: true, put: true, patch: false, delete: false, idempotencyKey: true },
  };
  for (const law of resourceLaws(fromHandler(app), notes)) {
    it(`passes resourceLaws: ${law.name}`, () => fc.assert(law.property, { numRuns: 25 }));
  }
});
