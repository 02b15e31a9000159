// bench/shop: requests/s of the example shop's hottest routes (GET an order: 200 and 304; POST an order) against
// the same routes hand-written on bare node:http, Fastify and Express, each doing the same observable work (see
// WORK below and common.ts). Each server runs in a process of its own (server.ts), as it would in production;
// autocannon runs in another, servers and load generator on cores of their own when taskset allows (cores.ts). The
// machine may be shared, so each contender is warmed up first, the cases run in several short rounds, contenders
// back to back in a rotating order, and each ratio is the median over rounds of the ratio within a round.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { AS_BUILT } from "../support/as-built";
import { placeProcesses } from "../support/cores";
import { median } from "../support/median";
import { startServerProcess } from "../support/server-process";
import type { ContenderName, Question, ServedTarget } from "./server";

const placement = placeProcesses();
// BENCH_CHECK=1: the checks below and one short round of load, no figures. test/bench runs it, so a library change
// that breaks a contender's answers fails a test rather than the next bench run.
const CHECK_ONLY = process.env.BENCH_CHECK === "1";
const ROUNDS = CHECK_ONLY ? 1 : Number(process.env.BENCH_ROUNDS ?? 9);
const SECONDS = CHECK_ONLY ? 0.3 : Number(process.env.BENCH_SECONDS ?? 1);
// Per contender and case, before any round: long enough for V8 to have optimized every contender's hot path.
const WARMUP_SECONDS = CHECK_ONLY ? 0 : Number(process.env.BENCH_WARMUP ?? 1);
const loader = new URL("./load.ts", import.meta.url).pathname;
const serverScript = new URL("./server.ts", import.meta.url).pathname;
const secret = randomBytes(32).toString("base64url");
const ITEMS = { items: [{ sku: "TEA-1", quantity: 2, unit_price: 450 }] };

const WORK = [
  "every contender, on every request: verifies an HS256 JWT with jose (key imported once) and checks that its subject",
  "  may reach the user in the path (403 otherwise); answers problem documents for errors.",
  "GET /users/{id}/orders/{id}: looks the order up in a Map; ETag (strong, from the version), Last-Modified and",
  "  Cache-Control: private, no-cache; 304 with ETag and Cache-Control when not modified (RFC 9110 §13.1.2-3: the",
  "  peers decide it with `fresh`, as Express's req.fresh does; the shop with its RFC 9110 §13.2.2 evaluation).",
  "POST /users/{id}/orders: parses the JSON body and validates it with the shop's zod schema (OrderCreate), checks",
  "  the user exists, computes the total, stores the order in a Map, marks the user's order list changed, and",
  "  queues an order.created event {id, type, timestamp, data: the order as JSON} (the shop: createEvent published",
  "  in its serialized transaction to its in-memory delivery queue; the peers: pushed onto an outbox array that a",
  "  no-op worker drains on setImmediate); 201 with Location, Content-Location, ETag, Cache-Control and the order.",
  "  Last-Modified once the second of the order's change is over (the shop's settledLastModified): on the GETs, not",
  "  on a new order's 201. Ids are the shop's: a prefix and 96 random bits. Every contender answers with the same",
  "  header fields as the shop (checked before timing).",
  "the shop also validates path parameters with zod, runs its Idempotency-Key middleware (no key sent: a pass",
  "  through) and the router's method rules, as it does in production; no webhook endpoint is registered.",
];

interface Target extends ServedTarget {
  pid: number;
  /** How many `order.created` events it has queued so far (checked before timing). */
  events(): Promise<number>;
  stopCounting(): Promise<void>;
  close(): Promise<void>;
}
interface Load {
  rps: number;
  cpuPerRequestNs: number;
  statuses: Record<string, number>;
  errors: number;
}
interface Spec {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  pid: number;
}
interface Case {
  name: string;
  status: number;
  request: (t: Target) => Spec;
}

/** Loads each spec in turn from a second process, `seconds` each. */
function load(specs: Spec[], seconds: number): Promise<Load[]> {
  return new Promise((resolve, reject) => {
    const [command, ...prefix] = [...placement.loaderPrefix, process.execPath];
    const child = spawn(command as string, [...prefix, ...AS_BUILT, loader, JSON.stringify({ seconds, specs })], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), (specs.length * seconds + 30) * 1000);
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (out += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
      else resolve(JSON.parse(out.trim()) as Load[]);
    });
  });
}

/** Starts one contender in a process of its own (server.ts) and waits until it listens. */
async function startContender(contender: ContenderName): Promise<Target> {
  const server = await startServerProcess<ServedTarget, Question, number>(serverScript, { contender, secret });
  return {
    ...server.ready,
    pid: server.pid,
    events: () => server.ask("events"),
    stopCounting: async () => {
      await server.ask("stop counting");
    },
    close: () => server.close(),
  };
}

const allCases: Case[] = [
  {
    name: "GET order 200",
    status: 200,
    request: (t) => ({
      url: `${t.url}${t.orderPath}`,
      method: "GET",
      headers: { authorization: `Bearer ${t.token}` },
      pid: t.pid,
    }),
  },
  {
    name: "GET order 304",
    status: 304,
    request: (t) => ({
      url: `${t.url}${t.orderPath}`,
      method: "GET",
      headers: { authorization: `Bearer ${t.token}`, "if-none-match": '"1"' },
      pid: t.pid,
    }),
  },
  {
    name: "POST order",
    status: 201,
    request: (t) => ({
      url: `${t.url}${t.collectionPath}`,
      method: "POST",
      headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
      body: JSON.stringify(ITEMS),
      pid: t.pid,
    }),
  },
];

// BENCH_CASES=POST (a substring of case names) times only those cases.
const cases = allCases.filter((c) => c.name.includes(process.env.BENCH_CASES ?? ""));

// Header fields of the connection and its framing, not of the answer: each server's own.
const TRANSPORT = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);
// The shop's id shape: a prefix and 96 random bits in base64url.
const ORDER_ID_SHAPE = /^ord_[A-Za-z0-9_-]{16}$/;

/**
 * Conditional GETs of the seeded order that each contender must answer as the shop does, checked and not timed: a
 * timed 304 sends one strong tag, and a peer comparing If-None-Match with its ETag as strings would pass it while
 * answering 200 to these, where RFC 9110 asks for 304. The argument is the order's Last-Modified.
 */
const CONDITIONAL: { name: string; status: number; headers: (lastModified: string) => Record<string, string> }[] = [
  // RFC 9110 §13.1.2: false when any listed tag matches, by weak comparison; "*" when the order exists.
  { name: "If-None-Match: a list holding the tag", status: 304, headers: () => ({ "if-none-match": '"0", "1"' }) },
  { name: "If-None-Match: the tag, weak", status: 304, headers: () => ({ "if-none-match": 'W/"1"' }) },
  { name: "If-None-Match: *", status: 304, headers: () => ({ "if-none-match": "*" }) },
  { name: "If-None-Match: another tag", status: 200, headers: () => ({ "if-none-match": '"2"' }) },
  // RFC 9110 §13.1.3: not modified since its Last-Modified; ignored beside If-None-Match.
  { name: "If-Modified-Since: its Last-Modified", status: 304, headers: (at) => ({ "if-modified-since": at }) },
  {
    name: "If-Modified-Since: its Last-Modified, beside another tag",
    status: 200,
    headers: (at) => ({ "if-none-match": '"2"', "if-modified-since": at }),
  },
];

/** Answers every {@link CONDITIONAL} case as the RFC (and the shop) does, or throws. */
async function checkConditional(target: Target): Promise<void> {
  const authorization = `Bearer ${target.token}`;
  const url = `${target.url}${target.orderPath}`;
  const plain = await fetch(url, { headers: { authorization } });
  await plain.arrayBuffer();
  const lastModified = plain.headers.get("last-modified");
  if (lastModified === null) throw new Error(`${target.name}: the order's 200 has no Last-Modified`);
  for (const c of CONDITIONAL) {
    const response = await fetch(url, { headers: { authorization, ...c.headers(lastModified) } });
    await response.arrayBuffer();
    if (response.status !== c.status) {
      throw new Error(`${target.name} / GET order, ${c.name}: status ${response.status}, expected ${c.status}`);
    }
  }
}

/**
 * Every contender answers every case as the shop does, and queues one event per POST, before anything is timed.
 * Returns, per case, the names of the header fields it answered with (transport fields aside).
 */
async function check(target: Target): Promise<Map<string, string>> {
  const fields = new Map<string, string>();
  for (const c of allCases) {
    const spec = c.request(target);
    const eventsBefore = await target.events();
    const response = await fetch(spec.url, { method: spec.method, headers: spec.headers, body: spec.body });
    const text = await response.text();
    const fail = (why: string) => {
      throw new Error(`${target.name} / ${c.name}: ${why} (${response.status} ${text})`);
    };
    if (response.status !== c.status) fail(`status ${response.status}, expected ${c.status}`);
    // RFC 9110 §15.4.5: a 304 repeats ETag and Cache-Control; Last-Modified is optional there.
    // The seeded order's second is over, so its 200 has Last-Modified; a new order's 201 has none yet (the shop's
    // settledLastModified, which the peers follow).
    for (const name of c.status === 200 ? ["etag", "last-modified", "cache-control"] : ["etag", "cache-control"]) {
      if (response.headers.get(name) === null) fail(`no ${name}`);
    }
    if (c.status === 304 && text !== "") fail("a 304 with a body");
    if (c.status !== 304) {
      const order = JSON.parse(text) as { id?: unknown; total?: unknown };
      if (order.total !== 900) fail("wrong total");
      if (typeof order.id !== "string" || !ORDER_ID_SHAPE.test(order.id)) fail("an order id not of the shop's shape");
    }
    // RFC 9110 §8.7: the 201's body is the created resource's representation, so Content-Location names it.
    if (c.status === 201 && response.headers.get("location") === null) fail("no Location");
    if (c.status === 201 && response.headers.get("content-location") !== response.headers.get("location")) {
      fail("no Content-Location equal to the Location");
    }
    const names = [...response.headers.keys()].filter((name) => !TRANSPORT.has(name));
    fields.set(c.name, names.sort().join(", "));
    const queued = (await target.events()) - eventsBefore;
    if (queued !== (c.status === 201 ? 1 : 0)) fail(`${queued} order.created events queued`);
  }
  // Someone else's order: 403, for every contender.
  const other = await fetch(`${target.url}/users/usr_other/orders`, {
    method: "POST",
    headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
    body: JSON.stringify(ITEMS),
  });
  if (other.status !== 403) throw new Error(`${target.name}: POST to another user's orders → ${other.status}`);
  await checkConditional(target);
  return fields;
}

const targets = await Promise.all((["shop", "bare", "fastify", "express"] as const).map(startContender));
const [ours] = targets as [Target, ...Target[]];
// Every contender sends an order's Last-Modified once the second of its change is over: wait for the seeded orders'.
await new Promise((resolve) => setTimeout(resolve, 1_010 - (Date.now() % 1_000)));
// rps, and the server's CPU time per request, per round, by "case|contender".
const rounds = new Map<string, number[]>();
const cpuRounds = new Map<string, number[]>();
try {
  const shopFields = await check(ours);
  for (const target of targets.slice(1)) {
    for (const [name, fields] of await check(target)) {
      if (fields !== shopFields.get(name)) {
        throw new Error(`${target.name} / ${name}: header fields ${fields}; the shop's: ${shopFields.get(name)}`);
      }
    }
  }
  for (const target of targets) await target.stopCounting();
  console.log(
    `autocannon in a second process: 32 connections, pipelining 1; ${WARMUP_SECONDS} s of warm-up, then ${ROUNDS} rounds of ${SECONDS} s, per case and contender`,
  );
  console.log(placement.description);
  console.log(`what each contender does:\n  ${WORK.join("\n  ")}`);
  if (WARMUP_SECONDS > 0) {
    await load(
      targets.flatMap((target) => cases.map((c) => c.request(target))),
      WARMUP_SECONDS,
    );
  }
  for (let round = 0; round < ROUNDS; round++) {
    // Contenders back to back per case, in an order that rotates with the round and the case.
    const plan = cases.flatMap((c, index) =>
      targets.map((_, i) => ({ c, target: targets[(i + index + round) % targets.length] as Target })),
    );
    const results = await load(
      plan.map(({ c, target }) => c.request(target)),
      SECONDS,
    );
    for (const [i, { c, target }] of plan.entries()) {
      const result = results[i] as Load;
      const wrong = Object.entries(result.statuses).filter(([status]) => Number(status) !== c.status);
      if (wrong.length > 0 || result.errors > 0) {
        throw new Error(
          `${target.name} / ${c.name}: statuses ${JSON.stringify(result.statuses)}, ${result.errors} errors`,
        );
      }
      const key = `${c.name}|${target.name}`;
      rounds.set(key, [...(rounds.get(key) ?? []), result.rps]);
      cpuRounds.set(key, [...(cpuRounds.get(key) ?? []), result.cpuPerRequestNs]);
    }
  }
} finally {
  for (const target of targets) await target.close();
}
if (CHECK_ONLY) {
  console.log(`checked: ${targets.length} contenders answered ${cases.length} cases alike, and under load`);
  process.exit(0);
}
for (const c of cases) {
  for (const target of targets) {
    const rps = rounds.get(`${c.name}|${target.name}`) ?? [];
    const shown = rps.map((r) => Math.round(r).toLocaleString("en-US")).join(" / ");
    const cpu = median(cpuRounds.get(`${c.name}|${target.name}`) ?? []) / 1_000;
    console.log(
      `  ${c.name.padEnd(14)} ${target.name.padEnd(20)} ${Math.round(median(rps)).toLocaleString("en-US").padStart(8)} req/s median, ${Number.isFinite(cpu) ? `${cpu.toFixed(1)} µs` : "unread"} of server CPU per request (${shown})`,
    );
  }
}
for (const c of cases) {
  const mine = rounds.get(`${c.name}|${ours.name}`) ?? [];
  for (const target of targets.slice(1)) {
    const theirs = rounds.get(`${c.name}|${target.name}`) ?? [];
    const ratios = mine.map((rps, i) => rps / (theirs[i] ?? Number.NaN));
    console.log(`ratio: ${c.name} vs ${target.name} = ${median(ratios).toFixed(2)}`);
  }
}
// Requests per second of the server's CPU time (all its threads), per round: on a shared VM, time stolen from the
// server's core moves its requests/s but not its CPU time per request. Printed when the servers' CPU could be read.
for (const c of cases) {
  const mine = cpuRounds.get(`${c.name}|${ours.name}`) ?? [];
  for (const target of targets.slice(1)) {
    const theirs = cpuRounds.get(`${c.name}|${target.name}`) ?? [];
    const ratio = median(mine.map((ns, i) => (theirs[i] ?? Number.NaN) / ns));
    if (Number.isFinite(ratio)) console.log(`ratio: ${c.name} (CPU time) vs ${target.name} = ${ratio.toFixed(2)}`);
  }
}
