/**
 * The endpoint API's OpenAPI states the rules its bodies are checked by: what the document's patterns and lengths
 * refuse, the API refuses, and what the API accepts, the document allows (so a client validating against it never
 * refuses a body the server would take). Rules a pattern cannot state (reserved names in any case, canonical
 * base64) are the API's alone, and said in the descriptions.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createEndpointSchema } from "../../../src/webhooks/delivery/endpoint-schema";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { bodySchema, expectValid, type Loose } from "../../routing/openapi-support";

const endpoints = createMemoryEndpointStore();
const router = declareEndpointApi(createRouter(), {
  endpoints,
  queue: createMemoryDeliveryQueue({ endpoints }),
  apiKeys: ["sk_test_0123456789abcdef0123"],
  resolve: false,
});
const document = router.openapi({ title: "t", version: "1" });
const created = bodySchema(document, "/v1/webhook_endpoints", "post");
const headers = created.properties.headers as Loose;
const secret = created.properties.secret as Loose;
const base = { url: "https://hooks.example.com/in", enabled_events: ["*"] };

/** Whether a documented string schema (pattern, minLength, maxLength) allows `value`. */
const allows = (schema: Loose, value: string) =>
  new RegExp(schema.pattern as string, "u").test(value) &&
  value.length >= (schema.minLength as number) &&
  value.length <= (schema.maxLength as number);
const accepted = (body: object) => createEndpointSchema.safeParse({ ...base, ...body }).success;

// Text near the rules' edges: token characters, separators, controls, spaces, non-ASCII, and lengths past the limits.
const near = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: fc.constantFrom(..."aZ9-_.!~`|^'", ...' :;,"()/\\\t\r\n\x00\x7fé'), maxLength }),
    fc.string({ unit: fc.constantFrom("a", "b", "-"), minLength: maxLength - 2, maxLength: maxLength + 2 }),
    fc.constantFrom("host", "Content-Type", "webhook-id", "X-Proxy-Key", "proxy-authorization", "x-api-key"),
  );

describe("OpenAPI of the endpoint API states the body rules", () => {
  it("is a valid OpenAPI 3.1 document, patterns included", async () => {
    await expectValid(document);
  });

  it("header names: the document's token pattern and lengths; the API refuses every name it refuses", () => {
    fc.assert(
      fc.property(near(66), (name) => {
        const ok = accepted({ headers: { [name]: "v" } });
        // Accepted by the API ⇒ allowed by the document; refused by the document ⇒ refused by the API.
        return !ok || allows(headers.propertyNames, name);
      }),
      { numRuns: 500 },
    );
    expect(headers.propertyNames.description).toMatch(/host.*webhook-\*.*proxy-\*/);
    expect(headers.maxProperties).toBe(20);
  });

  it("header values: the document allows exactly what the API accepts", () => {
    fc.assert(
      fc.property(
        near(1_026),
        (value) => accepted({ headers: { "x-key": value } }) === allows(headers.additionalProperties, value),
      ),
      { numRuns: 500 },
    );
  });

  it("enabled_events: every pattern the API accepts matches the document's; one the document refuses, the API refuses", () => {
    const items = (created.properties.enabled_events as Loose).items as Loose;
    const pattern = new RegExp(items.pattern as string, "u");
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "z", "0", "_", ".", "*", "A", "-", " "), maxLength: 12 }),
        (type) => {
          const ok = accepted({ enabled_events: [type] });
          return !ok || (pattern.test(type) && type.length <= (items.maxLength as number));
        },
      ),
      { numRuns: 1_000 },
    );
    for (const type of ["*", "order.*", "order.created", "invoice.payment.*", "invoice.payment.failed"]) {
      expect(pattern.test(type) && accepted({ enabled_events: [type] }), type).toBe(true);
    }
    for (const type of ["order", "order.", ".x", "*.created", "Order.created", "order.**"]) {
      expect(pattern.test(type) || accepted({ enabled_events: [type] }), type).toBe(false);
    }
  });

  it("metadata keys: the document allows exactly what the API accepts, the reserved keys refused by name", () => {
    const metadata = created.properties.metadata as Loose;
    const keys = metadata.propertyNames as Loose;
    const documented = (key: string) =>
      key.length >= (keys.minLength as number) &&
      key.length <= (keys.maxLength as number) &&
      !(keys.not.enum as string[]).includes(key);
    fc.assert(
      fc.property(
        fc.oneof(near(42), fc.constantFrom("constructor", "prototype", "__proto__", "toString", "__proto__x")),
        (key) => accepted({ metadata: { [key]: "v" } }) === documented(key),
      ),
      { numRuns: 500 },
    );
    expect(documented("constructor") || documented("prototype") || documented("__proto__")).toBe(false);
    expect(metadata.maxProperties).toBe(50);
  });

  it("secret: every secret the API accepts matches the document's pattern; one the pattern refuses, the API refuses", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc
            .uint8Array({ minLength: 16, maxLength: 72 })
            .map((bytes) => `whsec_${Buffer.from(bytes).toString("base64")}`),
          fc
            .uint8Array({ minLength: 24, maxLength: 64 })
            .map((b) => `whsec_${Buffer.from(b).toString("base64").replace(/=+$/, "")}`),
          fc
            .string({ unit: fc.constantFrom("A", "z", "0", "+", "/", "=", "_", "-"), maxLength: 100 })
            .map((s) => `whsec_${s}`),
        ),
        (value) => !accepted({ secret: value }) || new RegExp(secret.pattern as string, "u").test(value),
      ),
      { numRuns: 500 },
    );
    // The pattern is not vacuous: the bounds of 24 and 64 bytes, padded or not, match it; 23 and 65 do not.
    const pattern = new RegExp(secret.pattern as string, "u");
    for (const size of [24, 25, 63, 64]) {
      const text = Buffer.alloc(size, 7).toString("base64");
      expect(pattern.test(`whsec_${text}`) && pattern.test(`whsec_${text.replace(/=+$/, "")}`)).toBe(true);
    }
    for (const size of [23, 65]) expect(pattern.test(`whsec_${Buffer.alloc(size, 7).toString("base64")}`)).toBe(false);
  });
});
