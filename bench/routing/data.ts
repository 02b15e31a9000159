import { readFileSync } from "node:fs";

/** One benchmark request: a case name, a method and a path, and the route row it must reach. */
export interface BenchRequest {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  /** Index into the route table of the expected route, or -1 for a 404. */
  readonly expected: number;
}

/** A route table in `:param` syntax (peers) and `{param}` syntax (ours). */
export interface RouteTable {
  readonly routes: readonly { method: string; colon: string; braces: string }[];
  readonly requests: readonly BenchRequest[];
}

const data = (file: string) => new URL(`../../../shared/bench-data/${file}`, import.meta.url);

function braces(template: string): string {
  return template.replace(/:(\w+)/g, "{$1}");
}

function indexOf(routes: RouteTable["routes"], method: string, colon: string): number {
  const index = routes.findIndex((route) => route.method === method && route.colon === colon);
  if (index === -1) throw new Error(`no route ${method} ${colon}`);
  return index;
}

/** The 12-route set and its 7 named requests (delvedor/router-benchmark). */
export function classicTable(): RouteTable {
  const json = JSON.parse(readFileSync(data("classic-routes.json"), "utf8")) as {
    routes: [string, string][];
    requests: [string, string, string][];
  };
  const routes = json.routes.map(([method, colon]) => ({ method, colon, braces: braces(colon) }));
  const templateOf: Record<string, string> = {
    "/user": "/user",
    "/user/comments": "/user/comments",
    "/user/lookup/username/hey": "/user/lookup/username/:username",
    "/event/abcd1234/comments": "/event/:id/comments",
    "/event/abcd1234/comment": "/event/:id/comment",
    "/very/deeply/nested/route/hello/there": "/very/deeply/nested/route/hello/there",
    "/static/index.html": "/static/*",
  };
  const requests = json.requests.map(([name, method, path]) => ({
    name,
    method,
    path,
    expected: indexOf(routes, method, templateOf[path] as string),
  }));
  return { routes, requests };
}

/** The 516-row GitHub REST API table: each row's sample URL must reach that row. */
export function githubTable(): RouteTable {
  const rows = JSON.parse(readFileSync(data("github-api-routes.json"), "utf8")) as [string, string, string][];
  const routes = rows.map(([method, colon]) => ({ method, colon, braces: braces(colon) }));
  const requests = rows.map(([method, colon, path]) => ({
    name: colon.includes(":") ? "params" : "static",
    method,
    path,
    expected: indexOf(routes, method, colon),
  }));
  return { routes, requests };
}

/** The parameters a request must yield: template segments aligned with path segments. */
export function expectedParams(template: string, path: string, splitComposites = true): Record<string, string> {
  const params: Record<string, string> = {};
  const t = template.split("/");
  const p = path.split("/");
  t.forEach((segment, i) => {
    if (segment === "*") params["*"] = p.slice(i).join("/");
    else if (/^:\w+$/.test(segment)) params[segment.slice(1)] = decodeURIComponent(p[i] as string);
    else if (segment.includes(":") && splitComposites) {
      // A composite segment such as ":base...:head": literals between the names.
      const names = [...segment.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
      const source = segment.split(/:\w+/).map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      const match = new RegExp(`^${source.join("(.+?)")}$`).exec(p[i] as string);
      names.forEach((name, j) => {
        params[name] = decodeURIComponent(match?.[j + 1] ?? "");
      });
    }
  });
  return params;
}
