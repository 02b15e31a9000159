// bench/routing: the raw lookup (method + path → route + params) of rest-webhooks' matcher against
// find-my-way, Hono's RegExpRouter and TrieRouter, rou3 and memoirist, on the classic 12-route set
// and the 516-row GitHub REST API table (../shared/bench-data). Every answer is checked before timing.
// find-my-way and rou3 also run in their documented fastest modes, which generate JavaScript at runtime
// (`new Function`): shown apart, since ours must run where eval is forbidden.
import { isDeepStrictEqual } from "node:util";
import { compileMatcher } from "../../src/routing/index";
import { type Contender, contenders } from "./contenders";
import { type BenchRequest, classicTable, expectedParams, githubTable, type RouteTable } from "./data";
import { type Timer, timer } from "./measure";

// Each peer is timed in pairs with ours (ours, peer, then peer, ours in the next round), and the
// ratio is the median of the per-pair ratios: on a shared machine, load changes between rounds
// cancel out of a ratio measured a few milliseconds apart.
const ROUNDS = 15;
const SAMPLE_MS = 12;
const WARMUP_MS = 150;

interface Case {
  readonly name: string;
  readonly requests: readonly BenchRequest[];
}

function check(table: RouteTable, contender: Contender, requests: readonly BenchRequest[]): void {
  for (const request of requests) {
    const answer = contender.answer(request.method, request.path, request.expected);
    if (request.expected === -1) {
      if (answer !== undefined)
        throw new Error(`${contender.name}: ${request.method} ${request.path} should be a miss`);
      continue;
    }
    const route = table.routes[request.expected];
    if (route === undefined) throw new Error("bad expectation");
    const params = expectedParams(route.colon, request.path, contender.splitsComposites);
    if (!contender.capturesWildcard) delete params["*"];
    if (answer !== undefined && !contender.splitsComposites) {
      // Only the route is checked for a composite segment the router does not split.
      for (const name of Object.keys(answer.params)) if (!/^\w+$|^\*$/.test(name)) delete answer.params[name];
    }
    if (answer?.route !== request.expected || !isDeepStrictEqual(answer.params, params)) {
      throw new Error(
        `${contender.name}: ${request.method} ${request.path} gave ${JSON.stringify(answer)}, expected route ${request.expected} ${JSON.stringify(params)}`,
      );
    }
  }
}

function misses(table: RouteTable, count: number): BenchRequest[] {
  // Paths no route matches: each sample with an unknown segment in front.
  return table.requests.slice(0, count).map((request, i) => ({
    name: "not found",
    method: request.method,
    path: `/zz${i}${request.path}`,
    expected: -1,
  }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const format = (n: number) => Math.round(n).toLocaleString("en-US").padStart(14);

function runTable(label: string, table: RouteTable, cases: readonly Case[]): Map<string, Map<string, number>> {
  const { ready: routers, refused } = contenders(table);
  for (const contender of routers) for (const c of cases) check(table, contender, c.requests);
  console.log(`\n### ${label}: ${table.routes.length} routes; every router's answers checked on every request`);
  for (const line of refused) console.log(`  ${line}`);
  const results = new Map<string, Map<string, number>>();
  for (const c of cases) {
    const timers = routers.map((contender) => timer(contender.lookup, c.requests));
    // Warm-up: every loop optimised, ours included, before any sample counts.
    for (const t of timers) t.run(WARMUP_MS);
    const [mine, ...peers] = timers as [Timer, ...Timer[]];
    const speeds = routers.map(() => [] as number[]);
    const ratios = peers.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      peers.forEach((peer, i) => {
        let ours: number;
        let theirs: number;
        if (round % 2 === 0) {
          ours = mine.run(SAMPLE_MS);
          theirs = peer.run(SAMPLE_MS);
        } else {
          theirs = peer.run(SAMPLE_MS);
          ours = mine.run(SAMPLE_MS);
        }
        speeds[0]?.push(ours);
        speeds[i + 1]?.push(theirs);
        ratios[i]?.push(ours / theirs);
      });
    }
    const ops = new Map(routers.map((contender, i) => [contender.name, median(speeds[i] ?? [])]));
    const ratio = new Map(routers.slice(1).map((contender, i) => [contender.name, median(ratios[i] ?? [])]));
    results.set(`${label}/${c.name}`, ratio);
    console.log(`\n${label}/${c.name} (${c.requests.length} request${c.requests.length === 1 ? "" : "s"}), lookups/s:`);
    for (const [name, value] of ops) {
      const mineOverTheirs = ratio.get(name);
      const shown = mineOverTheirs === undefined ? "" : `  ours ×${mineOverTheirs.toFixed(2)}`;
      const generated = routers.find((contender) => contender.name === name)?.generatesCode ? " (generated code)" : "";
      console.log(`  ${name.padEnd(22)}${format(value)}${shown}${generated}`);
    }
  }
  return results;
}

function proveStatusCodes(table: RouteTable): void {
  // What only we answer: a matched path with an undeclared method is a 405 with Allow, not a 404.
  const matcher = compileMatcher(
    table.routes.map((route, i) => ({ method: route.method, template: route.braces, route: i })),
  );
  const probe = matcher.match("DELETE", "/events");
  const miss = matcher.match("GET", "/nowhere");
  if (probe.kind !== "method_not_allowed" || miss.kind !== "not_found") throw new Error("404/405 distinction broken");
  console.log(
    `  DELETE /events → 405, Allow: ${probe.allow.join(", ")}; GET /nowhere → 404 (peers answer "no match" for both)`,
  );
}

const classic = classicTable();
const github = githubTable();
const classicCases: Case[] = [
  ...classic.requests.map((request) => ({ name: request.name, requests: [request] })),
  { name: "all requests", requests: classic.requests },
];
const githubCases: Case[] = [
  { name: "all 516 rows", requests: github.requests },
  { name: "static rows", requests: github.requests.filter((request) => request.name === "static") },
  { name: "rows with params", requests: github.requests.filter((request) => request.name === "params") },
  { name: "not found", requests: misses(github, 100) },
];
console.log(
  "peers in this process: find-my-way, hono RegExpRouter, hono TrieRouter, rou3, memoirist; " +
    "find-my-way compile() and rou3 compileRouter (code generated at runtime)",
);
const all = new Map([...runTable("classic", classic, classicCases), ...runTable("github", github, githubCases)]);
console.log("\n### status codes");
proveStatusCodes(github);
console.log("");
for (const [name, ratios] of all) {
  for (const [peer, value] of ratios) console.log(`ratio: ${name} vs ${peer} = ${value.toFixed(2)}`);
}
