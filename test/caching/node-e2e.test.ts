/**
 * End to end over node:http on 127.0.0.1: the raw bytes on the wire, not just the HttpResponse.
 */
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "../../src/caching/index";
import { createServer } from "../../src/node/index";
import { documentResource } from "./document-resource";

const BODY = '{"id":1,"title":"Hello"}';
const resource = documentResource({ "/docs/1": { body: BODY, modified: Date.parse("2024-05-01T12:00:00Z") } });
const server = createServer(conditional({ validators: resource.validators })(resource.handler), {
  onError: () => undefined,
});
let port = 0;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function send(method: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/docs/1", method, headers, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("conditional() over node:http", () => {
  it("GET with If-None-Match → 304 with no body", async () => {
    const first = await send("GET");
    expect(first.status).toBe(200);
    expect(first.body.toString()).toBe(BODY);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);

    const second = await send("GET", { "if-none-match": etag });
    expect(second.status).toBe(304);
    expect(second.body.byteLength).toBe(0);
    expect(second.headers.etag).toBe(etag);
    expect(second.headers["cache-control"]).toBe("no-cache");
    expect(second.headers["content-type"]).toBeUndefined();
  });

  it("PUT with a stale If-Match → 412 and the resource unchanged", async () => {
    const before = await send("GET");
    const stale = await send(
      "PUT",
      { "if-match": '"not-the-current-tag"', "content-type": "application/json" },
      '{"id":1,"title":"Lost update"}',
    );
    expect(stale.status).toBe(412);
    expect(stale.headers["content-type"]).toBe("application/problem+json");
    expect(JSON.parse(stale.body.toString()).code).toBe("precondition_failed");

    const after = await send("GET");
    expect(after.body.toString()).toBe(BODY);
    expect(after.headers.etag).toBe(before.headers.etag);
  });

  it("PUT with the current If-Match succeeds and changes the ETag", async () => {
    const before = await send("GET");
    const put = await send("PUT", { "if-match": String(before.headers.etag) }, '{"id":1,"title":"Edited"}');
    expect(put.status).toBe(204);
    const after = await send("GET");
    expect(after.body.toString()).toBe('{"id":1,"title":"Edited"}');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    // The old tag no longer validates the cached copy.
    expect((await send("GET", { "if-none-match": String(before.headers.etag) })).status).toBe(200);
  });
});
