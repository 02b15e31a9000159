/**
 * The consumer handler answers alike on node:http and on Fetch (STYLE §3: the adapters are thin translators to one
 * core): one table of deliveries, good and hostile, each sent through both adapters, each answer — status, problem
 * code, the headers that say what to change — and what was stored compared with the table's.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { adapt as adaptFetch } from "../../../src/fetch/index";
import type { Handler } from "../../../src/http/index";
import { createServer } from "../../../src/node/index";
import { createWebhookConsumer, type Inbox, type WebhookConsumerOptions } from "../../../src/webhooks/consumer/index";
import { createMemoryInbox } from "../../../src/webhooks/consumer/memory/index";
import { generateSecret, sign } from "../../../src/webhooks/signing/index";

const NOW = 1_700_000_000;
const now = () => NOW * 1000;
const secret = generateSecret();
const ADAPTER_LIMIT = 4096;
const CONSUMER_LIMIT = 2048;
const encoder = new TextEncoder();

/** A delivery as it goes on the wire: field lines in order (a name may repeat), the body, whether it is chunked. */
interface Delivery {
  method?: string;
  fields: [name: string, value: string][];
  body?: string | Uint8Array;
  /** Sent in two chunks without Content-Length (node: Transfer-Encoding: chunked; Fetch: a stream). */
  chunked?: boolean;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  /** The problem document's `code`, when the answer is one. */
  code: string | undefined;
}

interface Case {
  name: string;
  delivery: Delivery;
  status: number;
  code?: string;
  /** Response headers the answer must carry (lower-case names). */
  headers?: Record<string, string>;
  options?: Partial<WebhookConsumerOptions>;
}

function signed(body: string | Uint8Array, id = "msg_1", timestamp = NOW): Record<string, string> {
  return sign({ id, timestamp, body, secrets: secret });
}

/** A signed JSON delivery; `change` edits its field lines (values `undefined` drop the field). */
function delivery(
  body: string | Uint8Array = '{"type":"order.shipped"}',
  change: Record<string, string | undefined> = {},
  extra: Partial<Delivery> = {},
): Delivery {
  const fields = Object.entries({ "content-type": "application/json", ...signed(body), ...change }).filter(
    (field): field is [string, string] => field[1] !== undefined,
  );
  return { method: "POST", fields, body, ...extra };
}

const valid = signed('{"type":"order.shipped"}')["webhook-signature"] as string;
const other = sign({ id: "msg_1", timestamp: NOW, body: "{}", secrets: generateSecret() })["webhook-signature"];
const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode('{"type":"order.shipped"}')]);
const notUtf8 = new Uint8Array([...encoder.encode('{"type":"order.'), 0xff, 0xfe, ...encoder.encode('"}')]);
const gzipped = gzipSync('{"type":"order.shipped"}');
const deep = `${"[".repeat(65)}${"]".repeat(65)}`;
const bogusV1 = (i: number) => `v1,${String(i).padStart(2, "0")}${"A".repeat(41)}=`;
const failing: Pick<Inbox, "add"> = { add: () => Promise.reject(new Error("down")) };

const PROBLEM = { "content-type": "application/problem+json" };

const cases: Case[] = [
  { name: "a valid delivery", delivery: delivery(), status: 202 },
  { name: "a valid delivery in two chunks", delivery: delivery(undefined, {}, { chunked: true }), status: 202 },
  {
    name: "field names in mixed case",
    delivery: {
      ...delivery(),
      fields: delivery().fields.map(([name, value]) => [name.toUpperCase(), value]),
    },
    status: 202,
  },
  {
    name: "webhook-signature in two field lines, the valid one second (RFC 9110 §5.3)",
    delivery: {
      ...delivery(),
      fields: [...delivery(undefined, { "webhook-signature": other }).fields, ["webhook-signature", valid]],
    },
    status: 202,
  },
  {
    name: "an 11 KB webhook-signature: 1,500 unknown-version members, then the valid one",
    delivery: delivery(undefined, {
      "webhook-signature": [...Array.from({ length: 1500 }, (_, i) => `v9,${i}`), valid].join(" "),
    }),
    status: 202,
  },
  {
    name: "a webhook-id with obs-text (é, one byte on the wire, signed as UTF-8 by every reference library)",
    delivery: delivery(undefined, signed('{"type":"order.shipped"}', "msg_\u00e9")),
    status: 202,
  },
  {
    name: "a webhook-id of 1024 bytes",
    delivery: delivery(undefined, signed('{"type":"order.shipped"}', "m".repeat(1024))),
    status: 202,
  },
  {
    name: "a webhook-id of 1025 bytes",
    delivery: delivery(undefined, signed('{"type":"order.shipped"}', "m".repeat(1025))),
    status: 400,
    code: "invalid_event",
  },
  { name: "a body with a UTF-8 byte order mark", delivery: delivery(bom, {}), status: 202 },
  { name: "a body that is not UTF-8, verified as bytes", delivery: delivery(notUtf8, {}), status: 202 },
  {
    name: "a timestamp exactly 300 s old (the bound is inclusive)",
    delivery: delivery(undefined, signed('{"type":"order.shipped"}', "msg_1", NOW - 300)),
    status: 202,
  },
  {
    name: "a wrong signature",
    delivery: delivery(undefined, { "webhook-signature": other }),
    status: 400,
    code: "webhook_no_matching_signature",
  },
  {
    name: "a signature of the wrong length",
    delivery: delivery(undefined, { "webhook-signature": "v1,AAAA" }),
    status: 400,
    code: "webhook_no_matching_signature",
  },
  {
    name: "eleven distinct v1 signatures",
    delivery: delivery(undefined, {
      "webhook-signature": [...Array.from({ length: 11 }, (_, i) => bogusV1(i)), valid].join(" "),
    }),
    status: 400,
    code: "webhook_malformed_header",
  },
  {
    name: "no webhook-id",
    delivery: delivery(undefined, { "webhook-id": undefined }),
    status: 400,
    code: "webhook_missing_header",
  },
  {
    name: "an empty webhook-id",
    delivery: delivery(undefined, { "webhook-id": "" }),
    status: 400,
    code: "webhook_malformed_header",
  },
  ...["+1700000000", "01700000000", "0x10", "1e10", "1700000000.0", "-1", "9".repeat(400)].map(
    (timestamp): Case => ({
      name: `the timestamp ${timestamp.length > 20 ? "9… (400 digits)" : timestamp}`,
      delivery: delivery(undefined, { "webhook-timestamp": timestamp }),
      status: 400,
      code: "webhook_malformed_header",
    }),
  ),
  {
    name: "a timestamp 301 s old",
    delivery: delivery(undefined, signed('{"type":"order.shipped"}', "msg_1", NOW - 301)),
    status: 400,
    code: "webhook_timestamp_too_old",
  },
  {
    name: "a timestamp in milliseconds",
    delivery: delivery(undefined, { "webhook-timestamp": String(NOW * 1000) }),
    status: 400,
    code: "webhook_timestamp_in_future",
  },
  {
    name: "a verified body that is not JSON",
    delivery: delivery("not json", {}),
    status: 400,
    code: "webhook_payload_invalid",
  },
  {
    name: "a verified body nested deeper than 64",
    delivery: delivery(deep, {}),
    status: 400,
    code: "json_too_deep",
  },
  {
    name: "a verified event type holding a NUL",
    delivery: delivery('{"type":"a\\u0000"}', {}),
    status: 400,
    code: "invalid_event",
  },
  {
    name: "a gzip body",
    delivery: delivery(gzipped, { "content-encoding": "gzip" }),
    status: 415,
    code: "unsupported_content_coding",
    headers: { "accept-encoding": "identity" },
  },
  {
    name: "GET",
    delivery: { ...delivery(), method: "GET", body: undefined },
    status: 405,
    code: "method_not_allowed",
    headers: { allow: "POST" },
  },
  {
    name: "a body over the consumer's bodyLimit",
    delivery: delivery(`{"type":"a","pad":"${"x".repeat(CONSUMER_LIMIT)}"}`, {}),
    status: 413,
    code: "body_too_large",
  },
  {
    name: "a chunked body over the adapter's bodyLimit",
    delivery: delivery(`{"type":"a","pad":"${"x".repeat(ADAPTER_LIMIT)}"}`, {}, { chunked: true }),
    status: 413,
    code: "body_too_large",
  },
  {
    name: "a secret not set yet",
    delivery: delivery(),
    options: { secrets: "" },
    status: 500,
    code: "webhook_secret_invalid",
  },
  {
    name: "an inbox that cannot store",
    delivery: delivery(),
    options: { inbox: failing },
    status: 503,
    code: "inbox_unavailable",
    headers: { "retry-after": "5" },
  },
];

/** A consumer over a fresh memory inbox, counting the events it stored. */
function consumer(options: Partial<WebhookConsumerOptions> = {}): { handler: Handler; stored: () => number } {
  const inbox = createMemoryInbox();
  let stored = 0;
  const counting: Pick<Inbox, "add"> = {
    add: async (event, source) => {
      const added = await inbox.add(event, source);
      if (!added.duplicate) stored++;
      return added;
    },
  };
  const handler = createWebhookConsumer({
    inbox: counting,
    secrets: secret,
    now,
    bodyLimit: CONSUMER_LIMIT,
    onError: () => {},
    ...options,
  });
  return { handler, stored: () => stored };
}

function codeOf(headers: Record<string, string>, body: Uint8Array): string | undefined {
  if (headers["content-type"] !== "application/problem+json") return undefined;
  return (JSON.parse(new TextDecoder().decode(body)) as { code?: string }).code;
}

const bytesOf = (body: string | Uint8Array | undefined) =>
  body === undefined ? undefined : typeof body === "string" ? encoder.encode(body) : body;

async function viaNode(handler: Handler, sent: Delivery): Promise<Answer> {
  const server = createServer(handler, { bodyLimit: ADAPTER_LIMIT, onError: () => {} });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await exchange((server.address() as AddressInfo).port, sent);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

async function exchange(port: number, sent: Delivery): Promise<Answer> {
  const body = bytesOf(sent.body);
  // Field lines as a flat [name, value, …] list: node:http sends a repeated name as lines of its own (and no Host of
  // its own then).
  const fields = ["host", `127.0.0.1:${port}`, ...sent.fields.flat()];
  if (sent.chunked) fields.push("transfer-encoding", "chunked");
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method: sent.method, path: "/webhooks", headers: fields });
    req.on("response", resolve);
    // A write error once the answer is in (the server closed after a 413) settles nothing: it came first.
    req.on("error", reject);
    if (body !== undefined && sent.chunked) {
      req.write(body.subarray(0, 10));
      req.end(body.subarray(10));
    } else req.end(body);
  });
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) if (typeof value === "string") headers[name] = value;
  return { status: res.statusCode ?? 0, headers, code: codeOf(headers, Buffer.concat(chunks)) };
}

async function viaFetch(handler: Handler, sent: Delivery): Promise<Answer> {
  const body = bytesOf(sent.body);
  const stream =
    body === undefined || !sent.chunked
      ? body
      : new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(body.subarray(0, 10));
            controller.enqueue(body.subarray(10));
            controller.close();
          },
        });
  const request = new Request("http://127.0.0.1/webhooks", {
    method: sent.method,
    headers: new Headers(sent.fields),
    body: stream,
    duplex: "half",
  } as RequestInit);
  const response = await adaptFetch(handler, { bodyLimit: ADAPTER_LIMIT, onError: () => {} })(request);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, code: codeOf(headers, new Uint8Array(await response.arrayBuffer())) };
}

describe("createWebhookConsumer answers alike on node:http and Fetch", () => {
  describe.each([
    ["node:http", viaNode],
    ["Fetch", viaFetch],
  ] as const)("%s", (_adapter, send) => {
    it.each(cases.map((entry) => [entry.name, entry] as const))("%s", async (_name, entry) => {
      const { handler, stored } = consumer(entry.options);
      const answer = await send(handler, entry.delivery);
      expect({ status: answer.status, code: answer.code, stored: stored() }).toEqual({
        status: entry.status,
        code: entry.code,
        stored: entry.status === 202 ? 1 : 0,
      });
      // A refusal is an RFC 9457 problem document, and says what to change in the headers it names.
      if (entry.status >= 400) expect(answer.headers).toMatchObject({ ...PROBLEM, ...entry.headers });
    });
  });
});
