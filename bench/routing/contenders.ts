import FindMyWay from "find-my-way";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { TrieRouter } from "hono/router/trie-router";
import { Memoirist } from "memoirist";
import { addRoute, createRouter, findRoute, type MatchedRoute } from "rou3";
import { compileRouter } from "rou3/compiler";
import { compileMatcher } from "../../src/routing/index";
import type { RouteTable } from "./data";

/** A normalised answer, for the correctness check before timing. */
export interface Answer {
  readonly route: number;
  readonly params: Record<string, string>;
}

/** A router under test: its native lookup (timed) and the same lookup normalised (checked). */
export interface Contender {
  readonly name: string;
  /** It generates JavaScript at runtime (`new Function`), which a CSP without `unsafe-eval` forbids. */
  readonly generatesCode: boolean;
  /** The raw lookup, as the router's own framework calls it. */
  readonly lookup: (method: string, path: string) => unknown;
  /**
   * The answer for a request; Hono's routers return every matching route in registration order
   * (Hono runs them in turn), so for them the expected route is picked from that list.
   */
  readonly answer: (method: string, path: string, expected: number) => Answer | undefined;
  /** Whether its wildcard captures the rest of the path as a parameter. */
  readonly capturesWildcard: boolean;
  /** Whether it splits a segment such as `:base...:head` into two parameters. */
  readonly splitsComposites: boolean;
}

function ours(table: RouteTable): Contender {
  const matcher = compileMatcher(
    table.routes.map((route, i) => ({ method: route.method, template: route.braces, route: i })),
  );
  const lookup = (method: string, path: string) => matcher.match(method, path);
  return {
    name: "rest-webhooks",
    generatesCode: false,
    lookup,
    splitsComposites: true,
    capturesWildcard: true,
    answer(method, path) {
      const result = matcher.match(method, path);
      return result.kind === "found" ? { route: result.route, params: { ...result.params } } : undefined;
    },
  };
}

function findMyWay(table: RouteTable, compiled: boolean): Contender {
  const router = FindMyWay();
  table.routes.forEach((route, i) => {
    router.on(route.method as "GET", route.colon, () => undefined, { i });
  });
  // Its documented fastest mode: each method's tree compiled into generated JavaScript.
  if (compiled) router.compile();
  const lookup = (method: string, path: string) => router.find(method as "GET", path);
  return {
    name: compiled ? "find-my-way compile()" : "find-my-way",
    generatesCode: compiled,
    lookup,
    splitsComposites: true,
    capturesWildcard: true,
    answer(method, path) {
      const found = router.find(method as "GET", path);
      if (found === null) return undefined;
      return { route: (found.store as { i: number }).i, params: { ...(found.params as Record<string, string>) } };
    },
  };
}

function honoRegExp(table: RouteTable): Contender {
  const router = new RegExpRouter<number>();
  table.routes.forEach((route, i) => {
    router.add(route.method, route.colon, i);
  });
  const lookup = (method: string, path: string) => router.match(method, path);
  return {
    name: "hono RegExpRouter",
    generatesCode: false,
    lookup,
    splitsComposites: false,
    capturesWildcard: false,
    answer(method, path, expected) {
      const [handlers, stash] = router.match(method, path);
      const first = handlers.find((handler) => handler[0] === expected) ?? handlers[0];
      if (first === undefined) return undefined;
      const [route, indexes] = first as [number, Record<string, number>];
      const params: Record<string, string> = {};
      for (const [name, index] of Object.entries(indexes)) {
        params[name] = stash ? decodeURIComponent(stash[index] as string) : String(index);
      }
      return { route, params };
    },
  };
}

function honoTrie(table: RouteTable): Contender {
  const router = new TrieRouter<number>();
  table.routes.forEach((route, i) => {
    router.add(route.method, route.colon, i);
  });
  const lookup = (method: string, path: string) => router.match(method, path);
  return {
    name: "hono TrieRouter",
    generatesCode: false,
    lookup,
    splitsComposites: false,
    capturesWildcard: false,
    answer(method, path, expected) {
      const [handlers] = router.match(method, path);
      const first = (handlers.find((handler) => handler[0] === expected) ?? handlers[0]) as
        | [number, Record<string, string>]
        | undefined;
      if (first === undefined) return undefined;
      return { route: first[0], params: { ...first[1] } };
    },
  };
}

function rou3(table: RouteTable, compiled: boolean): Contender {
  const router = createRouter<number>();
  // rou3 reports a trailing "**" catch-all as "_" (and "0"); map it back to "*" for the check.
  table.routes.forEach((route, i) => {
    addRoute(router, route.method, route.colon.replace(/\/\*$/, "/**"), i);
  });
  // Its documented fastest mode: the router compiled into one generated function.
  const find: (method: string, path: string) => MatchedRoute<number> | undefined = compiled
    ? compileRouter(router)
    : (method, path) => findRoute(router, method, path);
  return {
    name: compiled ? "rou3 compileRouter" : "rou3",
    generatesCode: compiled,
    lookup: find,
    splitsComposites: true,
    capturesWildcard: true,
    answer(method, path) {
      const found = find(method, path);
      if (found === undefined) return undefined;
      const params: Record<string, string> = {};
      for (const [name, value] of Object.entries(found.params ?? {}))
        params[name === "_" || name === "0" ? "*" : name] = value;
      return { route: found.data, params };
    },
  };
}

function memoirist(table: RouteTable): Contender {
  const router = new Memoirist<number>();
  table.routes.forEach((route, i) => {
    router.add(route.method, route.colon, i);
  });
  const lookup = (method: string, path: string) => router.find(method, path);
  return {
    name: "memoirist",
    generatesCode: false,
    lookup,
    splitsComposites: false,
    capturesWildcard: true,
    answer(method, path) {
      const found = router.find(method, path);
      if (found === null) return undefined;
      return { route: found.store, params: { ...found.params } };
    },
  };
}

/**
 * Every router that can build the table, ours first, then the peers in their default mode, then the
 * peers' code-generating modes; the others with the reason they cannot.
 */
export function contenders(table: RouteTable): { ready: Contender[]; refused: string[] } {
  const ready: Contender[] = [];
  const refused: string[] = [];
  for (const [name, build] of [
    ["rest-webhooks", ours],
    ["find-my-way", (t: RouteTable) => findMyWay(t, false)],
    ["hono RegExpRouter", honoRegExp],
    ["hono TrieRouter", honoTrie],
    ["rou3", (t: RouteTable) => rou3(t, false)],
    ["memoirist", memoirist],
    ["find-my-way compile()", (t: RouteTable) => findMyWay(t, true)],
    ["rou3 compileRouter", (t: RouteTable) => rou3(t, true)],
  ] as const) {
    try {
      const contender = build(table);
      // Hono's RegExpRouter compiles on first match, so a refused table surfaces here.
      contender.lookup("GET", "/");
      ready.push(contender);
    } catch (error) {
      refused.push(`${name} cannot build this table: ${(error as Error).name}: ${(error as Error).message}`);
    }
  }
  return { ready, refused };
}
