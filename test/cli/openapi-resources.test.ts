/**
 * What `check` reads from an OpenAPI 3.1 document: collections whatever the media type's parameters, the
 * Idempotency-Key header however it is declared, and bodies derived only for what is tested.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type OpenApiDocument, resourceBodies, resourcesOf } from "../../src/cli/openapi-resources";
import { UsageError } from "../../src/cli/output";

const thing = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
const IDEMPOTENCY_KEY = { name: "Idempotency-Key", in: "header", schema: { type: "string" } };

function document(post: Record<string, unknown>, extra: { pathItem?: object; components?: object } = {}) {
  return {
    openapi: "3.1.0",
    paths: {
      "/things": {
        post: { requestBody: { content: { "application/json": { schema: thing } } }, ...post },
        ...extra.pathItem,
      },
      "/things/{id}": { get: { responses: { "200": { description: "ok" } } } },
    },
    components: { schemas: {}, parameters: { IdempotencyKey: IDEMPOTENCY_KEY }, ...extra.components },
  } as OpenApiDocument;
}

describe("resourcesOf()", () => {
  describe("media types are compared without their parameters (RFC 9110 §8.3.1)", () => {
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/problem+json ; q=1"]) {
      it(`finds the collection whose POST takes ${type} (regression: "no collection")`, () => {
        const doc = document({ requestBody: { content: { [type]: { schema: thing } } } });
        expect(resourcesOf(doc, false).map((r) => r.collection)).toEqual(["/things"]);
      });
    }
    it("reads a merge-patch body declared with a charset", () => {
      const doc = document({});
      (doc.paths?.["/things/{id}"] as Record<string, unknown>).patch = {
        requestBody: { content: { "application/merge-patch+json; charset=utf-8": { schema: thing } } },
      };
      expect(resourcesOf(doc, false)[0]?.supports.patch).toBe(true);
    });
    it("follows a requestBody $ref into #/components/requestBodies", () => {
      const doc = document(
        { requestBody: { $ref: "#/components/requestBodies/Thing" } },
        { components: { requestBodies: { Thing: { content: { "application/json": { schema: thing } } } } } },
      );
      expect(resourcesOf(doc, false)).toHaveLength(1);
    });
  });

  describe("the Idempotency-Key header parameter (OpenAPI 3.1 §4.8.9, §4.8.10)", () => {
    const cases: [string, OpenApiDocument, boolean][] = [
      ["inline on the operation", document({ parameters: [IDEMPOTENCY_KEY] }), true],
      [
        "as a $ref to #/components/parameters (regression: laws silently skipped)",
        document({ parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }] }),
        true,
      ],
      [
        "on the Path Item (regression: laws silently skipped)",
        document({}, { pathItem: { parameters: [IDEMPOTENCY_KEY] } }),
        true,
      ],
      [
        "as a $ref on the Path Item",
        document({}, { pathItem: { parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }] } }),
        true,
      ],
      [
        "in the query, which is another parameter",
        document({ parameters: [{ ...IDEMPOTENCY_KEY, in: "query" }] }),
        false,
      ],
      ["a $ref to nothing", document({ parameters: [{ $ref: "#/components/parameters/Missing" }] }), false],
      ["not declared", document({}), false],
    ];
    for (const [how, doc, declared] of cases) {
      it(`${declared ? "is seen" : "is not"} ${how}`, () => {
        expect(resourcesOf(doc, false)[0]?.supports.idempotencyKey).toBe(declared);
      });
    }
  });

  describe("a $ref with a malformed percent escape points at nothing (RFC 6901 §6; regression: URIError)", () => {
    it("as a requestBody: no collection", () => {
      expect(resourcesOf(document({ requestBody: { $ref: "#/components/requestBodies/%zz" } }), false)).toEqual([]);
    });

    it("as a parameter: not the Idempotency-Key", () => {
      const [resource] = resourcesOf(document({ parameters: [{ $ref: "#/components/parameters/%" }] }), false);
      expect(resource?.supports.idempotencyKey).toBe(false);
    });
  });

  it("does not derive bodies: a collection whose schema gives no values is still listed", () => {
    const doc = document({
      requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/Missing" } } } },
    });
    expect(() => resourcesOf(doc, false)).not.toThrow();
    expect(resourcesOf(doc, false)).toHaveLength(1);
  });
});

describe("resourceBodies()", () => {
  it("derives values from the schemas", () => {
    const [resource] = resourcesOf(document({}), false);
    if (resource === undefined) throw new Error("no resource");
    const [value] = fc.sample(resourceBodies(document({}), resource).createBody, { numRuns: 1, seed: 1 });
    expect(value).toMatchObject({ name: expect.any(String) });
  });

  for (const [what, schema] of [
    ["a $ref to a missing component", { $ref: "#/components/schemas/Thing" }],
    ['type: "file"', { type: "file" }],
    // Malformed: the derivation throws a SyntaxError, TypeError or fast-check's Error, not its own.
    ['pattern: "(" (no regular expression)', { type: "string", pattern: "(" }],
    ["a property schema that is null", { type: "object", properties: { a: null } }],
    ["an empty enum", { enum: [] }],
    ["minLength above maxLength", { type: "string", minLength: 5, maxLength: 2 }],
    ["allOf that is no array", { allOf: 5 }],
    ["a $ref that is no string", { $ref: 5 }],
  ] as const) {
    it(`is a UsageError naming the operation for ${what} (regression: a stack trace, exit 1)`, () => {
      const doc = document({ requestBody: { content: { "application/json": { schema } } } });
      const [resource] = resourcesOf(doc, false);
      if (resource === undefined) throw new Error("no resource");
      let thrown: unknown;
      try {
        resourceBodies(doc, resource);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UsageError);
      expect((thrown as UsageError).code).toBe("cli_usage");
      expect((thrown as UsageError).message).toContain("POST /things");
    });
  }
});
