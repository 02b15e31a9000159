import { context, INVALID_SPAN_CONTEXT, type Span, trace } from "@opentelemetry/api";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { Handler, HttpRequest } from "../../src/http/message";
import { json } from "../../src/http/message";
import { ATTRIBUTES, tracedRoute } from "../../src/otel/index";
import { createRouter } from "../../src/routing/index";
import { otelFixture } from "./otel-fixture";

const otel = otelFixture();
afterAll(() => otel.close());
beforeEach(() => otel.reset());

const request = (method: string, path: string): HttpRequest => ({
  method,
  path,
  search: "",
  query: {},
  headers: {},
  body: new Uint8Array(),
});

/** Runs `handler` inside a span named as an HTTP server instrumentation names it before routing: the method. */
async function inServerSpan(handler: Handler, sent: HttpRequest) {
  const response = await otel.tracer.startActiveSpan(sent.method, async (span) => {
    const answer = await handler(sent);
    span.end();
    return answer;
  });
  const span = otel.spans().at(-1);
  return { response, name: span?.name, route: span?.attributes[ATTRIBUTES.httpRoute] };
}

function shop() {
  return createRouter()
    .use(tracedRoute())
    .resource("/users/{user_id}/orders/{order_id}", (orders) => {
      orders.read({}, ({ params }) => json(200, { id: params.order_id }));
    })
    .handler();
}

describe("tracedRoute", () => {
  it("sets http.route to the matched template and names the server span {method} {route}", async () => {
    const { response, name, route } = await inServerSpan(shop(), request("GET", "/users/u_1/orders/o_9"));
    expect(response.status).toBe(200);
    expect(route).toBe("/users/{user_id}/orders/{order_id}");
    expect(name).toBe("GET /users/{user_id}/orders/{order_id}");
  });

  it("names HEAD from GET by the method sent", async () => {
    const { name } = await inServerSpan(shop(), request("HEAD", "/users/u_1/orders/o_9"));
    expect(name).toBe("HEAD /users/{user_id}/orders/{order_id}");
  });

  it("leaves a request with no route as the instrumentation named it (404, 405)", async () => {
    for (const [method, path] of [
      ["GET", "/nowhere"],
      ["DELETE", "/users/u_1/orders/o_9"],
    ] as const) {
      const { response, name, route } = await inServerSpan(shop(), request(method, path));
      expect([404, 405]).toContain(response.status);
      expect(name).toBe(method);
      expect(route).toBeUndefined();
    }
  });

  it("records nothing outside a span, and a span that throws changes nothing of the answer", async () => {
    expect((await shop()(request("GET", "/users/u_1/orders/o_9"))).status).toBe(200);
    const fail = () => {
      throw new Error("telemetry bug");
    };
    const broken = { ...trace.wrapSpanContext(INVALID_SPAN_CONTEXT), setAttribute: fail, updateName: fail } as Span;
    const answer = await context.with(trace.setSpan(context.active(), broken), () =>
      shop()(request("GET", "/users/u_1/orders/o_9")),
    );
    expect(answer.status).toBe(200);
  });
});
