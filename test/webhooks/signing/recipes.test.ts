import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { createServer } from "../../../src/node/index";
import { generateSecret, sign, verify } from "../../../src/webhooks/signing/index";

// The integration recipes of docs/webhooks-consumers.md, served on 127.0.0.1 and fed real deliveries.

const secret = generateSecret();
const body = JSON.stringify({ type: "invoice.paid", data: { id: "in_1", note: "naïve ☕" } }, null, 2);
const servers: Server[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Posts a freshly signed delivery; returns the status and the response text. */
async function deliver(url: string, headers: Record<string, string> = {}) {
  const signed = sign({ id: "msg_recipe", timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
  const response = await fetch(url, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...signed, ...headers },
  });
  return { status: response.status, text: await response.text() };
}

describe("docs recipes", () => {
  it("node:http: collect the chunks, verify the Buffer", async () => {
    const url = await listen(
      createHttpServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const result = verify({ body: Buffer.concat(chunks), headers: req.headers, secrets: secret });
        res.writeHead(result.ok ? 204 : result.error.status).end(result.ok ? undefined : result.error.code);
      }),
    );
    expect(await deliver(url)).toEqual({ status: 204, text: "" });
    expect(await deliver(url, { "webhook-id": "msg_other" })).toEqual({ status: 400, text: "no_matching_signature" });
  });

  it("rest-webhooks/node: request.body is already the raw bytes; failures leave as problem documents", async () => {
    const url = await listen(
      createServer((request) => {
        const result = verify({ body: request.body, headers: request.headers, secrets: secret });
        if (!result.ok) return result.error.toProblem().toResponse();
        return { status: 204, headers: {} };
      }),
    );
    expect((await deliver(url)).status).toBe(204);
    const rejected = await deliver(url, { "webhook-signature": "v1,AAAA" });
    expect(rejected.status).toBe(400);
    expect(JSON.parse(rejected.text)).toMatchObject({ code: "webhook_no_matching_signature" });
  });

  it("Express: express.raw verifies; express.json in front of it is body_not_raw, a re-stringified body a 400", async () => {
    const app = express();
    const respond = (req: express.Request, res: express.Response) => {
      const result = verify({ body: req.body, headers: req.headers, secrets: secret });
      res.status(result.ok ? 204 : result.error.status).send(result.ok ? undefined : result.error.code);
    };
    app.post("/raw", express.raw({ type: "*/*" }), respond);
    app.post("/parsed", express.json(), respond);
    app.post("/restringified", express.json(), (req, res) => {
      const result = verify({ body: JSON.stringify(req.body), headers: req.headers, secrets: secret });
      res.status(result.ok ? 204 : result.error.status).send(result.ok ? undefined : result.error.code);
    });
    const url = await listen(createHttpServer(app));
    expect((await deliver(`${url}/raw`)).status).toBe(204);
    expect(await deliver(`${url}/parsed`)).toEqual({ status: 500, text: "body_not_raw" });
    // The sender could have sent those bytes itself: no_matching_signature, whose message hints at the re-serialising.
    expect(await deliver(`${url}/restringified`)).toEqual({ status: 400, text: "no_matching_signature" });
  });

  it("Fetch: arrayBuffer() and the Headers object as they are", async () => {
    const signed = sign({ id: "msg_fetch", timestamp: 1_700_000_000, body, secrets: secret });
    const request = new Request("http://127.0.0.1/webhooks", { method: "POST", body, headers: signed });
    const result = verify({
      body: await request.arrayBuffer(),
      headers: request.headers,
      secrets: secret,
      now: () => 1_700_000_000_000,
    });
    expect(result).toMatchObject({ ok: true, id: "msg_fetch" });
  });
});
