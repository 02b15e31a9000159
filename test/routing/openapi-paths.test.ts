import { describe, expect, it } from "vitest";
import { json } from "../../src/http/message";
import { createRouter, type RoutingError } from "../../src/routing/index";
import { expectValid, operation } from "./openapi-support";

const info = { title: "t", version: "1" };

function conflictOf(build: () => unknown): RoutingError {
  try {
    build();
  } catch (error) {
    return error as RoutingError;
  }
  throw new Error("expected a RoutingError");
}

describe("two routes one OpenAPI path would merge (OpenAPI 3.1 §4.8.8.1)", () => {
  it.each([
    ["/files/{path}", "/files/{path*}"],
    ["/docs/{name}", "/docs/*"],
    ["/docs/*", "/docs/{name}"],
    ["/a/{x}/{rest*}", "/a/{y}/{z}"],
  ])("refuses GET %s beside GET %s, naming both, though the router routes both", (first, second) => {
    const router = createRouter()
      .route("GET", first, { name: "first" }, () => json(200, { route: "first" }))
      .route("GET", second, { name: "second" }, () => json(200, { route: "second" }));
    expect(() => router.build()).not.toThrow();
    const error = conflictOf(() => router.openapi(info));
    expect(error.name).toBe("RoutingError");
    expect(error.code).toBe("openapi_path_conflict");
    expect(error.message).toContain(`GET ${first} (first)`);
    expect(error.message).toContain(`GET ${second} (second)`);
  });

  it("puts other methods of the same OpenAPI shape in one path item, under the first template's names", async () => {
    const doc = createRouter()
      .route("GET", "/docs/{name}", { name: "doc" }, () => json(200, {}))
      .route("DELETE", "/docs/*", { name: "docs.purge" }, () => json(200, {}))
      .route("PUT", "/files/{path*}", { name: "files.put" }, () => json(200, {}))
      .route("GET", "/files/{file}", { name: "files.get" }, () => json(200, {}))
      .openapi(info);
    expect(Object.keys(doc.paths)).toEqual(["/docs/{name}", "/files/{path}"]);
    expect(operation(doc, "/docs/{name}", "delete")["parameters"][0]).toMatchObject({
      name: "name",
      description: expect.stringContaining("'/'"),
    });
    expect(operation(doc, "/files/{path}", "get")["parameters"][0].name).toBe("path");
    await expectValid(doc);
  });
});
