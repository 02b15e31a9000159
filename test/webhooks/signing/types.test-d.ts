import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  github,
  sign,
  signWith,
  standardWebhooks,
  stripe,
  type VerificationErrorCode,
  type VerifyResult,
  verify,
  type WebhookScheme,
  type WebhookVerificationError,
} from "../../../src/webhooks/signing/index";

describe("public types of rest-webhooks/webhooks signing", () => {
  it("verify infers the payload from the schema, unknown without one", () => {
    const Event = z.object({ type: z.string() });
    const typed = verify({ body: "", headers: {}, secrets: "whsec_x", schema: Event });
    expectTypeOf(typed).toEqualTypeOf<VerifyResult<{ type: string }>>();
    const untyped = verify({ body: new Uint8Array(), headers: new Headers(), secrets: ["a", "b"] });
    expectTypeOf(untyped).toEqualTypeOf<VerifyResult<unknown>>();
    if (untyped.ok) {
      expectTypeOf(untyped.id).toEqualTypeOf<string | undefined>();
      expectTypeOf(untyped.timestamp).toEqualTypeOf<number | undefined>();
      expectTypeOf(untyped.scheme).toEqualTypeOf<string>();
    } else {
      expectTypeOf(untyped.error).toEqualTypeOf<WebhookVerificationError>();
      expectTypeOf(untyped.error.code).toEqualTypeOf<VerificationErrorCode>();
    }
  });

  it("accepts node:http's header record (string | string[] | undefined values)", () => {
    const incoming: Record<string, string | string[] | undefined> = {};
    expectTypeOf(verify).toBeCallableWith({ body: "", headers: incoming, secrets: "s" });
  });

  it("refuses a parsed object body and unknown options at compile time", () => {
    // @ts-expect-error a parsed object is not a raw body
    verify({ body: { a: 1 }, headers: {}, secrets: "s" });
    // @ts-expect-error parse takes "json" | "form" | "none"
    verify({ body: "", headers: {}, secrets: "s", parse: "xml" });
    // @ts-expect-error tolerance is seconds, or { past, future }
    verify({ body: "", headers: {}, secrets: "s", toleranceSeconds: { past: 1 } });
  });

  it("sign returns the three Standard Webhooks headers", () => {
    const headers = sign({ id: "msg_1", timestamp: 1, body: "", secrets: "whsec_x" });
    expectTypeOf(headers["webhook-id"]).toEqualTypeOf<string>();
    expectTypeOf(headers["webhook-timestamp"]).toEqualTypeOf<string>();
    expectTypeOf(headers["webhook-signature"]).toEqualTypeOf<string>();
    // @ts-expect-error sign needs an id
    sign({ timestamp: 1, body: "", secrets: "whsec_x" });
  });

  it("every built-in scheme is a WebhookScheme usable by signWith and verify", () => {
    expectTypeOf(standardWebhooks).toMatchTypeOf<WebhookScheme>();
    expectTypeOf(stripe).toMatchTypeOf<WebhookScheme>();
    expectTypeOf(signWith(github, { body: "", secrets: "s" })).toEqualTypeOf<Record<string, string>>();
  });
});
