import { Validator } from "@seriousme/openapi-schema-validator";
import { expect } from "vitest";
import type { OpenApiDocument } from "../../src/routing/index";

// biome-ignore lint/suspicious/noExplicitAny: walking a JSON document in assertions.
export type Loose = Record<string, any>;

/** Checks a generated document against the official OpenAPI 3.1 schema. */
export async function expectValid(document: OpenApiDocument): Promise<void> {
  const result = await new Validator().validate(JSON.parse(JSON.stringify(document)));
  expect(result.errors).toBeUndefined();
  expect(result.valid).toBe(true);
}

/** One operation of a document, loosely typed. */
export function operation(document: OpenApiDocument, path: string, method: string): Loose {
  const found = (document.paths[path] as Loose | undefined)?.[method];
  if (found === undefined) throw new Error(`no ${method} ${path} in ${Object.keys(document.paths).join(", ")}`);
  return found as Loose;
}

/** The schema a `$ref` leads to (followed until it is not one). */
export function resolve(document: OpenApiDocument, schema: Loose): Loose {
  let current = schema;
  while (typeof current["$ref"] === "string") {
    const name = (current["$ref"] as string).replace("#/components/schemas/", "");
    const target = document.components.schemas[name];
    if (target === undefined) throw new Error(`dangling $ref ${current["$ref"]}`);
    current = target as Loose;
  }
  return current;
}

/** The JSON body schema of an operation's request, resolved. */
export function bodySchema(document: OpenApiDocument, path: string, method: string): Loose {
  return resolve(document, operation(document, path, method)["requestBody"].content["application/json"].schema);
}
