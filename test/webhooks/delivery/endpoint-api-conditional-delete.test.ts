import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Handler, HttpRequest, HttpResponse } from "../../../src/http/message";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import type { EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { databases } from "../../support/databases";
import { answered, type DeliveryStores, postgresDeliveryStores } from "./delivery-stores";

const KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";
const BASE = "/v1/webhook_endpoints";
const enc = new TextEncoder();
const mergePatch = { "content-type": "application/merge-patch+json" };

function req(method: string, path: string, body?: object, headers: Record<string, string> = {}): HttpRequest {
  return {
    method,
    path,
    search: "",
    query: {},
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? new Uint8Array(0) : enc.encode(JSON.stringify(body)),
  };
}

const parse = (res: HttpResponse) => JSON.parse(String(res.body)) as Record<string, unknown>;
const etagOf = (res: HttpResponse) => res.headers.etag as string;

const memory = async (): Promise<DeliveryStores> => {
  const endpoints = createMemoryEndpointStore();
  return { endpoints, queue: createMemoryDeliveryQueue({ endpoints }) };
};
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
const backends: [string, () => Promise<DeliveryStores>][] = [
  ["memory", memory],
  ...databases().map(
    (backend) =>
      [backend.name, () => postgresDeliveryStores(backend, cleanups, { prefix: "whdel", max: 2 })] as [
        string,
        () => Promise<DeliveryStores>,
      ],
  ),
];

// RFC 9110 §13.1.1: a precondition is evaluated against the state the method acts on; a write landing after the
// request's read must not let an If-Match of the state before it delete the state after it (a lost update).
describe.each(backends)("DELETE /{endpoint_id} with preconditions, on the %s stores", (_name, open) => {
  // The API over a store whose `get` lets another client's PATCH land once, right after the read it answers: the
  // DELETE request reads the endpoint, then the PATCH changes it, then the DELETE goes on.
  let stores: DeliveryStores;
  beforeAll(async () => {
    stores = await open();
  });
  async function racingApi() {
    const inner = stores.endpoints;
    let between: (() => Promise<void>) | undefined;
    const endpoints: EndpointStore = {
      ...inner,
      async get(id) {
        const read = await inner.get(id);
        const write = between;
        between = undefined;
        if (write !== undefined) await write();
        return read;
      },
    };
    const handler: Handler = answered(
      declareEndpointApi(createRouter(), { endpoints, queue: stores.queue, apiKeys: [KEY], resolve: false }).handler(),
    );
    const created = await handler(req("POST", BASE, { url: "https://hooks.example.com/in", enabled_events: ["*"] }));
    const id = parse(created)["id"] as string;
    const afterNextRead = (write: () => Promise<void>) => {
      between = write;
    };
    return { handler, inner, id, item: `${BASE}/${id}`, afterNextRead };
  }

  it("a PATCH landing between the DELETE's read and its delete makes its If-Match stale: 412, nothing deleted (regression: checked on the read, then deleted whatever had changed)", async () => {
    const { handler, inner, id, item, afterNextRead } = await racingApi();
    const current = etagOf(await handler(req("GET", item)));
    afterNextRead(async () => {
      expect((await handler(req("PATCH", item, { description: "by B" }, mergePatch))).status).toBe(200);
    });
    const res = await handler(req("DELETE", item, undefined, { "if-match": current }));
    expect(res.status).toBe(412);
    expect(parse(res)).toMatchObject({ code: "precondition_failed", failed: "if-match" });
    expect((await inner.get(id))?.description).toBe("by B");
  });

  it("an If-None-Match naming the state a PATCH lands on between the read and the delete: 412, nothing deleted", async () => {
    const { handler, inner, id, item, afterNextRead } = await racingApi();
    const patched = await handler(req("PATCH", item, { description: "B" }, mergePatch));
    const unwanted = etagOf(patched);
    expect((await handler(req("PATCH", item, { description: "A" }, mergePatch))).status).toBe(200);
    // The caller deletes unless the endpoint is in state B; it turns B after the DELETE's read.
    afterNextRead(async () => {
      expect((await handler(req("PATCH", item, { description: "B" }, mergePatch))).status).toBe(200);
    });
    const res = await handler(req("DELETE", item, undefined, { "if-none-match": unwanted }));
    expect(res.status).toBe(412);
    expect(parse(res)).toMatchObject({ code: "precondition_failed", failed: "if-none-match" });
    expect((await inner.get(id))?.description).toBe("B");
  });

  it("a stale If-Match after a PATCH → 412 and the endpoint stays; the current ETag → 200, deleted", async () => {
    const { handler, inner, id, item } = await racingApi();
    const stale = etagOf(await handler(req("GET", item)));
    const patched = await handler(req("PATCH", item, { description: "by B" }, mergePatch));
    expect(patched.status).toBe(200);
    const refused = await handler(req("DELETE", item, undefined, { "if-match": stale }));
    expect(refused.status).toBe(412);
    expect(await inner.get(id)).toBeDefined();
    const deleted = await handler(req("DELETE", item, undefined, { "if-match": etagOf(patched) }));
    expect(deleted.status).toBe(200);
    expect(parse(deleted)).toEqual({ id, object: "webhook_endpoint", deleted: true });
    expect(await inner.get(id)).toBeUndefined();
    expect((await handler(req("DELETE", item, undefined, { "if-match": etagOf(patched) }))).status).toBe(404);
  });

  // RFC 9110 §13.1.1, §13.1.2: a field that is no entity-tag list guards nothing the server can evaluate.
  it("a malformed If-Match or If-None-Match on a write → 400 malformed_precondition, nothing written", async () => {
    const { handler, inner, id, item } = await racingApi();
    for (const field of ["if-match", "if-none-match"]) {
      const patched = await handler(req("PATCH", item, { description: "never" }, { ...mergePatch, [field]: "abc" }));
      expect(patched.status).toBe(400);
      expect(parse(patched)).toMatchObject({ code: "malformed_precondition" });
      const deleted = await handler(req("DELETE", item, undefined, { [field]: "abc" }));
      expect(deleted.status).toBe(400);
    }
    expect((await inner.get(id))?.description).not.toBe("never");
    expect(await inner.get(id)).toBeDefined();
  });

  it("a DELETE without preconditions still deletes whatever landed after its read", async () => {
    const { handler, inner, id, item, afterNextRead } = await racingApi();
    afterNextRead(async () => {
      expect((await handler(req("PATCH", item, { description: "by B" }, mergePatch))).status).toBe(200);
    });
    expect((await handler(req("DELETE", item))).status).toBe(200);
    expect(await inner.get(id)).toBeUndefined();
  });

  it("an endpoint deleted between the DELETE's read and its delete is a 404, whatever its preconditions", async () => {
    const preconditions: Record<string, string>[] = [{}, { "if-match": "*" }];
    for (const headers of preconditions) {
      const { handler, inner, id, item, afterNextRead } = await racingApi();
      afterNextRead(async () => {
        expect(await inner.delete(id)).toBe(true);
      });
      expect((await handler(req("DELETE", item, undefined, headers))).status).toBe(404);
    }
  });
});
