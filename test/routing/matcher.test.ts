import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { METHOD_NAMES } from "../../src/http/methods";
import { matchComposite } from "../../src/routing/composite";
import { compositeOverlap } from "../../src/routing/composite-overlap";
import {
  allowList,
  compileMatcher,
  type MatchOptions,
  type MatchResult,
  parseTemplate,
  RoutingError,
} from "../../src/routing/index";
import { methodSlots } from "../../src/routing/method-slots";
import { type RefRoute, referenceMatch } from "./reference";

const table = [
  { method: "GET", template: "/", route: "root" },
  { method: "GET", template: "/users", route: "users.list" },
  { method: "POST", template: "/users", route: "users.create" },
  { method: "GET", template: "/users/new", route: "users.form" },
  { method: "GET", template: "/users/{user_id}", route: "users.read" },
  { method: "DELETE", template: "/users/{user_id}", route: "users.remove" },
  { method: "GET", template: "/users/{user_id}/orders/{order_id}", route: "orders.read" },
  { method: "GET", template: "/static/*", route: "static" },
  { method: "GET", template: "/files/{path*}", route: "files" },
  { method: "GET", template: "/repos/{base}...{head}", route: "compare" },
  { method: "GET", template: "/reports/{name}.json", route: "report" },
];

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof RoutingError ? error.code : `not a RoutingError: ${String(error)}`;
  }
  return undefined;
}

describe("compileMatcher", () => {
  const m = compileMatcher(table);

  describe("static, parametric, nested and wildcard segments", () => {
    it.each([
      ["GET", "/", "root", {}],
      ["GET", "/users", "users.list", {}],
      ["POST", "/users", "users.create", {}],
      ["GET", "/users/new", "users.form", {}],
      ["DELETE", "/users/new", "users.remove", { user_id: "new" }],
      ["GET", "/users/u_1", "users.read", { user_id: "u_1" }],
      ["GET", "/users/u_1/orders/7", "orders.read", { user_id: "u_1", order_id: "7" }],
      ["GET", "/static/", "static", { "*": "" }],
      ["GET", "/static/css/site.css", "static", { "*": "css/site.css" }],
      ["GET", "/files/a/b%20c", "files", { path: "a/b c" }],
      ["GET", "/repos/main...topic", "compare", { base: "main", head: "topic" }],
      ["GET", "/repos/a...b...c", "compare", { base: "a", head: "b...c" }],
      ["GET", "/reports/q1.2024.json", "report", { name: "q1.2024" }],
    ])("%s %s → %s", (method, path, route, params) => {
      expect(m.match(method, path)).toEqual({ kind: "found", route, params });
    });

    it("prefers a literal to a parameter and a parameter to a wildcard, per method", () => {
      const n = compileMatcher([
        { method: "GET", template: "/a/{x}", route: "param" },
        { method: "GET", template: "/a/b", route: "literal" },
        { method: "GET", template: "/a/*", route: "wild" },
      ]);
      expect(n.match("GET", "/a/b")).toMatchObject({ route: "literal" });
      expect(n.match("GET", "/a/c")).toMatchObject({ route: "param" });
      expect(n.match("GET", "/a/c/d")).toMatchObject({ route: "wild" });
    });

    it("falls back from a literal that leads nowhere to a parameter, without backtracking", () => {
      const n = compileMatcher([
        { method: "GET", template: "/users/new", route: "form" },
        { method: "GET", template: "/users/{id}/orders", route: "orders" },
      ]);
      expect(n.match("GET", "/users/new/orders")).toEqual({ kind: "found", route: "orders", params: { id: "new" } });
    });

    it("needs a segment for a wildcard and never matches an empty parameter", () => {
      expect(m.match("GET", "/static").kind).toBe("not_found");
      expect(m.match("GET", "/users//orders/7").kind).toBe("not_found");
    });
  });

  describe("percent-encoding (RFC 3986 §2.1)", () => {
    it("decodes parameters only", () => {
      expect(m.match("GET", "/users/%E2%9C%93")).toMatchObject({ params: { user_id: "✓" } });
      expect(m.match("GET", "/%75sers").kind).toBe("not_found");
    });

    it.each([
      "/users/%",
      "/users/%zz",
      "/users/%E2%9C",
      "/files/ok/%C0%AF",
      "/users/%00",
      "/users/x%00y",
      "/users/%ED%A0%80",
    ])("%s is a bad path, not a crash", (path) => {
      expect(m.match("GET", path)).toMatchObject({ kind: "bad_path", code: "malformed_path" });
    });
  });

  describe("405 and 404", () => {
    it("answers method_not_allowed with the allowed methods, HEAD with GET and OPTIONS always", () => {
      expect(m.match("PUT", "/users")).toEqual({
        kind: "method_not_allowed",
        allow: ["GET", "HEAD", "POST", "OPTIONS"],
      });
      expect(m.match("PATCH", "/users/u_1")).toEqual({
        kind: "method_not_allowed",
        allow: ["GET", "HEAD", "DELETE", "OPTIONS"],
      });
    });

    it("answers HEAD from GET", () => {
      expect(m.match("HEAD", "/users/u_1")).toEqual({ kind: "found", route: "users.read", params: { user_id: "u_1" } });
    });

    it("answers not_found for unknown paths and for targets that are not paths", () => {
      for (const path of ["/nope", "/users/u_1/orders", "", "*", "users"])
        expect(m.match("GET", path).kind).toBe("not_found");
    });

    it("treats methods as case-sensitive (RFC 9110 §9.1)", () => {
      expect(m.match("get", "/users").kind).toBe("method_not_allowed");
    });
  });

  describe("policy options", () => {
    it("trailingSlash: strict (default) refuses, ignore matches, redirect points to the canonical path", () => {
      expect(m.match("GET", "/users/").kind).toBe("not_found");
      expect(compileMatcher(table, { trailingSlash: "ignore" }).match("GET", "/users/")).toMatchObject({
        kind: "found",
        route: "users.list",
      });
      expect(compileMatcher(table, { trailingSlash: "redirect" }).match("GET", "/users/u_1/")).toEqual({
        kind: "redirect",
        location: "/users/u_1",
      });
      // A wildcard still sees the slash: it matches as sent first.
      expect(compileMatcher(table, { trailingSlash: "ignore" }).match("GET", "/static/")).toMatchObject({
        params: { "*": "" },
      });
    });

    it("duplicateSlashes: strict (default), ignore, redirect", () => {
      expect(m.match("GET", "/users//u_1").kind).toBe("not_found");
      expect(compileMatcher(table, { duplicateSlashes: "ignore" }).match("GET", "//users//u_1")).toMatchObject({
        params: { user_id: "u_1" },
      });
      expect(
        compileMatcher(table, { duplicateSlashes: "redirect", trailingSlash: "ignore" }).match("GET", "/users//u_1/"),
      ).toEqual({
        kind: "redirect",
        location: "/users/u_1",
      });
    });

    describe("regression: OPTIONS /users/ answered 308 under a redirect policy (a CORS preflight fails)", () => {
      // Fetch §4.8: a preflight's response must have an ok status; a browser follows no redirect for it.
      const policies: readonly [MatchOptions, string][] = [
        [{ trailingSlash: "redirect" }, "/users/u_1/"],
        [{ duplicateSlashes: "redirect" }, "//users//u_1"],
        [{ trailingSlash: "redirect", duplicateSlashes: "redirect" }, "/users//u_1/"],
      ];

      it.each(policies)(
        "OPTIONS matches as on the canonical path, other methods still redirect (%o %s)",
        (policy, sent) => {
          const n = compileMatcher(table, policy);
          expect(n.match("OPTIONS", sent)).toEqual(n.match("OPTIONS", "/users/u_1"));
          expect(n.match("OPTIONS", sent)).toEqual({
            kind: "method_not_allowed",
            allow: ["GET", "HEAD", "DELETE", "OPTIONS"],
          });
          for (const method of ["GET", "HEAD", "DELETE", "POST"]) {
            expect(n.match(method, sent)).toEqual({ kind: "redirect", location: "/users/u_1" });
          }
        },
      );

      it("a declared OPTIONS route is found on the canonical path", () => {
        const n = compileMatcher([...table, { method: "OPTIONS", template: "/users", route: "users.options" }], {
          trailingSlash: "redirect",
        });
        expect(n.match("OPTIONS", "/users/")).toEqual({ kind: "found", route: "users.options", params: {} });
      });

      it("a path no method is redirected from (another host once normalized) is not found for OPTIONS", () => {
        const n = compileMatcher([{ method: "GET", template: "/{org}/repos", route: "repos" }], {
          trailingSlash: "redirect",
        });
        expect(n.match("GET", "/\\evil.example/repos/")).toEqual({ kind: "not_found" });
        expect(n.match("OPTIONS", "/\\evil.example/repos/")).toEqual({ kind: "not_found" });
      });
    });

    describe("regression: open redirect, 308 Location: /\\evil.example/repos (a browser goes to evil.example)", () => {
      const routes = [
        { method: "GET", template: "/{org}/repos", route: "repos" },
        { method: "GET", template: "/{a}", route: "one" },
        { method: "GET", template: "/{a}/{b}", route: "two" },
        { method: "GET", template: "/files/{path*}", route: "files" },
      ];
      const policies = [
        { trailingSlash: "redirect" },
        { duplicateSlashes: "redirect" },
        { trailingSlash: "redirect", duplicateSlashes: "redirect" },
        { trailingSlash: "ignore", duplicateSlashes: "redirect" },
        { trailingSlash: "redirect", duplicateSlashes: "ignore" },
      ] as const;
      // RFC 3986 §4.2: "//" starts a network-path reference; WHATWG URL reads "\\" as "/" and drops tab and newline.
      const elsewhere = /^\/[\t\n\r]*[/\\]/;

      it.each(policies)("never redirects to another host (%o)", (policy) => {
        const matcher = compileMatcher(routes, policy);
        for (const target of [
          "/\\evil.example/repos/",
          "//\\evil.example/repos",
          "/\\evil.example//repos",
          "/\t/evil.example/",
        ]) {
          expect(matcher.match("GET", target).kind).not.toBe("redirect");
        }
      });

      it("answers such a path as not found where the policy would redirect", () => {
        expect(compileMatcher(routes, { trailingSlash: "redirect" }).match("GET", "/\\evil.example/repos/")).toEqual({
          kind: "not_found",
        });
        expect(compileMatcher(routes, { duplicateSlashes: "redirect" }).match("GET", "//\\evil.example/repos")).toEqual(
          {
            kind: "not_found",
          },
        );
      });

      it("still redirects a path whose first segment is percent-encoded (%5C is no separator to a client)", () => {
        expect(compileMatcher(routes, { trailingSlash: "redirect" }).match("GET", "/%5Cevil.example/repos/")).toEqual({
          kind: "redirect",
          location: "/%5Cevil.example/repos",
        });
      });

      it("no redirect Location from any path starts with // or /\\ (property)", () => {
        const segment = fc.constantFrom(
          "",
          "\\",
          "\\evil.example",
          "evil.example",
          "repos",
          "files",
          "a",
          "%5C",
          "\t",
          ".",
        );
        const path = fc.array(segment, { minLength: 1, maxLength: 6 }).map((segments) => `/${segments.join("/")}`);
        fc.assert(
          fc.property(fc.constantFrom(...policies), path, (policy, target) => {
            const result = compileMatcher(routes, policy).match("GET", target);
            return result.kind !== "redirect" || !elsewhere.test(result.location);
          }),
          { numRuns: 2_000 },
        );
      });
    });

    it("caseSensitive: false folds literals, never parameter values", () => {
      const n = compileMatcher(table, { caseSensitive: false });
      expect(n.match("GET", "/USERS")).toMatchObject({ route: "users.list" });
      expect(n.match("GET", "/Users/AbC")).toMatchObject({ route: "users.read", params: { user_id: "AbC" } });
      expect(m.match("GET", "/USERS").kind).toBe("not_found");
    });

    it("caseSensitive: false folds the literals of composite segments too, never their values (regression: /files/a.JSON was not found)", () => {
      const n = compileMatcher(
        [
          { method: "GET", template: "/files/{name}.json", route: "json" },
          { method: "GET", template: "/v1/{Base}...{Head}", route: "compare" },
          { method: "GET", template: "/jobs/{id}:Cancel", route: "cancel" },
        ],
        { caseSensitive: false },
      );
      expect(n.match("GET", "/files/a.json")).toEqual({ kind: "found", route: "json", params: { name: "a" } });
      expect(n.match("GET", "/FILES/Ab.JSON")).toEqual({ kind: "found", route: "json", params: { name: "Ab" } });
      expect(n.match("GET", "/files/A.Json.jSoN")).toEqual({
        kind: "found",
        route: "json",
        params: { name: "A.Json" },
      });
      expect(n.match("GET", "/V1/Main...Dev")).toEqual({
        kind: "found",
        route: "compare",
        params: { Base: "Main", Head: "Dev" },
      });
      expect(n.match("GET", "/jobs/J1:CANCEL")).toEqual({ kind: "found", route: "cancel", params: { id: "J1" } });
      expect(n.match("GET", "/files/a.jsonx").kind).toBe("not_found");
      // Case-sensitive (the default), the literal compares as sent.
      const m2 = compileMatcher([{ method: "GET", template: "/files/{name}.json", route: "json" }]);
      expect(m2.match("GET", "/files/a.JSON").kind).toBe("not_found");
      // The build agrees: two composites that differ in case only are one route, and so are refused together.
      expect(
        code(() =>
          compileMatcher(
            [
              { method: "GET", template: "/files/{name}.json", route: 1 },
              { method: "GET", template: "/files/{name}.JSON", route: 2 },
            ],
            { caseSensitive: false },
          ),
        ),
      ).toBe("ambiguous_route");
      // …and overlapping composites are found through case too: both match "a.json".
      expect(
        code(() =>
          compileMatcher(
            [
              { method: "GET", template: "/files/{name}.json", route: 1 },
              { method: "GET", template: "/files/{base}.JS{rest}", route: 2 },
            ],
            { caseSensitive: false },
          ),
        ),
      ).toBe("ambiguous_route");
    });

    it("maxParamLength refuses a longer decoded parameter, but not a wildcard", () => {
      const n = compileMatcher(table, { maxParamLength: 4 });
      expect(n.match("GET", "/users/abcd")).toMatchObject({ kind: "found" });
      expect(n.match("GET", "/users/abcde")).toEqual({ kind: "bad_path", code: "param_too_long", param: "user_id" });
      expect(n.match("GET", "/users/%41%42%43%44")).toMatchObject({ params: { user_id: "ABCD" } });
      expect(n.match("GET", "/static/abcdefgh")).toMatchObject({ kind: "found" });
      expect(() => compileMatcher(table, { maxParamLength: 0 })).toThrow(TypeError);
    });
  });

  describe("build-time errors carry a code and name both declarations", () => {
    it.each([
      ["/users?active=true", "query_in_template"],
      ["users", "invalid_template"],
      ["/users/", "invalid_template"],
      ["/users//x", "invalid_template"],
      ["/users/{id", "invalid_template"],
      ["/users/{user-id}", "invalid_template"],
      ["/users/{__proto__}", "invalid_template"],
      ["/users/{id}/{id}", "invalid_template"],
      ["/users/*/x", "invalid_template"],
      ["/users/{a}{b}", "invalid_template"],
      ["/users/a b", "invalid_template"],
      // Dot-segments: clients remove them (RFC 3986 §5.2.4), so no request reaches such a route.
      ["/users/..", "invalid_template"],
      ["/./users", "invalid_template"],
      ["/users/%2E%2e", "invalid_template"],
    ])("%s → %s", (template, expected) => {
      expect(code(() => compileMatcher([{ method: "GET", template, route: 1 }]))).toBe(expected);
    });

    describe("refuses other routers' syntax with a hint, instead of matching it literally (issue 16)", () => {
      const cases: ReadonlyArray<{ template: string; hint: RegExp }> = [
        { template: "/users/:id", hint: /use \{id\}/ },
        { template: "/users/:user_id/orders", hint: /use \{user_id\}/ },
        { template: "/files/*.json", hint: /\{name\*\}/ },
        { template: "/a/*/b", hint: /only be the last segment/ },
        { template: "/users/(.*)", hint: /params schema/ },
        { template: "/users/(\\d+)", hint: /params schema/ },
        { template: "/users/[a-z]", hint: /params schema/ },
        { template: "/a|b", hint: /params schema/ },
        { template: "/files/path+", hint: /params schema/ },
        { template: "/reports/{name}.*", hint: /\{name\*\}/ },
        { template: "/x/:id{rest}", hint: /use \{id\}/ },
      ];
      it.each(cases)("$template", ({ template, hint }) => {
        expect(code(() => compileMatcher([{ method: "GET", template, route: 1 }]))).toBe("invalid_template");
        expect(() => compileMatcher([{ method: "GET", template, route: 1 }])).toThrow(hint);
      });

      it("keeps ':' inside a literal, a bare last '*', '$' and a composite's ':verb' (Google-style custom methods)", () => {
        const m = compileMatcher([
          { method: "GET", template: "/v1/a:b", route: 1 },
          { method: "GET", template: "/static/*", route: 2 },
          { method: "GET", template: "/odata/$metadata", route: 3 },
          { method: "POST", template: "/jobs/{id}:cancel", route: 4 },
        ]);
        expect(m.match("GET", "/v1/a:b").kind).toBe("found");
        expect(m.match("GET", "/static/x/y").kind).toBe("found");
        expect(m.match("GET", "/odata/$metadata").kind).toBe("found");
        expect(m.match("POST", "/jobs/7:cancel")).toMatchObject({ kind: "found", params: { id: "7" } });
      });
    });

    it("refuses a duplicate and an ambiguous route, naming both", () => {
      const duplicate = [
        { method: "GET", template: "/users/{id}", route: 1, label: "first" },
        { method: "GET", template: "/users/{id}", route: 2, label: "second" },
      ];
      expect(code(() => compileMatcher(duplicate))).toBe("duplicate_route");
      expect(() => compileMatcher(duplicate)).toThrow(/first[\s\S]*second|second[\s\S]*first/);
      const ambiguous = [
        { method: "GET", template: "/users/{id}", route: 1 },
        { method: "GET", template: "/users/{user_id}", route: 2 },
      ];
      expect(code(() => compileMatcher(ambiguous))).toBe("ambiguous_route");
      expect(code(() => compileMatcher(ambiguous, { caseSensitive: true }))).toBe("ambiguous_route");
      expect(
        code(() =>
          compileMatcher(
            [
              { method: "GET", template: "/Users", route: 1 },
              { method: "GET", template: "/users", route: 2 },
            ],
            { caseSensitive: false },
          ),
        ),
      ).toBe("ambiguous_route");
      // Different methods on one shape are fine.
      expect(code(() => compileMatcher([ambiguous[0] as RefLike, { ...ambiguous[1], method: "PUT" } as RefLike]))).toBe(
        undefined,
      );
    });
  });

  it("stays linear on adversarial paths (a long path of many segments matches quickly and correctly)", () => {
    const n = compileMatcher([
      { method: "GET", template: "/{a}/{b}/{c}/x", route: 1 },
      { method: "GET", template: "/a/a/a/a/*", route: 2 },
    ]);
    const path = `/${"a/".repeat(50_000)}y`;
    expect(n.match("GET", path)).toMatchObject({ route: 2 });
    expect(n.match("GET", `/${"%".repeat(10_000)}/b/c/x`).kind).toBe("bad_path");
  });
});

describe("fast paths give the documented answers", () => {
  it("a wildcard takes the rest of the path unread: empty segments, slashes and encoding included", () => {
    const n = compileMatcher([
      { method: "GET", template: "/static/*", route: "static" },
      { method: "GET", template: "/a/b/{rest*}", route: "nested" },
      { method: "GET", template: "/a/*", route: "a" },
    ]);
    expect(n.match("GET", "/static//x/%2F/")).toEqual({ kind: "found", route: "static", params: { "*": "/x///" } });
    expect(n.match("GET", "/static/%zz/ok").kind).toBe("bad_path");
    expect(n.match("GET", "/a/b/c/d")).toEqual({ kind: "found", route: "nested", params: { rest: "c/d" } });
    expect(n.match("GET", "/a/c/d")).toEqual({ kind: "found", route: "a", params: { "*": "c/d" } });
    expect(n.match("POST", "/static/x")).toEqual({ kind: "method_not_allowed", allow: ["GET", "HEAD", "OPTIONS"] });
  });

  it("decodes a parameter after a long literal prefix, and one after a literal holding %", () => {
    const n = compileMatcher([
      { method: "GET", template: "/very/long/literal/prefix/{id}", route: 1 },
      { method: "GET", template: "/a%20b/{id}", route: 2 },
    ]);
    expect(n.match("GET", "/very/long/literal/prefix/%E2%9C%93")).toMatchObject({ params: { id: "✓" } });
    expect(n.match("GET", "/very/long/literal/prefix/%E2")).toMatchObject({ kind: "bad_path", param: "id" });
    expect(n.match("GET", "/a%20b/x%2Fy")).toMatchObject({ route: 2, params: { id: "x/y" } });
  });

  it("turns a miss away at its first character only when the first segment must be a literal", () => {
    const closed = compileMatcher([{ method: "GET", template: "/users/{id}", route: 1 }]);
    expect(closed.match("GET", "/zz/users/1").kind).toBe("not_found");
    expect(closed.match("GET", "/\u00e9/x").kind).toBe("not_found");
    const open = compileMatcher([
      { method: "GET", template: "/users/{id}", route: 1 },
      { method: "GET", template: "/{tenant}/items", route: 2 },
    ]);
    expect(open.match("GET", "/zz/items")).toEqual({ kind: "found", route: 2, params: { tenant: "zz" } });
    const folded = compileMatcher([{ method: "GET", template: "/users/{id}", route: 1 }], { caseSensitive: false });
    expect(folded.match("GET", "/USERS/1")).toMatchObject({ route: 1, params: { id: "1" } });
  });

  it("finds literals among many sharing a first character (hashed lookup)", () => {
    const names = Array.from({ length: 12 }, (_, i) => `item${i}`);
    const n = compileMatcher(names.map((name, i) => ({ method: "GET", template: `/${name}/{id}`, route: i })));
    names.forEach((name, i) => {
      expect(n.match("GET", `/${name}/x`)).toEqual({ kind: "found", route: i, params: { id: "x" } });
    });
    expect(n.match("GET", "/item12/x").kind).toBe("not_found");
    expect(n.match("GET", "/item1x/x").kind).toBe("not_found");
  });

  it("gives parameters as plain objects whatever the route's shape (one constructor makes them all)", () => {
    const n = compileMatcher([
      { method: "GET", template: "/users/{id}", route: 1 },
      { method: "GET", template: "/users/{id}/orders/{order_id}", route: 2 },
      { method: "GET", template: "/files/*", route: 3 },
      { method: "GET", template: "/repos/{base}...{head}", route: 4 },
    ]);
    for (const path of ["/users/u", "/users/u/orders/o", "/files/a/b", "/repos/a...b"]) {
      const result = n.match("GET", path);
      if (result.kind !== "found") throw new Error(`${path} should be found`);
      expect(Object.getPrototypeOf(result.params)).toBe(Object.prototype);
      expect(Object.keys(result.params).length).toBeGreaterThan(0);
    }
  });

  it("answers extension methods and refuses unknown ones with 405", () => {
    const n = compileMatcher([
      { method: "PROPFIND", template: "/dav/{path}", route: "dav" },
      { method: "GET", template: "/dav/{path}", route: "get" },
    ]);
    expect(n.match("PROPFIND", "/dav/x")).toMatchObject({ route: "dav" });
    expect(n.match("MKCOL", "/dav/x")).toEqual({
      kind: "method_not_allowed",
      allow: ["GET", "HEAD", "OPTIONS", "PROPFIND"],
    });
  });
});

type RefLike = { method: string; template: string; route: number };

describe("property: the compiled matcher agrees with a naive linear scan", () => {
  const literal = fc.constantFrom("a", "b", "users", "u1", "x-y", "v1.json");
  const segment = fc.oneof(
    { weight: 5, arbitrary: literal.map((v) => ({ kind: "s" as const, v })) },
    { weight: 3, arbitrary: fc.constant({ kind: "p" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "c" as const }) },
  );
  const template = fc.tuple(fc.array(segment, { maxLength: 4 }), fc.boolean()).map(([segments, wild]) => {
    let i = 0;
    const parts = segments.map((s) => (s.kind === "s" ? s.v : s.kind === "p" ? `{p${i++}}` : `{p${i++}}-{p${i++}}`));
    if (wild) parts.push("*");
    return `/${parts.join("/")}`;
  });
  const routeTable = fc.uniqueArray(fc.tuple(fc.constantFrom("GET", "POST", "DELETE", "PATCH"), template), {
    maxLength: 14,
    // Same method and same shape is refused at build: keep one.
    selector: ([method, t]) => `${method} ${t.replace(/\{p\d+\}/g, "{}")}`,
  });
  const pathSegment = fc.oneof(
    literal,
    fc.constantFrom("", "zz", "a-b", "q-r-s", "%41", "%zz", "%E2%9C%93", "A", "u1-x"),
  );
  const path = fc.array(pathSegment, { maxLength: 6 }).map((segments) => `/${segments.join("/")}`);

  it("for generated tables and paths: same kind, route, params and Allow", () => {
    fc.assert(
      fc.property(
        routeTable,
        fc.array(fc.tuple(fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE"), path), {
          minLength: 1,
          maxLength: 20,
        }),
        (rows, requests) => {
          const routes: RefRoute[] = rows.map(([method, t], id) => ({ method, template: t === "/" ? "/" : t, id }));
          const matcher = compileMatcher(routes.map((r) => ({ method: r.method, template: r.template, route: r.id })));
          for (const [method, p] of requests) {
            const expected = referenceMatch(routes, method, p);
            const actual: MatchResult<number> = matcher.match(method, p);
            if (expected.kind === "found")
              expect(actual).toEqual({ kind: "found", route: expected.id, params: expected.params });
            else if (expected.kind === "method_not_allowed") expect(actual).toEqual(expected);
            else expect(actual.kind).toBe(expected.kind);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("property: declared HEAD and OPTIONS, extension methods, named wildcards, hostile encodings", () => {
  // What the first property leaves out: routes declared for HEAD, OPTIONS or an extension method (HEAD must still
  // fall back to GET only where no HEAD route matches), composites with a prefix or suffix literal or three parts,
  // `{name*}` tails, a percent-encoded literal, and segments holding %2F, a NUL, an encoded surrogate, an overlong form,
  // too long a value, or an encoded literal in the other hex case.
  const literal = fc.constantFrom("a", "users", "v1.json", "x", "c%2B");
  const segment = fc.oneof(
    { weight: 5, arbitrary: literal },
    { weight: 3, arbitrary: fc.constant("{p}") },
    { weight: 1, arbitrary: fc.constantFrom("{p}.json", "v{p}", "{p}.{p}.json", "{p}-{p}") },
  );
  const template = fc
    .tuple(fc.array(segment, { maxLength: 3 }), fc.constantFrom("", "/*", "/{rest*}"))
    .map(([segments, tail]) => {
      let i = 0;
      const path = `/${segments.join("/")}${tail}`.replace(/\{p\}/g, () => `{p${i++}}`);
      return path === "//*" || path === "//{rest*}" ? path.slice(1) : path;
    });
  const methods = ["GET", "HEAD", "OPTIONS", "DELETE", "PROPFIND"] as const;
  const routeTable = fc.uniqueArray(fc.tuple(fc.constantFrom(...methods), template), {
    maxLength: 12,
    selector: ([method, t]) => `${method} ${t.replace(/\{\w+\*?\}/g, (m) => (m.endsWith("*}") ? "*" : "{}"))}`,
  });
  const pathSegment = fc.oneof(
    { weight: 4, arbitrary: literal },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "",
        "a%2Fb",
        "%2f",
        "%00",
        "a%00.json",
        "%ED%A0%80",
        "%C0%AF",
        "%E2%9C%93.json",
        "va",
        "v",
        "a.b.json",
        ".json",
        "a-b-c",
        "x".repeat(9),
        "%41".repeat(9),
        "%",
        "c%2b",
        "c+",
      ),
    },
  );
  const path = fc.array(pathSegment, { maxLength: 5 }).map((segments) => `/${segments.join("/")}`);

  it("agrees with the naive scan on kind, route, params and Allow (maxParamLength: 8)", () => {
    fc.assert(
      fc.property(
        routeTable,
        fc.array(fc.tuple(fc.constantFrom(...methods, "POST", "get", "TRACE"), path), { minLength: 1, maxLength: 20 }),
        (rows, requests) => {
          const routes: RefRoute[] = rows.map(([method, t], id) => ({ method, template: t, id }));
          let matcher: ReturnType<typeof compileMatcher<number>>;
          try {
            matcher = compileMatcher(
              routes.map((r) => ({ method: r.method, template: r.template, route: r.id })),
              { maxParamLength: 8 },
            );
          } catch (error) {
            // Two composites of one method that can match one segment are refused at build (tested above).
            if (error instanceof RoutingError && error.code === "ambiguous_route") return;
            throw error;
          }
          for (const [method, p] of requests) {
            const expected = referenceMatch(routes, method, p, true, 8);
            const actual: MatchResult<number> = matcher.match(method, p);
            if (expected.kind === "found")
              expect(actual).toEqual({ kind: "found", route: expected.id, params: expected.params });
            else if (expected.kind === "method_not_allowed") expect(actual).toEqual(expected);
            else expect(actual.kind).toBe(expected.kind);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("property: many literals sharing a first character (hashed segment tables), and case folding", () => {
  // Thirteen literals start with "a": a state holding more than eight of them looks segments up by hash.
  const literals = ["a", "ab", "abc", ...Array.from({ length: 10 }, (_, i) => `a${i}`), "b", "users"];
  // Composites whose literals have a case: one shape per table (two shapes could overlap, refused at build).
  const composites = ["{p}X{p}", "{p}.Json", "Ab{p}"];
  const segment = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...literals) },
    { weight: 2, arbitrary: fc.constant("{p}") },
    { weight: 1, arbitrary: fc.constant("{c}") },
    { weight: 1, arbitrary: fc.constant("*") },
  );
  const template = (shape: string) =>
    fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => {
      let i = 0;
      // A wildcard only last; parameter names made unique.
      const cut = parts.indexOf("*");
      const kept = cut === -1 ? parts : parts.slice(0, cut + 1);
      const named = kept.map((part) => (part === "{c}" ? shape : part));
      return `/${named.map((part) => part.replace(/\{p\}/g, () => `{p${i++}}`)).join("/")}`;
    });
  const routeTable = fc.constantFrom(...composites).chain((shape) =>
    fc.uniqueArray(fc.tuple(fc.constantFrom("GET", "POST"), template(shape)), {
      minLength: 8,
      maxLength: 40,
      size: "max",
      selector: ([method, t]) => `${method} ${t.replace(/\{p\d+\}/g, "{}")}`,
    }),
  );
  const pathSegment = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...literals) },
    { weight: 1, arbitrary: fc.constantFrom("", "A3", "AB", "Users", "a10", "%61", "%zz", "zz", "a/b") },
    {
      weight: 2,
      arbitrary: fc.constantFrom("axb", "AXB", "aXbXc", "xx", "X", "a.json", "A.JSON", "b.jSoN.Json", ".json", "abc"),
    },
    { weight: 1, arbitrary: fc.constantFrom("AB", "ab", "aBz", "Abx%41", "ABX.json") },
  );
  const path = fc.array(pathSegment, { maxLength: 4 }).map((segments) => `/${segments.join("/")}`);

  it.each([true, false])("caseSensitive: %s agrees with the naive scan, composites included", (caseSensitive) => {
    fc.assert(
      fc.property(
        routeTable,
        fc.array(fc.tuple(fc.constantFrom("GET", "HEAD", "POST", "PUT"), path), { minLength: 1, maxLength: 30 }),
        (rows, requests) => {
          const routes: RefRoute[] = rows.map(([method, t], id) => ({ method, template: t, id }));
          const matcher = compileMatcher(
            routes.map((r) => ({ method: r.method, template: r.template, route: r.id })),
            { caseSensitive },
          );
          for (const [method, p] of requests) {
            const expected = referenceMatch(routes, method, p, caseSensitive);
            const actual: MatchResult<number> = matcher.match(method, p);
            if (expected.kind === "found")
              expect(actual).toEqual({ kind: "found", route: expected.id, params: expected.params });
            else if (expected.kind === "method_not_allowed") expect(actual).toEqual(expected);
            else expect(actual.kind).toBe(expected.kind);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("ambiguous composite segments are refused at build time", () => {
  const routes = (...templates: [string, string][]) =>
    templates.map(([method, template], i) => ({ method, template, route: i, label: `#${i} ${template}` }));

  it.each([
    ["/{a}-x", "/x-{a}"],
    ["/files/{name}.json", "/files/{base}.{ext}"],
    ["/p/pre{a}", "/p/{a}post"],
    ["/c/{a}...{b}", "/c/{a}..{b}"],
    ["/w/{a}-x/deep", "/w/x-{a}/*"],
    ["/{t}/{a}-x", "/{u}/x-{a}"],
  ])("%s and %s (one method) → ambiguous_route naming both", (first, second) => {
    const table = routes(["GET", first], ["GET", second]);
    expect(code(() => compileMatcher(table))).toBe("ambiguous_route");
    expect(() => compileMatcher(table)).toThrow(`#0 ${first}`);
    expect(() => compileMatcher(table)).toThrow(`#1 ${second}`);
  });

  it.each([
    ["/{a}.json", "/{a}.xml", "disjoint suffixes"],
    ["/{a}-x/foo", "/x-{a}/bar", "the rest of the paths differ"],
    ["/{a}-x", "/x-{a}/b", "different lengths"],
    ["/a/{x}-y", "/{p}/x-{z}", "a literal before a parameter decides"],
    ["/r/{a}-x", "/r/{a}", "a composite before a parameter decides"],
    ["/s/{a}.tar.gz", "/t/{a}.gz", "different literals before"],
  ])("%s and %s are fine: %s", (first, second) => {
    expect(code(() => compileMatcher(routes(["GET", first], ["GET", second])))).toBe(undefined);
  });

  it("allows overlapping composites on different methods (the method decides)", () => {
    const n = compileMatcher(routes(["GET", "/{a}-x"], ["DELETE", "/x-{a}"]));
    expect(n.match("GET", "/x-x")).toEqual({ kind: "found", route: 0, params: { a: "x" } });
    expect(n.match("DELETE", "/x-x")).toEqual({ kind: "found", route: 1, params: { a: "x" } });
  });
});

describe("compositeOverlap agrees with a brute-force search", () => {
  const pattern = (template: string) => {
    const segment = parseTemplate(`/${template}`).segments[0];
    if (segment?.kind !== "composite") throw new Error(`${template} is not a composite`);
    return segment.pattern;
  };
  const literal = fc.string({ unit: fc.constantFrom("a", "b", "-"), minLength: 1, maxLength: 3 });
  // Alternating literals and parameters, at least one of each, never two parameters side by side.
  const composite = fc
    .tuple(fc.option(literal), fc.array(literal, { minLength: 1, maxLength: 2 }), fc.boolean())
    .map(([lead, middles, trailingParam]) => {
      let i = 0;
      let out = lead ?? "";
      for (const middle of middles) out += `{p${i++}}${middle}`;
      return trailingParam ? `${out}{p${i}}` : out;
    });
  const alphabet = ["a", "b", "-", "z"];
  const strings: string[] = [];
  for (let frontier = [""], size = 1; size <= 6; size++) {
    frontier = frontier.flatMap((s) => alphabet.map((c) => s + c));
    strings.push(...frontier);
  }

  it("finds a segment both match exactly when one exists (up to 6 characters), and it does match both", () => {
    fc.assert(
      fc.property(composite, composite, (x, y) => {
        const a = pattern(x);
        const b = pattern(y);
        const witness = compositeOverlap(a, b);
        const brute = strings.find((s) => matchComposite(a, s) !== undefined && matchComposite(b, s) !== undefined);
        if (witness !== undefined) {
          expect(matchComposite(a, witness)).toBeDefined();
          expect(matchComposite(b, witness)).toBeDefined();
        }
        if (brute !== undefined) {
          expect(witness).toBeDefined();
          // Breadth-first: the witness is a shortest one.
          expect((witness as string).length).toBeLessThanOrEqual(brute.length);
        } else if (witness !== undefined) {
          expect(witness.length).toBeGreaterThan(6);
        }
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["{a}-x", "x-{a}", "x-x"],
    ["{a}.json", "{a}.xml", undefined],
    ["{n}.json", "{b}.{e}", "..json"],
  ])("%s and %s → %s", (x, y, expected) => {
    expect(compositeOverlap(pattern(x), pattern(y))).toBe(expected);
  });
});

describe("method slots follow the method table", () => {
  it("gives each table method its position, extension methods after", () => {
    const slots = methodSlots(["PROPFIND", "GET"]);
    METHOD_NAMES.forEach((name, i) => {
      expect(slots.slotOf(name)).toBe(i);
      expect(slots.names[i]).toBe(name);
    });
    expect(slots.slotOf("PROPFIND")).toBe(METHOD_NAMES.length);
    expect(slots.slotOf("MKCOL")).toBe(-1);
  });

  it("lists Allow in table order, HEAD with GET and OPTIONS always (RFC 9110 §9.3.2, §9.3.7)", () => {
    expect(allowList(["PATCH", "PROPFIND", "GET", "DELETE"])).toEqual([
      "GET",
      "HEAD",
      "DELETE",
      "OPTIONS",
      "PATCH",
      "PROPFIND",
    ]);
    expect(allowList(["POST"])).toEqual(["POST", "OPTIONS"]);
  });
});

describe("regression: a percent-encoded literal did not match the same octet spelt with the other hex case", () => {
  // RFC 3986 §2.1, §6.2.2.1: "%2b" and "%2B" are the same octet; two URIs differing only there are equivalent.
  const m = compileMatcher([
    { method: "GET", template: "/langs/c%2B%2B", route: "cpp" },
    { method: "GET", template: "/langs/{name}", route: "lang" },
    { method: "GET", template: "/tags/a%2fb", route: "slash" },
    { method: "GET", template: "/r/{id}/v%C3%A9/{k}.j%2Bson", route: "composite" },
  ]);

  it.each(["/langs/c%2B%2B", "/langs/c%2b%2b", "/langs/c%2b%2B"])(
    "%s is the literal route, not the parameter",
    (path) => {
      expect(m.match("GET", path)).toEqual({ kind: "found", route: "cpp", params: {} });
    },
  );

  it("matches a template written with lower-case hex too, and keeps parameter values as they decode", () => {
    expect(m.match("GET", "/tags/a%2Fb")).toMatchObject({ kind: "found", route: "slash" });
    expect(m.match("GET", "/r/%e2%9c%93/v%c3%a9/x%2fy.j%2bson")).toEqual({
      kind: "found",
      route: "composite",
      params: { id: "✓", k: "x/y" },
    });
    expect(m.match("GET", "/langs/c%2bx")).toEqual({ kind: "found", route: "lang", params: { name: "c+x" } });
    // "+" is a sub-delim, not the octet %2B stands for: another URI (RFC 3986 §6.2.2.2).
    expect(m.match("GET", "/langs/c++")).toMatchObject({ kind: "found", route: "lang" });
  });

  it("still compares unreserved characters as sent (%75 is not u) and refuses malformed encoding", () => {
    expect(m.match("GET", "/l%61ngs/c%2B%2B").kind).toBe("not_found");
    expect(m.match("GET", "/langs/c%2g")).toMatchObject({ kind: "bad_path", code: "malformed_path" });
  });
});
