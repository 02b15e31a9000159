/**
 * The layering the webhook modules promise: signing stands alone, delivery and consumer never import each other,
 * and only folders named for their I/O (or the framework they integrate with) touch node:http, pg, a Redis client,
 * Express or Fastify. Read from the import statements.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const src = join(root, "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every module specifier a file imports or re-exports, relative ones resolved to a path under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']/g)].map(
    (match) => match[1] as string,
  );
  return specifiers.map((specifier) =>
    specifier.startsWith(".") ? relative(src, resolve(dirname(file), specifier)) : specifier,
  );
}

const files = sources(src).map((file) => ({ path: relative(src, file), imports: importsOf(file) }));
const under = (prefix: string) => files.filter((file) => file.path.startsWith(prefix));
const importing = (group: typeof files, target: (specifier: string) => boolean) =>
  group.flatMap((file) => file.imports.filter(target).map((specifier) => `${file.path} → ${specifier}`));

describe("the import graph", () => {
  it("reads the imports it checks", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.find((file) => file.path === "webhooks/consumer/consumer-handler.ts")?.imports).toContain(
      "webhooks/signing/verify",
    );
  });

  it("signing imports neither delivery nor consumer", () => {
    expect(importing(under("webhooks/signing/"), (s) => /^webhooks\/(delivery|consumer)\//.test(s))).toEqual([]);
  });

  it("delivery and consumer do not import each other", () => {
    expect(importing(under("webhooks/delivery/"), (s) => s.startsWith("webhooks/consumer/"))).toEqual([]);
    expect(importing(under("webhooks/consumer/"), (s) => s.startsWith("webhooks/delivery/"))).toEqual([]);
  });

  it("only folders named node, fetch, postgres, redis, express or fastify import node:http, pg, Redis or a framework", () => {
    const io = /^(node:)?(http|https|http2)$|^pg$|^pg-|^ioredis$|^redis$|^@electric-sql\/pglite|^express$|^fastify$/;
    const edge = (path: string) =>
      path.split("/").some((part) => ["node", "fetch", "postgres", "redis", "express", "fastify"].includes(part));
    expect(
      importing(
        files.filter((file) => !edge(file.path)),
        (s) => io.test(s),
      ),
    ).toEqual([]);
  });

  it("only src/otel imports @opentelemetry/api: no other entry point loads it (issue 23, off means free)", () => {
    expect(importing(under("otel/"), (s) => s === "@opentelemetry/api").length).toBeGreaterThan(0);
    expect(
      importing(
        files.filter((file) => !file.path.startsWith("otel/")),
        (s) => s.startsWith("@opentelemetry/"),
      ),
    ).toEqual([]);
  });

  it("nothing outside src/otel imports src/otel", () => {
    expect(
      importing(
        files.filter((file) => !file.path.startsWith("otel/")),
        (s) => s.startsWith("otel/"),
      ),
    ).toEqual([]);
  });

  it("has no export * under src/webhooks: every export is a named decision", () => {
    const star = under("webhooks/").filter((file) =>
      /^export \* from/m.test(readFileSync(join(src, file.path), "utf8")),
    );
    expect(star.map((file) => file.path)).toEqual([]);
  });
});
