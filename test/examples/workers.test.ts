/** The Cloudflare Workers example (examples/frameworks/workers.ts), driven as workerd would call its `fetch`. */
import { describe, expect, it } from "vitest";
import { createWorker } from "../../examples/frameworks/workers";
import { expectedPayload, webhookFixture } from "../support/signed-webhook";

describe("the Workers example", () => {
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  const executionContext = () => ({ waitUntil: (promise: Promise<unknown>) => void promise });

  it("regression: keeps the items API's state between requests of one isolate (the app is made once)", async () => {
    const fixture = webhookFixture();
    const worker = createWorker(fixture.inbox);
    const env = { WEBHOOK_SECRET: secret };
    const created = await worker.fetch(
      new Request("https://w.example/api/items", {
        method: "POST",
        body: JSON.stringify({ name: "kettle" }),
        headers: { "content-type": "application/json" },
      }),
      env,
      executionContext(),
    );
    expect(created.status).toBe(201);
    const list = await worker.fetch(new Request("https://w.example/api/items"), env, executionContext());
    expect(await list.json()).toStrictEqual([{ id: "1", name: "kettle" }]);
    const one = await worker.fetch(new Request("https://w.example/api/items/1"), env, executionContext());
    expect(one.status).toBe(200);
  });

  it("delivers a signed webhook end to end", async () => {
    const fixture = webhookFixture();
    const worker = createWorker(fixture.inbox);
    const { body, headers } = fixture.delivery("msg_workers");
    const response = await worker.fetch(
      new Request("https://w.example/webhooks", { method: "POST", body, headers }),
      { WEBHOOK_SECRET: fixture.secret },
      executionContext(),
    );
    expect(response.status).toBe(202);
    expect(await fixture.drain()).toStrictEqual([expectedPayload("msg_workers")]);
  });
});
