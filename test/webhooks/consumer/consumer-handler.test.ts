import { createHash } from "node:crypto";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { adapt as adaptFetch } from "../../../src/fetch/index";
import { bodyBytes, type Handler, type HttpRequest, takeAfterSend } from "../../../src/http/index";
import { isThenable } from "../../../src/http/thenable";
import {
  createWebhookConsumer,
  createWebhookProcessor,
  type Inbox,
  type InboxEvent,
  InboxEventTooLargeError,
  InboxFullError,
  type WebhookConsumerOptions,
} from "../../../src/webhooks/consumer/index";
import { createMemoryInbox, type MemoryInbox } from "../../../src/webhooks/consumer/memory/index";
import { startWebhookProcessor } from "../../../src/webhooks/consumer/node/index";
import { createPostgresInbox } from "../../../src/webhooks/consumer/postgres/index";
import { refusalLog } from "../../../src/webhooks/consumer/refusal-log";
import {
  generateSecret,
  generateSigningKeyPair,
  github,
  shopify,
  sign,
  signWith,
  slack,
  stripe,
} from "../../../src/webhooks/signing/index";
import { latch, listen, nowSeconds, postFromThread } from "./support";

const secret = generateSecret();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function serve(options: Partial<WebhookConsumerOptions> & { inbox?: Pick<Inbox, "add"> } = {}) {
  const inbox = createMemoryInbox();
  const handler = createWebhookConsumer({ inbox, secrets: secret, onError: () => {}, ...options });
  const server = await listen(handler, { onError: () => {} });
  closers.push(server.close);
  return { inbox, url: server.url };
}

function delivery(id: string, payload: unknown = { type: "order.shipped", data: { order: id } }) {
  const body = JSON.stringify(payload);
  return {
    body,
    headers: { "content-type": "application/json", ...sign({ id, timestamp: nowSeconds(), body, secrets: secret }) },
  };
}

function post(url: string, d: { body: string; headers: Record<string, string> }): Promise<Response> {
  return fetch(url, { method: "POST", body: d.body, headers: d.headers });
}

/** A memory inbox behind an `add` that fails until `recover()` is called. */
function flakyInbox() {
  const inbox = createMemoryInbox();
  let down = true;
  const flaky: Pick<Inbox, "add"> = {
    add: async (event) => {
      if (down) throw new Error("unavailable");
      return inbox.add(event);
    },
  };
  return { inbox, flaky, recover: () => (down = false) };
}

describe("createWebhookConsumer: an event no inbox can keep", () => {
  // (A NUL cannot travel in a header, so the id case needs an id read from the payload, as Stripe's and Slack's are.)
  it("answers 400 invalid_event for a NUL or a lone surrogate in the event's type, and stores nothing", async () => {
    const inbox = createMemoryInbox();
    const handler = adaptFetch(createWebhookConsumer({ inbox, secrets: secret }));
    for (const [id, payload] of [
      ["msg_ok", { type: "order.\ud800", data: {} }],
      ["msg_ok2", { type: "order.\u0000", data: {} }],
    ] as const) {
      const d = delivery(id, payload);
      const response = await handler(
        new Request("http://consumer/hooks", { method: "POST", body: d.body, headers: d.headers }),
      );
      expect(response.status, id).toBe(400);
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code).toBe("invalid_event");
      expect(problem.detail).toMatch(/^The event's type holds a (NUL|lone surrogate)/);
    }
    expect(inbox.size).toBe(0);
  });

  it("names the id when the id read from the payload holds a NUL", async () => {
    const inbox = createMemoryInbox();
    const eventId = ({ payload }: { payload: unknown }) => (payload as { id?: string }).id;
    const handler = adaptFetch(createWebhookConsumer({ inbox, secrets: secret, eventId }));
    const d = delivery("msg_ok3", { id: "evt_\u0000", type: "order.created", data: {} });
    const response = await handler(
      new Request("http://consumer/hooks", { method: "POST", body: d.body, headers: d.headers }),
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toBe(
      "The event's id holds a NUL, which no inbox can store.",
    );
    expect(inbox.size).toBe(0);
  });

  // Regression: such an id or payload made the PostgreSQL inbox's batch fail (SQLSTATE 54000 / 54001) with a 503, so
  // its sender retried forever while the memory inbox stored it.
  it("answers 400 invalid_event for an id over 1024 UTF-8 bytes, before any inbox write", async () => {
    const inbox = createMemoryInbox();
    const eventId = ({ payload }: { payload: unknown }) => (payload as { id?: string }).id;
    const handler = adaptFetch(createWebhookConsumer({ inbox, secrets: secret, eventId }));
    const cases = [
      ["x".repeat(1024), 202],
      ["é".repeat(512), 202],
      ["x".repeat(1025), 400],
      ["é".repeat(513), 400], // 513 characters, 1026 bytes
      ["😀".repeat(257), 400], // 514 UTF-16 units, 1028 bytes
    ] as const;
    for (const [i, [id, status]] of cases.entries()) {
      const d = delivery(`msg_long${i}`, { id, type: "order.created", data: {} });
      const response = await handler(
        new Request("http://consumer/hooks", { method: "POST", body: d.body, headers: d.headers }),
      );
      expect(response.status, `${id.length} characters`).toBe(status);
      if (status === 400) expect(await response.json()).toMatchObject({ code: "invalid_event", max_id_bytes: 1024 });
    }
    expect(inbox.size).toBe(2);
  });

  it("answers 400 json_too_deep for a JSON payload nested deeper than 64, before any inbox write", async () => {
    const inbox = createMemoryInbox();
    const handler = adaptFetch(createWebhookConsumer({ inbox, secrets: secret }));
    const nested = (depth: number) => `{"type":"a","data":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
    for (const [id, body, status] of [
      ["msg_64", nested(64), 202],
      ["msg_65", nested(65), 400],
      ["msg_100k", nested(100_000), 400],
    ] as const) {
      const headers = sign({ id, timestamp: nowSeconds(), body, secrets: secret });
      const response = await handler(new Request("http://consumer/hooks", { method: "POST", body, headers }));
      expect(response.status, id).toBe(status);
      if (status === 400) expect(await response.json()).toMatchObject({ code: "json_too_deep", max_depth: 64 });
    }
    expect(inbox.size).toBe(1);
    // Not JSON: the raw body is kept as it came, whatever it holds.
    const raw = adaptFetch(createWebhookConsumer({ inbox, secrets: secret, parse: "none" }));
    const body = nested(100);
    const headers = sign({ id: "msg_raw", timestamp: nowSeconds(), body, secrets: secret });
    expect((await raw(new Request("http://consumer/hooks", { method: "POST", body, headers }))).status).toBe(202);
  });
});

describe("createWebhookConsumer: what the inbox is given", () => {
  it("passes the verified body as the payload's JSON text, and no text when the payload is not its JSON parse", async () => {
    const sources: unknown[] = [];
    const inbox: Pick<Inbox, "add"> = {
      add: async (_event, source) => {
        sources.push(source);
        return { duplicate: false };
      },
    };
    const d = delivery("msg_text");
    for (const parse of [undefined, "json", "form", "none"] as const) {
      const handler = adaptFetch(createWebhookConsumer({ inbox, secrets: secret, ...(parse ? { parse } : {}) }));
      const response = await handler(
        new Request("http://consumer/hooks", { method: "POST", body: d.body, headers: d.headers }),
      );
      expect(response.status, String(parse)).toBe(202);
    }
    const body = new TextEncoder().encode(d.body);
    expect(sources).toEqual([{ json: body }, { json: body }, {}, {}]);
  });
});

describe("createWebhookConsumer: an empty body", () => {
  // verify's payload is undefined; the consumer stores null (as PostgreSQL keeps it), and the memory inbox, once past
  // parsedBytes, read its kept empty body back as undefined.
  it.each([0, Number.POSITIVE_INFINITY])(
    "gives handlers payload null (memory inbox, parsedBytes %s)",
    async (parsedBytes) => {
      const inbox = createMemoryInbox({ parsedBytes });
      const handler = adaptFetch(createWebhookConsumer({ inbox, secrets: secret }));
      const headers = sign({ id: "msg_empty", timestamp: nowSeconds(), body: "", secrets: secret });
      const response = await handler(new Request("http://consumer/hooks", { method: "POST", body: "", headers }));
      expect(response.status).toBe(202);
      expect((await inbox.get("msg_empty"))?.payload).toBeNull();
      const seen: unknown[] = [];
      const processor = createWebhookProcessor({ inbox });
      processor.on("*", async ({ event }) => {
        seen.push(event.payload);
      });
      await processor.processDue();
      expect(seen).toEqual([null]);
    },
  );
});

describe("createWebhookConsumer: a clock that reads NaN or an infinity", () => {
  it("refuses a now that is not a function when created", () => {
    const inbox = createMemoryInbox();
    expect(() => createWebhookConsumer({ inbox, secrets: secret, now: 5 as unknown as () => number })).toThrow(
      TypeError,
    );
  });

  // NaN made verify's window pass any timestamp (a delivery signed in 1970 was stored), with receivedAt NaN.
  it.each([Number.NaN, Number.POSITIVE_INFINITY])(
    "now() = %s: the handler throws a TypeError naming the option, the adapter answers 500, nothing is stored",
    async (reading) => {
      const body = JSON.stringify({ type: "order.shipped", data: {} });
      for (const [scheme, headers] of [
        [undefined, sign({ id: "msg_1970", timestamp: 1, body, secrets: secret })],
        [github, signWith(github, { id: "d-1", body, secrets: "gh_secret" })],
      ] as const) {
        const inbox = createMemoryInbox();
        const options = { inbox, secrets: scheme === undefined ? secret : "gh_secret", scheme, now: () => reading };
        const handler = createWebhookConsumer(options);
        const request = { method: "POST", headers, body: new TextEncoder().encode(body) } as unknown as HttpRequest;
        expect(() => handler(request), scheme?.name).toThrow(
          /^createWebhookConsumer: now\(\) must be a finite number of epoch milliseconds/,
        );
        const errors: unknown[] = [];
        const server = await listen(handler, { onError: (error) => errors.push(error) });
        closers.push(server.close);
        expect((await post(server.url, { body, headers })).status).toBe(500);
        expect(errors).toEqual([expect.any(TypeError)]);
        expect(inbox.size).toBe(0);
      }
    },
  );
});

function requestOf(d: { body: string; headers: Record<string, string> }): HttpRequest {
  return { method: "POST", path: "/webhooks", search: "", query: {}, headers: d.headers, body: Buffer.from(d.body) };
}

// Regression: a body in a content coding was verified and parsed as it came: a sender that compressed it got 400
// webhook_no_matching_signature (signed before compressing) or webhook_payload_invalid (after), neither of which says
// what to change. RFC 9110 §15.5.16 answers 415, with Accept-Encoding naming what is taken (§12.5.3).
describe("createWebhookConsumer: a body in a content coding", () => {
  function coded(id: string, coding: string) {
    const d = delivery(id);
    return { ...requestOf(d), headers: { ...d.headers, "content-encoding": coding }, body: gzipSync(d.body) };
  }

  it.each(["gzip", "GZIP", "identity, gzip", "br"])(
    "answers 415 unsupported_content_coding with Accept-Encoding: identity for Content-Encoding %s, storing nothing",
    async (coding) => {
      const inbox = createMemoryInbox();
      const consumer = createWebhookConsumer({ inbox, secrets: secret });
      const response = await consumer(coded("msg_coded", coding));
      expect(response.status).toBe(415);
      expect(response.headers["accept-encoding"]).toBe("identity");
      expect(JSON.parse(new TextDecoder().decode(bodyBytes(response.body))).code).toBe("unsupported_content_coding");
      expect(inbox.size).toBe(0);
    },
  );

  it("takes Content-Encoding: identity as no coding", async () => {
    const consumer = createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret });
    const d = delivery("msg_identity");
    const response = await consumer(requestOf({ ...d, headers: { ...d.headers, "content-encoding": "identity" } }));
    expect(response.status).toBe(202);
  });

  it('keeps the bytes untouched with parse: "none": the coded body is verified and stored as it came', async () => {
    const inbox = createMemoryInbox();
    const consumer = createWebhookConsumer({ inbox, secrets: secret, parse: "none" });
    const bytes = gzipSync('{"type":"order.shipped"}');
    const headers = { ...sign({ id: "msg_raw", timestamp: nowSeconds(), body: bytes, secrets: secret }) };
    const response = await consumer({
      ...requestOf({ body: "", headers }),
      headers: { ...headers, "content-encoding": "gzip" },
      body: bytes,
    });
    expect(response.status).toBe(202);
    expect(inbox.size).toBe(1);
  });
});

// Regression: these were accepted, and then a delivery was stored and answered 500 (status "202" from a configuration
// file, or an eventId or deadline that is no function), acknowledged with the 500 itself (status: 500), or woken
// nothing (an onStored that is no function): every redelivery alike.
describe("createWebhookConsumer: options that cannot work are refused when created", () => {
  it.each([
    ["status", "202"],
    ["status", 500],
    ["status", 204],
    ["onStored", "wake"],
    ["onError", {}],
    ["eventId", "id"],
    ["eventType", "type"],
    ["deadline", 5_000],
  ])("%s: %o is a TypeError naming the option", (name, value) => {
    const create = () =>
      createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret, [name]: value } as WebhookConsumerOptions);
    expect(create).toThrow(TypeError);
    expect(create).toThrow(new RegExp(`^createWebhookConsumer: ${name} `));
  });

  it("takes status 200 and 202, and every function option", () => {
    for (const status of [200, 202] as const) {
      expect(() => createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret, status })).not.toThrow();
    }
    const noop = () => undefined;
    const options = { onStored: noop, onError: noop, eventId: noop, eventType: noop, deadline: AbortSignal.timeout };
    expect(() => createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret, ...options })).not.toThrow();
  });
});

// Regression: the consumer told the inbox's refusals apart with instanceof, so an inbox of your own that loaded the
// error classes from another copy of the package (its CommonJS build beside the ES module one) got 503 inbox_unavailable
// with Retry-After for an event it can never hold, and every redelivery the same.
describe("createWebhookConsumer: inbox errors from another copy of the package", async () => {
  // A second instance of each module, as a second copy of the package would load (a query makes a new module id).
  const secondCopy = (file: string): Promise<object> =>
    import(/* @vite-ignore */ `${new URL(`../../../src/webhooks/consumer/${file}.ts`, import.meta.url).pathname}?copy`);
  const copy = {
    ...(await secondCopy("inbox-full")),
    ...(await secondCopy("event-too-large")),
  } as { InboxFullError: typeof InboxFullError; InboxEventTooLargeError: typeof InboxEventTooLargeError };

  it("is a distinct class, which instanceof does not recognise", () => {
    expect(new copy.InboxFullError("full", 1)).not.toBeInstanceOf(InboxFullError);
  });

  it.each([
    ["InboxEventTooLargeError", () => new copy.InboxEventTooLargeError("too large", 400, 900), 413, "body_too_large"],
    ["InboxFullError", () => new copy.InboxFullError("full", 400), 503, "inbox_full"],
  ] as const)("%s: the same answer as the consumer's own copy", async (_, make, status, code) => {
    const onError = vi.fn();
    const consumer = createWebhookConsumer({
      inbox: {
        add: () => {
          throw make();
        },
      },
      secrets: secret,
      onError,
    });
    const response = await consumer(requestOf(delivery("msg_copy")));
    expect(response.status).toBe(status);
    expect(JSON.parse(new TextDecoder().decode(bodyBytes(response.body))).code).toBe(code);
    expect(response.headers["retry-after"]).toBe(status === 503 ? "5" : undefined);
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it.each([
    ["InboxEventTooLargeError", () => new copy.InboxEventTooLargeError("too large", 400, 900), /larger than the inbox/],
    ["InboxFullError", () => new copy.InboxFullError("full", 400), /inbox is full/],
  ] as const)("%s: the default log names its kind", (_, make, line) => {
    const lines: string[] = [];
    refusalLog(
      () => 0,
      (message) => void lines.push(message),
    )(make(), undefined, true);
    expect(lines).toEqual([expect.stringMatching(line)]);
  });
});

// Regression: an onError that threw (a logger whose transport was down) escaped the handler, so the adapter answered
// its generic 500 in place of the 503 with Retry-After, the 413 or the webhook_secret_invalid problem.
describe("createWebhookConsumer: an onError that throws", () => {
  const throwing = () => {
    throw new Error("logger down");
  };
  const tooLarge = new InboxEventTooLargeError("too large", 10, 20);
  it.each([
    ["an inbox that throws", { add: () => throwing() }, 503, "inbox_unavailable"],
    ["an inbox that rejects", { add: async () => throwing() }, 503, "inbox_unavailable"],
    [
      "an event the inbox can never hold",
      {
        add: () => {
          throw tooLarge;
        },
      },
      413,
      "body_too_large",
    ],
    ["a secret not set", undefined, 500, "webhook_secret_invalid"],
  ] as [string, Pick<Inbox, "add"> | undefined, number, string][])(
    "does not change the answer to %s, and its failure goes to stderr",
    async (_, inbox, status, code) => {
      const stderr = vi.spyOn(console, "error").mockImplementation(() => {});
      try {
        const consumer = createWebhookConsumer({
          inbox: inbox ?? createMemoryInbox(),
          secrets: inbox === undefined ? "" : secret,
          onError: throwing,
        });
        const response = await consumer(requestOf(delivery("msg_onerror")));
        expect(response.status).toBe(status);
        expect(JSON.parse(new TextDecoder().decode(bodyBytes(response.body))).code).toBe(code);
        expect(stderr).toHaveBeenCalledTimes(1);
      } finally {
        stderr.mockRestore();
      }
    },
  );

  it("after the send, an onStored and an onError that both throw do not throw from the callback", async () => {
    const stderr = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const consumer = createWebhookConsumer({
        inbox: createMemoryInbox(),
        secrets: secret,
        onStored: throwing,
        onError: throwing,
      });
      const callback = takeAfterSend(await consumer(requestOf(delivery("msg_wake"))));
      expect(callback).toBeTypeOf("function");
      expect(() => callback?.()).not.toThrow();
      expect(stderr).toHaveBeenCalledTimes(1);
    } finally {
      stderr.mockRestore();
    }
  });
});

describe("createWebhookConsumer over node:http", () => {
  it("acknowledges a valid delivery with 202 and stores it pending, without running any handler", async () => {
    const { inbox, url } = await serve();
    const response = await post(url, delivery("msg_1"));
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
    expect(await inbox.get("msg_1")).toMatchObject({
      id: "msg_1",
      type: "order.shipped",
      payload: { type: "order.shipped", data: { order: "msg_1" } },
      scheme: "standard-webhooks",
      state: "pending",
      attempts: 0,
    });
  });

  describe("2xx before the handler has run", () => {
    // Regression: onStored (the runner's wake) ran inside the handler, before the reply was written,
    // so a handler could start first — at once behind a middleware that awaits after the consumer.
    it("the client has its 202 before the woken handler starts, even behind a middleware that awaits after the consumer", async () => {
      const inbox = createMemoryInbox();
      const processor = createWebhookProcessor({ inbox });
      const clientStatus = new Int32Array(new SharedArrayBuffer(4)); // 0 until the client thread has a reply
      const order: string[] = [];
      processor.on("order.*", () => {
        // Freeze this whole process until the client thread has its reply. Were the 202 not fully
        // written yet, nothing could write it now: the wait would time out.
        const waited = Atomics.wait(clientStatus, 0, 0, 30_000);
        const status = Atomics.load(clientStatus, 0);
        order.push(
          waited === "timed-out" ? "handler started; client had no reply" : `handler started; client had ${status}`,
        );
      });
      const runner = startWebhookProcessor(processor, { idleMs: 3_600_000 }); // only the wake steps it
      closers.push(runner.stop);
      const consumer = createWebhookConsumer({ inbox, secrets: secret, onStored: runner.wake });
      const audited: Handler = async (request) => {
        const response = await consumer(request);
        await new Promise((resolve) => setImmediate(resolve)); // say, an audit-log write
        order.push("middleware returned");
        return response;
      };
      const server = await listen(audited);
      closers.push(server.close);
      expect(await postFromThread(server.url, delivery("msg_order"), clientStatus)).toBe(202);
      await vi.waitFor(async () => expect((await inbox.get("msg_order"))?.state).toBe("done"));
      expect(order).toEqual(["middleware returned", "handler started; client had 202"]);
    }, 60_000);

    it("does not wait for processing: the client has its 202 while the handler is still running", async () => {
      const inbox = createMemoryInbox();
      const processor = createWebhookProcessor({ inbox });
      const replied = latch();
      const processed = latch();
      processor.on("order.*", async () => {
        await replied.promise; // would deadlock if the reply waited for processing
        processed.open();
      });
      const runner = startWebhookProcessor(processor, { idleMs: 5 });
      closers.push(runner.stop);
      const { url } = await serve({ inbox, onStored: runner.wake });
      expect((await post(url, delivery("msg_latch"))).status).toBe(202);
      expect(processed.isOpen).toBe(false);
      replied.open();
      await processed.promise;
      await vi.waitFor(async () => expect((await inbox.get("msg_latch"))?.state).toBe("done"));
    });

    describe("the handler itself never calls onStored: the 2xx carries it for the I/O layer", () => {
      function request(d: { body: string; headers: Record<string, string> }): HttpRequest {
        return {
          method: "POST",
          path: "/webhooks",
          search: "",
          query: {},
          headers: d.headers,
          body: Buffer.from(d.body),
        };
      }

      it("runs it once, with the stored event, when the adapter runs the callback", async () => {
        const stored: InboxEvent[] = [];
        const consumer = createWebhookConsumer({
          inbox: createMemoryInbox(),
          secrets: secret,
          onStored: (e) => void stored.push(e),
        });
        const response = await consumer(request(delivery("msg_cb")));
        expect(response.status).toBe(202);
        expect(stored).toEqual([]);
        const callback = takeAfterSend(response);
        expect(takeAfterSend(response)).toBeUndefined(); // taken: it cannot run twice
        callback?.();
        expect(stored.map((e) => e.id)).toEqual(["msg_cb"]);
      });

      it("acknowledges an inbox that answers at once in the same tick, with no promise and no deadline", async () => {
        const deadline = vi.fn(() => new AbortController().signal);
        const inbox = createMemoryInbox();
        const consumer = createWebhookConsumer({ inbox, secrets: secret, deadline, onStored: () => {} });
        const response = consumer(request(delivery("msg_sync")));
        expect(isThenable(response)).toBe(false);
        expect((response as Awaited<typeof response>).status).toBe(202);
        expect(takeAfterSend(response as Awaited<typeof response>)).toBeTypeOf("function");
        expect(deadline).not.toHaveBeenCalled();
        expect((await inbox.get("msg_sync"))?.state).toBe("pending");
        // A duplicate is acknowledged at once too, and carries no wake.
        const again = consumer(request(delivery("msg_sync"))) as Awaited<typeof response>;
        expect(again.status).toBe(202);
        expect(takeAfterSend(again)).toBeUndefined();
      });

      it("waits for an inbox that answers with a promise, under the deadline", async () => {
        const deadline = vi.fn(() => new AbortController().signal);
        const memory = createMemoryInbox();
        const inbox: Pick<Inbox, "add"> = { add: async (event) => memory.add(event) };
        const consumer = createWebhookConsumer({ inbox, secrets: secret, deadline });
        const response = consumer(request(delivery("msg_async")));
        expect(isThenable(response)).toBe(true);
        expect(deadline).toHaveBeenCalledTimes(1);
        expect((await response).status).toBe(202);
      });

      it("survives a wrapper that copies the response with spread", async () => {
        const onStored = vi.fn();
        const consumer = createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret, onStored });
        const response = await consumer(request(delivery("msg_spread")));
        takeAfterSend({ ...response, headers: { ...response.headers, "x-extra": "1" } })?.();
        expect(onStored).toHaveBeenCalledTimes(1);
      });

      it("carries nothing for a duplicate, a refusal, or without onStored", async () => {
        const inbox = createMemoryInbox();
        const consumer = createWebhookConsumer({ inbox, secrets: secret, onStored: () => {} });
        const d = delivery("msg_twice");
        expect(takeAfterSend(await consumer(request(d)))).toBeTypeOf("function");
        expect(takeAfterSend(await consumer(request(d)))).toBeUndefined();
        expect(takeAfterSend(await consumer(request({ ...d, body: `${d.body} ` })))).toBeUndefined();
        const quiet = createWebhookConsumer({ inbox, secrets: secret });
        expect(takeAfterSend(await quiet(request(delivery("msg_quiet"))))).toBeUndefined();
      });

      // Regression: an unset secret answered every delivery with a 500 that no onError heard, so a consumer deployed
      // before its secret was set failed silently until the provider gave up.
      it("reports a delivery it cannot verify for its own configuration to onError, not one the sender got wrong", async () => {
        const onError = vi.fn();
        const unset = createWebhookConsumer({ inbox: createMemoryInbox(), secrets: "", onError });
        const response = await unset(request(delivery("msg_unset")));
        expect(response.status).toBe(500);
        expect(onError).toHaveBeenCalledTimes(1);
        expect(onError).toHaveBeenCalledWith(
          expect.objectContaining({ name: "WebhookVerificationError", code: "secret_invalid" }),
          expect.objectContaining({ method: "POST" }),
        );
        const configured = createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret, onError });
        const forged = delivery("msg_forged");
        expect((await configured(request({ ...forged, body: `${forged.body} ` }))).status).toBe(400);
        expect(onError).toHaveBeenCalledTimes(1);
      });

      it("reports an onStored that throws to onError instead of throwing", async () => {
        const onError = vi.fn();
        const boom = new Error("wake failed");
        const consumer = createWebhookConsumer({
          inbox: createMemoryInbox(),
          secrets: secret,
          onError,
          onStored: () => {
            throw boom;
          },
        });
        const callback = takeAfterSend(await consumer(request(delivery("msg_throw"))));
        expect(() => callback?.()).not.toThrow();
        expect(onError).toHaveBeenCalledWith(boom, expect.objectContaining({ method: "POST" }));
      });
    });
  });

  it("refuses a secret of the wrong type when created (misuse is a TypeError, not a 500 per delivery)", () => {
    const inbox = createMemoryInbox();
    expect(() => createWebhookConsumer({ inbox, secrets: 42 as unknown as string })).toThrow(
      new TypeError("createWebhookConsumer: secrets must be a string or a list of strings, not number"),
    );
    expect(() => createWebhookConsumer({ inbox, secrets: [secret, {}] as unknown as string[] })).toThrow(TypeError);
    // An unset secret is configuration not yet done: created, and each delivery gets secret_invalid.
    expect(() => createWebhookConsumer({ inbox, secrets: "" })).not.toThrow();
  });

  // Regression: these were accepted, then every delivery got a 500 with a generic detail, reported to no onError.
  it("refuses a set secret its scheme cannot use when created, naming it by fingerprint only", () => {
    const inbox = createMemoryInbox();
    const unusable: [string | string[], WebhookConsumerOptions["scheme"]][] = [
      ["whsec_not base64!", undefined],
      [`whsec_${"-_".repeat(16)}`, undefined], // base64url: Standard Webhooks secrets are RFC 4648 §4 base64
      ["whsec_", undefined],
      [[secret, "whsec_!!"], undefined], // a rotation list with one broken secret never verifies either
      ["whpk_AAAA", undefined],
      ["sk_live_abc", stripe],
      ["gh_secret\n", github],
    ];
    for (const [secrets, scheme] of unusable) {
      const create = () => createWebhookConsumer({ inbox, secrets, scheme });
      expect(create, String(secrets)).toThrow(/^createWebhookConsumer: Secret #\d /);
      expect(create).toThrow(TypeError);
      for (const value of [secrets].flat()) if (value.length > 8) expect(create).not.toThrow(value.slice(6));
    }
    const usable: [string | string[], WebhookConsumerOptions["scheme"]][] = [
      [secret, undefined],
      [[secret, generateSecret()], undefined],
      [generateSigningKeyPair().publicKey, undefined],
      ["whsec_test_secret", stripe],
      ["gh secret with spaces", github],
      ["shpss_abc", shopify],
      ["8f742231b10e8888abcd99yyyzzz85a5", slack],
      [["", secret], undefined], // unset: each delivery gets secret_invalid until it is set
    ];
    for (const [secrets, scheme] of usable) {
      expect(() => createWebhookConsumer({ inbox, secrets, scheme }), String(secrets)).not.toThrow();
    }
  });

  // Regression: these were accepted, then verify threw the same TypeError on every delivery (a 500 each).
  it.each([
    ["scheme", { scheme: "stripe" }, /^createWebhookConsumer: scheme must be a WebhookScheme/],
    ["scheme", { scheme: {} }, /^createWebhookConsumer: scheme must be a WebhookScheme/],
    ["parse", { parse: "xml" }, /^createWebhookConsumer: parse must be/],
    ["toleranceSeconds", { toleranceSeconds: -1 }, /^createWebhookConsumer: toleranceSeconds must be/],
    ["toleranceSeconds", { toleranceSeconds: "300" }, /^createWebhookConsumer: toleranceSeconds must be/],
    ["toleranceSeconds", { toleranceSeconds: { past: 300 } }, /^createWebhookConsumer: toleranceSeconds.future/],
  ])("refuses a %s verification cannot use when created: %j", (_name, option, message) => {
    const options = { inbox: createMemoryInbox(), secrets: secret, ...option } as unknown as WebhookConsumerOptions;
    expect(() => createWebhookConsumer(options)).toThrow(TypeError);
    expect(() => createWebhookConsumer(options)).toThrow(message);
  });

  it("answers 200 when configured to", async () => {
    const { url } = await serve({ status: 200 });
    expect((await post(url, delivery("msg_1"))).status).toBe(200);
  });

  describe("refuses without storing", () => {
    it("a bad signature: 400 problem", async () => {
      const { inbox, url } = await serve();
      const d = delivery("msg_bad");
      const tampered = { ...d, body: d.body.replace("order", "0rder") };
      const response = await post(url, tampered);
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect((await response.json()).code).toBe("webhook_no_matching_signature");
      expect(inbox.size).toBe(0);
    });

    it("a signature made with another secret: 400", async () => {
      const { inbox, url } = await serve();
      const body = "{}";
      const headers = sign({ id: "msg_x", timestamp: nowSeconds(), body, secrets: generateSecret() });
      expect((await post(url, { body, headers })).status).toBe(400);
      expect(inbox.size).toBe(0);
    });

    it("missing signature headers: 400", async () => {
      const { inbox, url } = await serve();
      const response = await post(url, { body: "{}", headers: { "content-type": "application/json" } });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("webhook_missing_header");
      expect(inbox.size).toBe(0);
    });

    it("a timestamp outside the tolerance: 400", async () => {
      const { inbox, url } = await serve({ toleranceSeconds: 60 });
      const body = "{}";
      const headers = sign({ id: "msg_old", timestamp: nowSeconds() - 3_600, body, secrets: secret });
      const response = await post(url, { body, headers });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("webhook_timestamp_too_old");
      expect(inbox.size).toBe(0);
    });

    it("a body over the handler's limit: 413", async () => {
      const { inbox, url } = await serve({ bodyLimit: 64 });
      const response = await post(url, delivery("msg_big", { type: "x.y", data: "x".repeat(100) }));
      expect(response.status).toBe(413);
      expect((await response.json()).code).toBe("body_too_large");
      expect(inbox.size).toBe(0);
    });

    it("a body over the adapter's bodyLimit: 413", async () => {
      const inbox = createMemoryInbox();
      const server = await listen(createWebhookConsumer({ inbox, secrets: secret }), { bodyLimit: 64 });
      closers.push(server.close);
      const response = await post(server.url, delivery("msg_big", { type: "x.y", data: "x".repeat(100) }));
      expect(response.status).toBe(413);
      expect(inbox.size).toBe(0);
    });

    it("another method: 405 with Allow: POST", async () => {
      const { url } = await serve();
      const response = await fetch(url);
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    });
  });

  it("stores an event delivered 5 times once, acknowledges every time, and processes it once", async () => {
    const { inbox, url } = await serve();
    const d = delivery("msg_dup");
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(url, d)).status);
    // Redeliveries are signed afresh; the id is what stays.
    const resigned = delivery("msg_dup");
    statuses.push((await post(url, resigned)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 202]);
    expect(inbox.size).toBe(1);
    const handler = vi.fn();
    const processor = createWebhookProcessor({ inbox }).on("*", handler);
    await processor.processDue();
    await processor.processDue();
    expect(handler).toHaveBeenCalledTimes(1);
  });

  describe("when the inbox cannot store the event", () => {
    const diskFull = () => {
      throw new Error("disk full");
    };
    it.each([
      ["rejects", { add: async () => diskFull() }],
      ["throws, answering at once", { add: () => diskFull() }],
    ] as [string, Pick<Inbox, "add">][])(
      "answers 503 with Retry-After so the provider retries, and reports the error (an inbox that %s)",
      async (_, broken) => {
        const onError = vi.fn();
        const { url } = await serve({ inbox: broken, onError });
        const response = await post(url, delivery("msg_lost"));
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toBe("5");
        expect((await response.json()).code).toBe("inbox_unavailable");
        expect(onError).toHaveBeenCalledTimes(1);
      },
    );

    it("answers 503 inbox_full while unprocessed events fill the memory inbox, and takes the event once there is room", async () => {
      const onError = vi.fn();
      const inbox = createMemoryInbox({ maxBytes: 400 });
      const { url } = await serve({ inbox, onError });
      const big = { type: "order.shipped", data: { note: "x".repeat(250) } };
      expect((await post(url, delivery("msg_1", big))).status).toBe(202);
      const refused = await post(url, delivery("msg_2", big));
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
      expect((await refused.json()).code).toBe("inbox_full");
      expect(onError).toHaveBeenCalledWith(expect.any(InboxFullError), expect.anything());
      expect(await inbox.get("msg_2")).toBeUndefined();
      // A redelivery of a held event is still acknowledged: it is a duplicate, and takes no room.
      expect((await post(url, delivery("msg_1", big))).status).toBe(202);
      // Once processed, the done event keeps its id and type alone, which makes room: the provider's retry is
      // stored, and a redelivery of the done event is still a duplicate.
      const processor = createWebhookProcessor({ inbox });
      processor.on("*", async () => {});
      await processor.processDue();
      expect((await post(url, delivery("msg_2", big))).status).toBe(202);
      expect((await inbox.get("msg_2"))?.state).toBe("pending");
      expect(await inbox.get("msg_1")).toMatchObject({ state: "done", payload: undefined });
      expect((await post(url, delivery("msg_1", big))).status).toBe(202);
      expect((await inbox.get("msg_1"))?.state).toBe("done");
    });

    it("answers 413 naming the bound, without Retry-After, for an event larger than the memory inbox's maxBytes", async () => {
      // Regression: it got 503 inbox_full with Retry-After on every redelivery, for an event that can never fit.
      const onError = vi.fn();
      const inbox = createMemoryInbox({ maxBytes: 200 });
      const { url } = await serve({ inbox, onError });
      const big = { type: "order.shipped", data: { note: "x".repeat(250) } };
      for (let attempt = 0; attempt < 2; attempt++) {
        const refused = await post(url, delivery("msg_big", big));
        expect(refused.status).toBe(413);
        expect(refused.headers.get("retry-after")).toBeNull();
        expect(refused.headers.get("content-type")).toBe("application/problem+json");
        expect(await refused.json()).toMatchObject({ status: 413, code: "body_too_large", limit: 200 });
      }
      expect(onError).toHaveBeenCalledWith(expect.any(InboxEventTooLargeError), expect.anything());
      expect(inbox.size).toBe(0);
      // One that fits is still taken.
      expect((await post(url, delivery("msg_small"))).status).toBe(202);
    });

    it("logs refusals by default at most once a minute, not once per delivery", async () => {
      const spy = vi.spyOn(console, "error").mockImplementation(() => {});
      try {
        const inbox = createMemoryInbox({ maxBytes: 400 });
        const handler = createWebhookConsumer({ inbox, secrets: secret });
        const server = await listen(handler, { onError: () => {} });
        closers.push(server.close);
        const big = { type: "order.shipped", data: { note: "x".repeat(250) } };
        expect((await post(server.url, delivery("msg_1", big))).status).toBe(202);
        for (const id of ["msg_2", "msg_3", "msg_4"]) {
          expect((await post(server.url, delivery(id, big))).status).toBe(503);
        }
        expect(spy).toHaveBeenCalledTimes(1);
        expect(spy).toHaveBeenCalledWith(expect.stringContaining("inbox is full"), expect.any(InboxFullError));
      } finally {
        spy.mockRestore();
      }
    });

    it("answers 503 when PostgreSQL is unreachable", async () => {
      const pool = new pg.Pool({ host: "127.0.0.1", port: 1, user: "nobody", connectionTimeoutMillis: 2_000 });
      closers.push(() => pool.end());
      const { url } = await serve({ inbox: createPostgresInbox({ client: pool }) });
      expect((await post(url, delivery("msg_pg_down"))).status).toBe(503);
    });

    it("answers 503 with Retry-After when the inbox never answers, once inboxTimeoutMs passes", async () => {
      const onError = vi.fn();
      const hung: Pick<Inbox, "add"> = { add: () => new Promise(() => {}) };
      let ended: (() => void) | undefined;
      const { url } = await serve({
        inbox: hung,
        onError,
        // The deadline is injected: the test ends the wait itself, once the request is in.
        deadline: () => {
          const controller = new AbortController();
          ended = () => controller.abort(new Error("inbox deadline"));
          return controller.signal;
        },
      });
      const pending = post(url, delivery("msg_hung"));
      while (ended === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      ended();
      const response = await pending;
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect((await response.json()).code).toBe("inbox_unavailable");
      expect(onError).toHaveBeenCalledTimes(1);
    });

    it("answers 503 when PostgreSQL accepts the connection and never replies (issue 16)", async () => {
      // A server that accepts every connection and never sends a byte: pg waits for its startup reply forever.
      const sockets = new Set<Socket>();
      const silent = createNetServer((socket) => {
        sockets.add(socket);
        socket.on("error", () => {});
      });
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      closers.push(async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      });
      const pool = new pg.Pool({ host: "127.0.0.1", port: (silent.address() as AddressInfo).port, user: "nobody" });
      pool.on("error", () => {});
      closers.push(async () => {
        for (const socket of sockets) socket.destroy();
        await pool.end().catch(() => {});
      });
      const { url } = await serve({ inbox: createPostgresInbox({ client: pool }), inboxTimeoutMs: 200 });
      const response = await post(url, delivery("msg_pg_silent"));
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
    });

    it("stores the event on the provider's retry once the inbox is back", async () => {
      const { inbox, flaky, recover } = flakyInbox();
      const { url } = await serve({ inbox: flaky });
      const d = delivery("msg_retry");
      expect((await post(url, d)).status).toBe(503);
      recover();
      expect((await post(url, d)).status).toBe(202);
      expect((await inbox.get("msg_retry"))?.state).toBe("pending");
    });
  });

  it("accepts what the standardwebhooks package signs (interop)", async () => {
    const { inbox, url } = await serve();
    const body = JSON.stringify({ type: "invoice.paid", data: {} });
    const headers = new Webhook(secret).sign("msg_peer", new Date(), body);
    const response = await post(url, {
      body,
      headers: { "webhook-id": "msg_peer", "webhook-timestamp": String(nowSeconds()), "webhook-signature": headers },
    });
    expect(response.status).toBe(202);
    expect((await inbox.get("msg_peer"))?.type).toBe("invoice.paid");
  });
});

describe("dedup key and event type per scheme", () => {
  const literal = "It's a Secret to Everybody";

  async function deliver(
    options: Partial<WebhookConsumerOptions>,
    body: string,
    headers: Record<string, string>,
  ): Promise<MemoryInbox> {
    const { inbox, url } = await serve({ secrets: literal, ...options });
    for (let i = 0; i < 2; i++) expect((await post(url, { body, headers })).status).toBe(202);
    expect(inbox.size).toBe(1);
    return inbox;
  }

  it("GitHub: X-GitHub-Delivery; type is X-GitHub-Event plus the action", async () => {
    const body = JSON.stringify({ action: "opened", issue: { number: 1 } });
    const headers = { ...signWith(github, { id: "d-1", body, secrets: literal }), "x-github-event": "issues" };
    const inbox = await deliver({ scheme: github }, body, headers);
    expect(await inbox.get("d-1")).toMatchObject({ type: "issues.opened", scheme: "github" });
  });

  it("Stripe: the event id in the payload; type is the payload's type", async () => {
    const secretKey = "whsec_stripe_test";
    const body = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid", data: {} });
    const headers = signWith(stripe, { timestamp: nowSeconds(), body, secrets: secretKey });
    const inbox = await deliver({ scheme: stripe, secrets: secretKey }, body, headers);
    expect(await inbox.get("evt_1")).toMatchObject({ type: "invoice.paid", scheme: "stripe" });
  });

  it("Shopify: X-Shopify-Event-Id over X-Shopify-Webhook-Id; type is the topic with dots", async () => {
    const body = JSON.stringify({ id: 42 });
    const headers = {
      ...signWith(shopify, { id: "wh-1", body, secrets: literal }),
      "x-shopify-topic": "orders/create",
      "x-shopify-event-id": "ev-1",
    };
    const inbox = await deliver({ scheme: shopify }, body, headers);
    expect(await inbox.get("ev-1")).toMatchObject({ type: "orders.create" });
  });

  it("Slack Events API: event_id; type is the inner event's type", async () => {
    const body = JSON.stringify({ type: "event_callback", event_id: "Ev1", event: { type: "app_mention" } });
    const headers = signWith(slack, { timestamp: nowSeconds(), body, secrets: literal });
    const inbox = await deliver({ scheme: slack }, body, headers);
    expect(await inbox.get("Ev1")).toMatchObject({ type: "app_mention" });
  });

  it("Slack slash command (no id anywhere): the SHA-256 of the raw body", async () => {
    const body = "command=%2Fdeploy&text=prod&trigger_id=13345224609.738474920.8088930838d88f008e0";
    const headers = signWith(slack, { timestamp: nowSeconds(), body, secrets: literal });
    const inbox = await deliver({ scheme: slack, parse: "form", eventType: () => "slash.deploy" }, body, headers);
    const { createHash } = await import("node:crypto");
    const key = `sha256:${createHash("sha256").update(body).digest("hex")}`;
    expect(await inbox.get(key)).toMatchObject({ type: "slash.deploy", payload: { command: "/deploy", text: "prod" } });
  });

  it("a Standard Webhooks delivery replayed with unsigned X-Shopify-Event-Id / X-GitHub-Event is still a duplicate", async () => {
    const d = delivery("msg_replayed", { type: "invoice.paid", data: {} });
    const { inbox, url } = await serve();
    const extras: Record<string, string>[] = [{}, { "x-shopify-event-id": "forged-1" }, { "x-github-event": "refund" }];
    for (const extra of extras) {
      expect((await post(url, { body: d.body, headers: { ...d.headers, ...extra } })).status).toBe(202);
    }
    expect(inbox.size).toBe(1);
    expect(await inbox.get("msg_replayed")).toMatchObject({ type: "invoice.paid" });
  });

  // Neither GitHub nor Shopify signs its id header: the default id stops the provider's retries, not a captured
  // delivery replayed under a fresh id (docs: "De-duplication: which id is the event's id"). An eventId keyed on the
  // signed body does.
  describe("GitHub and Shopify: a captured delivery replayed under a fresh, unsigned id header", () => {
    const body = JSON.stringify({ action: "opened", issue: { number: 1 } });
    const cases = [
      ["github", github, "x-github-delivery", { "x-github-event": "issues" }],
      ["shopify", shopify, "x-shopify-event-id", { "x-shopify-topic": "orders/create" }],
    ] as const;
    const bodyHash = ({ body: raw }: { body: Uint8Array }) =>
      `sha256:${createHash("sha256").update(raw).digest("hex")}`;

    async function replay(scheme: (typeof cases)[number][1], idHeader: string, extra: Record<string, string>) {
      const signed = signWith(scheme, { id: "d-1", body, secrets: literal });
      const send = async (url: string, id: string) =>
        (await post(url, { body, headers: { ...signed, ...extra, [idHeader]: id } })).status;
      const byDefault = await serve({ secrets: literal, scheme });
      const byBody = await serve({ secrets: literal, scheme, eventId: bodyHash });
      for (const id of ["d-1", "d-1", "replayed-2"]) {
        expect(await send(byDefault.url, id)).toBe(202);
        expect(await send(byBody.url, id)).toBe(202);
      }
      return { byDefault: byDefault.inbox.size, byBody: byBody.inbox.size };
    }

    it.each(cases)(
      "%s: stored again under the default id; once with eventId on the body's SHA-256",
      async (_, ...c) => {
        expect(await replay(...c)).toEqual({ byDefault: 2, byBody: 1 });
      },
    );
  });

  it("a custom eventId wins over the default", async () => {
    const d = delivery("msg_1");
    const inbox = await deliver({ secrets: secret, eventId: ({ id }) => `acme:${id}` }, d.body, d.headers);
    expect(await inbox.get("acme:msg_1")).toBeDefined();
  });

  // Regression: an eventId that returned "" stored the first event under "", and acknowledged every later one as its
  // duplicate, dropping it; one that returned a number failed with "text.isWellFormed is not a function".
  it("a custom eventId or eventType that returns what no event can have: a TypeError naming it (500), nothing stored", async () => {
    const cases: [string, Partial<WebhookConsumerOptions>, RegExp][] = [
      ["empty id", { eventId: () => "" }, /eventId must return a non-empty string or undefined; it returned an empty/],
      ["number id", { eventId: () => 42 as never }, /eventId must return .* it returned a number/],
      ["null id", { eventId: () => null as never }, /eventId must return .* it returned null/],
      [
        "object type",
        { eventType: () => ({}) as never },
        /eventType must return a string or undefined; it returned an object/,
      ],
    ];
    for (const [name, options, message] of cases) {
      const inbox = createMemoryInbox();
      const onError = vi.fn();
      const handler = adaptFetch(createWebhookConsumer({ inbox, secrets: secret, ...options }), { onError });
      for (const id of ["msg_1", "msg_2"]) {
        const d = delivery(id);
        const response = await handler(
          new Request("http://consumer/hooks", { method: "POST", body: d.body, headers: d.headers }),
        );
        expect(response.status, name).toBe(500);
      }
      expect(onError.mock.calls[0]?.[0], name).toBeInstanceOf(TypeError);
      expect((onError.mock.calls[0]?.[0] as Error | undefined)?.message, name).toMatch(message);
      expect(inbox.size, name).toBe(0);
    }
    // An empty type is a type (none found): stored.
    const d = delivery("msg_3");
    const inbox = await deliver({ secrets: secret, eventType: () => "" }, d.body, d.headers);
    expect((await inbox.get("msg_3"))?.type).toBe("");
  });
});

describe("createWebhookConsumer on the Fetch adapter", () => {
  const webhookRequest = (d: { body: string; headers: Record<string, string> }) =>
    new Request("http://localhost/webhooks", { method: "POST", body: d.body, headers: d.headers });

  it("verifies, stores and answers 202; a bad signature gets 400", async () => {
    const inbox = createMemoryInbox();
    const app = adaptFetch(createWebhookConsumer({ inbox, secrets: secret }));
    const d = delivery("msg_fetch");
    const ok = await app(
      new Request("http://localhost/webhooks", { method: "POST", body: d.body, headers: d.headers }),
    );
    expect(ok.status).toBe(202);
    const bad = await app(
      new Request("http://localhost/webhooks", { method: "POST", body: `${d.body} `, headers: d.headers }),
    );
    expect(bad.status).toBe(400);
    expect(inbox.size).toBe(1);
  });

  it("a body over the handler's limit: 413, nothing stored", async () => {
    const inbox = createMemoryInbox();
    const app = adaptFetch(createWebhookConsumer({ inbox, secrets: secret, bodyLimit: 64 }));
    const response = await app(webhookRequest(delivery("msg_big", { type: "x.y", data: "x".repeat(100) })));
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe("body_too_large");
    expect(inbox.size).toBe(0);
  });

  it("a body over the adapter's bodyLimit: 413 before the handler runs", async () => {
    const inbox = createMemoryInbox();
    const app = adaptFetch(createWebhookConsumer({ inbox, secrets: secret }), { bodyLimit: 64 });
    const response = await app(webhookRequest(delivery("msg_big", { type: "x.y", data: "x".repeat(100) })));
    expect(response.status).toBe(413);
    expect(inbox.size).toBe(0);
  });

  it("the inbox cannot store: 503 with Retry-After, and the retry is stored", async () => {
    const { inbox, flaky, recover } = flakyInbox();
    const onError = vi.fn();
    const app = adaptFetch(createWebhookConsumer({ inbox: flaky, secrets: secret, onError }));
    const d = delivery("msg_fetch_503");
    const refused = await app(webhookRequest(d));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect((await refused.json()).code).toBe("inbox_unavailable");
    expect(onError).toHaveBeenCalledTimes(1);
    expect(inbox.size).toBe(0);
    recover();
    expect((await app(webhookRequest(d))).status).toBe(202);
    expect((await inbox.get("msg_fetch_503"))?.state).toBe("pending");
  });

  describe("the Fetch adapter: onStored after the Response is returned", () => {
    it("runs onStored only once the caller holds the Response", async () => {
      const order: string[] = [];
      const consumer = createWebhookConsumer({
        inbox: createMemoryInbox(),
        secrets: secret,
        onStored: (event) => void order.push(`onStored ${event.id}`),
      });
      const app = adaptFetch(consumer);
      const response = await app(webhookRequest(delivery("msg_after")));
      order.push(`caller has ${response.status}`);
      await new Promise((resolve) => setImmediate(resolve));
      expect(order).toEqual(["caller has 202", "onStored msg_after"]);
    });

    it("hands the callback to the adapter's `afterSend` when given, and runs nothing for a refusal", async () => {
      const deferred: Array<() => void> = [];
      const onStored = vi.fn();
      const app = adaptFetch(createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret, onStored }), {
        afterSend: (run) => void deferred.push(run),
      });
      const d = delivery("msg_defer");
      expect((await app(webhookRequest({ ...d, body: `${d.body} ` }))).status).toBe(400);
      expect((await app(webhookRequest(d))).status).toBe(202);
      await new Promise((resolve) => setImmediate(resolve));
      expect(onStored).not.toHaveBeenCalled();
      expect(deferred).toHaveLength(1);
      deferred[0]?.();
      expect(onStored).toHaveBeenCalledTimes(1);
    });

    it("keeps the Fetch adapter's answers (413 over its bodyLimit)", async () => {
      const app = adaptFetch(createWebhookConsumer({ inbox: createMemoryInbox(), secrets: secret }), {
        bodyLimit: 64,
      });
      expect((await app(webhookRequest(delivery("msg_big", { data: "x".repeat(100) })))).status).toBe(413);
    });

    it("runs onStored after the Response with the default scheduling too", async () => {
      const inbox = createMemoryInbox();
      const order: string[] = [];
      const onStored = vi.fn(() => order.push("onStored"));
      const app = adaptFetch(createWebhookConsumer({ inbox, secrets: secret, onStored }));
      const response = await app(webhookRequest(delivery("msg_plain")));
      order.push("response");
      expect(response.status).toBe(202);
      await new Promise((resolve) => setImmediate(resolve));
      expect(order).toStrictEqual(["response", "onStored"]);
      expect((await inbox.get("msg_plain"))?.state).toBe("pending");
    });
  });
});
