import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { QueryRecord } from "../../src/http/message";
import { json } from "../../src/http/message";
import { createRouter, type JsonValue, type PathParams } from "../../src/routing/index";

describe("routing types", () => {
  it("infers path parameters from templates", () => {
    expectTypeOf<PathParams<"/users/{user_id}/orders/{order_id}">>().toEqualTypeOf<{
      user_id: string;
      order_id: string;
    }>();
    expectTypeOf<PathParams<"/static/*">>().toEqualTypeOf<{ "*": string }>();
    expectTypeOf<PathParams<"/files/{path*}">>().toEqualTypeOf<{ path: string }>();
    expectTypeOf<PathParams<"/compare/{base}...{head}">>().toEqualTypeOf<{ base: string; head: string }>();
  });

  it("types handler contexts from the schemas and the nesting", () => {
    const Order = z.object({ total: z.number() });
    createRouter().resource("/users/{user_id}", (users) => {
      users.list({}, ({ params, query }) => {
        expectTypeOf(params).toEqualTypeOf<Record<never, string>>();
        expectTypeOf(query).toEqualTypeOf<QueryRecord>();
        return json(200, []);
      });
      users.resource("/orders/{order_id}", (orders) => {
        orders.list({ query: z.object({ status: z.enum(["a", "b"]).optional() }) }, ({ params, query }) => {
          expectTypeOf(params).toEqualTypeOf<{ user_id: string }>();
          expectTypeOf(query).toEqualTypeOf<{ status?: "a" | "b" | undefined }>();
          return json(200, []);
        });
        orders.create({ body: Order }, ({ body, created }) => {
          expectTypeOf(body).toEqualTypeOf<{ total: number }>();
          return created("o1", body);
        });
        orders.read({ params: z.object({ user_id: z.string(), order_id: z.coerce.number() }) }, ({ params }) => {
          expectTypeOf(params).toEqualTypeOf<{ user_id: string; order_id: number }>();
          return json(200, {});
        });
        orders.replace({ body: Order }, ({ body }) => {
          expectTypeOf(body).toEqualTypeOf<{ total: number }>();
          return json(200, body);
        });
        orders.replace({}, ({ body }) => {
          // Without a schema PUT still reads the JSON body: what it holds is for the handler to check.
          expectTypeOf(body).toBeUnknown();
          return json(200, {});
        });
        orders.action("POST", "cancel", {}, ({ body }) => {
          expectTypeOf(body).toBeUndefined();
          return json(200, {});
        });
        orders.update({ body: Order }, ({ merge, patch }) => {
          expectTypeOf(merge({ total: 1 })).toEqualTypeOf<{ total: number }>();
          expectTypeOf(patch).toEqualTypeOf<JsonValue>();
          return json(200, {});
        });
        orders.remove({}, ({ params }) => {
          expectTypeOf(params).toEqualTypeOf<{ user_id: string; order_id: string }>();
          return true;
        });
        // @ts-expect-error a remove handler answers whether it deleted, not a response
        orders.remove({}, () => json(204, null));
      });
    });
  });
});
