import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EndpointSecret, WebhookEndpoint } from "../../../src/webhooks/delivery/endpoint";
import type { EndpointPatch, EndpointStore } from "../../../src/webhooks/delivery/endpoint-store";
import { createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { createPostgresEndpointStore } from "../../../src/webhooks/delivery/postgres/index";
import { databases } from "../../support/databases";
import { deliveryDatabase } from "./delivery-stores";

// A model-based test of the EndpointStore contract (endpoint-store.ts): random sequences of create (alone and racing
// at a tenant's limit), get, list page by page, update, modify (plain, with a precondition, concurrent merges), delete
// and deleteChecked run against a reference model written here (a plain map; it shares no code with the stores), on
// the memory store, PGlite and the PostgreSQL server, and in lockstep on all of them (their answers must agree).
// Values are hostile: unicode, long strings, "__proto__" keys, empty arrays. Every value a store answers is
// scribbled on afterwards, and the next check finds the store unchanged: a store hands out copies. A watch hears every
// run: each successful write told at least once (exactly once on the memory store), nothing else, and a read started
// in the listener sees the write.

const T0 = 1_700_000_000_000;
const TENANTS = ["t1", "t2"] as const;

// --- Hostile values -------------------------------------------------------------------------------------------------

// Text both stores keep as given: any code point but U+0000 and no lone surrogate, which every store refuses with a
// TypeError (store-contract.ts checks that in each field).
const text = fc.oneof(
  fc.constantFrom("", "plain", "héllo wörld", "🌍‮rtl‬ 👩‍👩‍👧", "\u2028\u2029\ufeff", "x".repeat(20_000)),
  fc.string({ unit: "binary", maxLength: 12 }).filter((s) => !s.includes("\u0000")),
);
const key = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "toString", "", "k", "ключ", "🔑", "a".repeat(300)),
  fc.string({ unit: "binary", minLength: 1, maxLength: 6 }).filter((s) => !s.includes("\u0000")),
);
// A record with each key its own data property ("__proto__" included), as JSON.parse and jsonb make them.
const record = fc
  .array(fc.tuple(key, text), { maxLength: 4 })
  .map((entries): Record<string, string> => Object.fromEntries(entries));
const events = fc.constantFrom<string[]>([], ["*"], ["order.*", "invoice.paid"], ["ünïcode.évent", "a".repeat(500)]);
const secrets = fc.constantFrom<EndpointSecret[]>(
  [],
  [{ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", expiresAt: null }],
  [
    { secret: "whsec_old", expiresAt: T0 + 5_000 },
    { secret: "whsec_new", expiresAt: null },
  ],
);
const url = fc.constantFrom(
  "https://hooks.example.com/in",
  "https://例え.jp/パス?q=ü#f",
  `https://h.example/${"p".repeat(4_000)}`,
);
// Whole milliseconds: PostgreSQL reads timestamps back in whole microseconds.
const epoch = fc.integer({ min: 0, max: 10 }).map((n) => T0 + n * 1_000);

/** The fields a create or a patch writes, as generated (the id, tenant and creation time come from the command). */
interface Values {
  url: string;
  enabledEvents: string[];
  secrets: EndpointSecret[];
  status: "enabled" | "disabled";
  description: string;
  metadata: Record<string, string>;
  headers: Record<string, string>;
  rateLimit: number | null;
}
const values: fc.Arbitrary<Values> = fc.record({
  url,
  enabledEvents: events,
  secrets,
  status: fc.constantFrom("enabled", "disabled"),
  description: text,
  metadata: record,
  headers: record,
  rateLimit: fc.constantFrom(null, 1, 2.5, 1_000),
});
// A patch: any subset of the fields, some given as undefined (left as they are), and keys that name no patchable
// field (the tenant, the id, the creation time, "constructor"): ignored by every store.
const somePatch = fc.record(
  {
    url,
    enabledEvents: events,
    secrets,
    status: fc.constantFrom("enabled", "disabled"),
    disabledReason: fc.constantFrom(null, "manual", "failing"),
    disabledAt: fc.option(epoch, { nil: null }),
    description: fc.option(text, { nil: undefined }),
    metadata: fc.option(record, { nil: undefined }),
    headers: record,
    rateLimit: fc.constantFrom(null, 3, 0.5),
    failingSince: fc.option(epoch, { nil: null }),
    foreign: fc.constantFrom(
      { tenant: "t9" },
      { id: "we_other" },
      { createdAt: 1 },
      { allTenants: true },
      {
        constructor: "x",
      },
    ),
  },
  { requiredKeys: [] },
);
// Patches that write nothing get their own share: a store still tells them (EndpointStore.watch).
const patch = fc.oneof(
  { arbitrary: somePatch, weight: 4 },
  fc.constantFrom<Record<string, unknown>>({}, { description: undefined, metadata: undefined }, { tenant: "t9" }),
);
function patchOf(spec: Record<string, unknown>): EndpointPatch {
  const { foreign, ...fields } = spec;
  return { ...(foreign as object | undefined), ...fields } as EndpointPatch;
}

// --- Commands -------------------------------------------------------------------------------------------------------

type Command =
  | {
      op: "create";
      tenant: string | null;
      allTenants: boolean;
      createdAt: number;
      max: number | undefined;
      values: Values;
    }
  | { op: "race"; tenant: string; max: number; count: number; createdAt: number }
  | { op: "duplicate"; pick: number }
  | { op: "get"; pick: number }
  | { op: "list"; tenant: string | null | undefined; limit: number; cursor: "start" | "picked"; pick: number }
  | { op: "update"; pick: number; patch: Record<string, unknown> }
  | { op: "modify"; pick: number; patch: Record<string, unknown>; guard: "none" | "holds" | "stale" }
  | { op: "merge"; pick: number; keys: string[] }
  | { op: "delete"; pick: number }
  | { op: "deleteChecked"; pick: number; guard: "holds" | "stale" }
  | { op: "recordOutcome"; pick: number; success: boolean; at: number };

// `pick` chooses among the ids this run has used (deleted ones included) and one that never named an endpoint.
const pick = fc.nat({ max: 40 });
const commands = (races: boolean): fc.Arbitrary<Command> =>
  fc.oneof(
    {
      arbitrary: fc.record({
        op: fc.constant("create" as const),
        tenant: fc.constantFrom(null, ...TENANTS),
        // Mostly false: a tenant's endpoint with allTenants is refused (TypeError) by every store.
        allTenants: fc.constantFrom(false, false, false, true),
        createdAt: epoch,
        max: fc.constantFrom(undefined, 1, 2, 3),
        values,
      }),
      weight: 5,
    },
    {
      arbitrary: fc.record({
        op: fc.constant("race" as const),
        tenant: fc.constantFrom(...TENANTS),
        max: fc.integer({ min: 1, max: 4 }),
        count: fc.integer({ min: 2, max: 5 }),
        createdAt: epoch,
      }),
      // Which racing calls win is the database's choice: stores in lockstep would go on from different endpoints.
      weight: races ? 2 : 0,
    },
    { arbitrary: fc.record({ op: fc.constant("duplicate" as const), pick }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant("get" as const), pick }), weight: 1 },
    {
      arbitrary: fc.record({
        op: fc.constant("list" as const),
        tenant: fc.constantFrom(undefined, null, ...TENANTS),
        limit: fc.integer({ min: 0, max: 4 }),
        cursor: fc.constantFrom("start" as const, "picked" as const),
        pick,
      }),
      weight: 2,
    },
    { arbitrary: fc.record({ op: fc.constant("update" as const), pick, patch }), weight: 3 },
    {
      arbitrary: fc.record({
        op: fc.constant("modify" as const),
        pick,
        patch,
        guard: fc.constantFrom("none" as const, "holds" as const, "stale" as const),
      }),
      weight: 3,
    },
    {
      arbitrary: fc.record({
        op: fc.constant("merge" as const),
        pick,
        keys: fc.uniqueArray(key, { minLength: 2, maxLength: 5 }),
      }),
      weight: 2,
    },
    { arbitrary: fc.record({ op: fc.constant("delete" as const), pick }), weight: 1 },
    {
      arbitrary: fc.record({
        op: fc.constant("deleteChecked" as const),
        pick,
        guard: fc.constantFrom("holds" as const, "stale" as const),
      }),
      weight: 2,
    },
    {
      arbitrary: fc.record({ op: fc.constant("recordOutcome" as const), pick, success: fc.boolean(), at: epoch }),
      weight: 1,
    },
  );

// --- The reference model ---------------------------------------------------------------------------------------------

// The fields a patch writes (EndpointPatch); any other key is ignored. Written out here, not taken from a store.
const PATCHABLE = new Set([
  "url",
  "enabledEvents",
  "secrets",
  "status",
  "disabledReason",
  "disabledAt",
  "description",
  "metadata",
  "headers",
  "rateLimit",
  "failingSince",
]);

// A deep copy through JSON: every value here is JSON, and JSON.parse keeps a "__proto__" key as data.
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

class Model {
  readonly byId = new Map<string, WebhookEndpoint>();
  /** Every id this run created or tried to, in order: what `pick` chooses among, with one never used. */
  readonly used: string[] = [];
  /** Successful writes per id: each told at least once, at most twice (its own telling and the database's). */
  readonly writes = new Map<string, number>();
  #next = 0;

  constructor(readonly prefix: string) {}

  /** A new id; ids grow in the order endpoints are stored, so PostgreSQL's tie order (by id) is the memory store's. */
  newId(): string {
    const id = `${this.prefix}_${String(this.#next++).padStart(4, "0")}`;
    this.used.push(id);
    return id;
  }

  pickId(n: number): string {
    const ids = [...this.used, `${this.prefix}_never`];
    return ids[n % ids.length] as string;
  }

  count(tenant: string): number {
    let n = 0;
    for (const e of this.byId.values()) if (e.tenant === tenant) n++;
    return n;
  }

  /** EndpointStore.list's order: by creation time, then by id (the order stored, here). */
  listed(tenant: string | null | undefined): WebhookEndpoint[] {
    return [...this.byId.values()]
      .filter((e) => tenant === undefined || e.tenant === tenant)
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The endpoint after `patch`: own keys of patchable fields only, an undefined one left as it is. */
  patched(current: WebhookEndpoint, patch: EndpointPatch): WebhookEndpoint {
    const next: Record<string, unknown> = { ...current };
    for (const [field, value] of Object.entries(patch)) {
      if (value !== undefined && PATCHABLE.has(field)) next[field] = copy(value);
    }
    return next as unknown as WebhookEndpoint;
  }

  wrote(id: string, times = 1): void {
    this.writes.set(id, (this.writes.get(id) ?? 0) + times);
  }
}

function endpointOf(id: string, c: Extract<Command, { op: "create" }> | undefined, tenant: string | null, at: number) {
  const v = c?.values;
  const endpoint: WebhookEndpoint = {
    id,
    url: v?.url ?? "https://hooks.example.com/race",
    enabledEvents: v?.enabledEvents ?? ["*"],
    secrets: v?.secrets ?? [],
    status: v?.status ?? "enabled",
    disabledReason: null,
    disabledAt: null,
    description: v?.description ?? "",
    metadata: v?.metadata ?? {},
    headers: v?.headers ?? {},
    rateLimit: v?.rateLimit ?? null,
    failingSince: null,
    createdAt: at,
    tenant,
    allTenants: c?.allTenants ?? false,
  };
  // A copy for the store: the command's values stay the model's, whatever the store or the test does with its own.
  return copy(endpoint);
}

// Tries to change every part of a value a store answered; a frozen one refuses (Reflect.set answers false), a copy
// takes it. Either way the next check must find the store as the model has it.
function scribble(endpoint: WebhookEndpoint | undefined): void {
  if (endpoint === undefined) return;
  Reflect.set(endpoint, "description", "scribbled");
  Reflect.set(endpoint, "status", "disabled");
  for (const part of [endpoint.metadata, endpoint.headers]) {
    Reflect.set(part, "scribbled", "yes");
    for (const k of Object.keys(part)) Reflect.set(part, k, "scribbled");
  }
  Reflect.set(endpoint.enabledEvents, "0", "scribbled.event");
  Reflect.set(endpoint.enabledEvents, "length", 0);
  const secret = endpoint.secrets[0];
  if (secret !== undefined) Reflect.set(secret, "secret", "whsec_scribbled");
  Reflect.set(endpoint.secrets, "length", 0);
}

// A copy of a generated patch for one store (a differential run hands the same command to each): values copied, a
// field given as undefined kept so.
function patchCopy(spec: Record<string, unknown>): EndpointPatch {
  const fields = Object.entries(patchOf(spec)).map(([k, v]) => [k, v === undefined ? undefined : copy(v)] as const);
  return Object.fromEntries(fields) as EndpointPatch;
}

// Changes what a caller handed to `update` or `modify`, after the call.
function scribblePatch(patch: EndpointPatch): void {
  for (const part of [patch.metadata, patch.headers]) if (part !== undefined) Reflect.set(part, "scribbled", "yes");
  if (patch.enabledEvents !== undefined) Reflect.set(patch.enabledEvents, "length", 0);
  if (patch.secrets !== undefined) Reflect.set(patch.secrets, "length", 0);
  Reflect.set(patch, "description", "scribbled");
}

/** A promise's outcome as a value: `{ value }` or `{ error }`. */
async function settle<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

// What a refusing `next` or `check` throws: the store must reject with this very object.
class Refused extends Error {}

// --- One step on one store -------------------------------------------------------------------------------------------

/** A store under test, with what its watch heard: each id, and what a read started in the listener found. */
interface Subject {
  readonly store: EndpointStore;
  /** Whether the store tells its own writes only (each once), or also hears the database's notifications. */
  readonly exact: boolean;
  readonly heard: { id: string; read: Promise<WebhookEndpoint | undefined> }[];
}

/**
 * What the watch heard during a step, against the writes the step made (`wrote`, one id per successful write): each
 * told at least once, exactly once on a store that tells its own writes only, and nothing else but the database's
 * notifications of this run's writes. `settled` (a step of one write): a read started in the listener, after the
 * write was done, sees it; one of the step's tellings of it at least, as a notification of an earlier write may
 * arrive during the step.
 */
async function expectTold(model: Model, s: Subject, from: number, wrote: string[], settled: boolean): Promise<void> {
  const heard = s.heard.slice(from);
  const count = (list: readonly { id: string }[] | readonly string[], id: string) =>
    list.filter((x) => (typeof x === "string" ? x : x.id) === id).length;
  if (s.exact) expect(heard.map((h) => h.id).sort()).toEqual([...wrote].sort());
  for (const id of new Set(wrote)) expect(count(heard, id), `told ${id}`).toBeGreaterThanOrEqual(count(wrote, id));
  for (const id of new Set(s.heard.map((h) => h.id))) {
    expect(count(s.heard, id), `heard ${id}`).toBeLessThanOrEqual((s.exact ? 1 : 2) * (model.writes.get(id) ?? 0));
  }
  if (!settled) return;
  for (const id of new Set(wrote)) {
    const reads = await Promise.all(heard.filter((h) => h.id === id).map((h) => h.read));
    expect(reads, `read in the listener of ${id}`).toContainEqual(model.byId.get(id));
  }
}

/** Runs one command on one store, checking its answer against the model (and updating it); answers it, normalized. */
async function step(model: Model, s: Subject, c: Command): Promise<unknown> {
  const { store } = s;
  const from = s.heard.length;
  switch (c.op) {
    case "create": {
      const tenant = c.tenant;
      const endpoint = endpointOf(model.newId(), c, tenant, c.createdAt);
      const options = c.max === undefined ? undefined : { maxPerTenant: c.max };
      if (tenant !== null && endpoint.allTenants) {
        await expect(store.create(endpoint, options)).rejects.toThrow(TypeError);
        await expectTold(model, s, from, [], true);
        return "refused: allTenants";
      }
      const room = tenant === null || c.max === undefined || model.count(tenant) < c.max;
      const created = await store.create(endpoint, options);
      expect(created, `create in ${tenant} at ${tenant === null ? "-" : model.count(tenant)}/${c.max}`).toBe(room);
      // The caller's object is its own: changing it after the call changes nothing stored.
      scribble(endpoint);
      if (room) {
        model.byId.set(endpoint.id, endpointOf(endpoint.id, c, tenant, c.createdAt));
        model.wrote(endpoint.id);
      }
      await expectTold(model, s, from, room ? [endpoint.id] : [], true);
      return created;
    }
    case "race": {
      // Concurrent creations at the tenant's limit: exactly the room left is stored, whichever calls get it.
      const made = Array.from({ length: c.count }, () => endpointOf(model.newId(), undefined, c.tenant, c.createdAt));
      const answers = await Promise.all(made.map((e) => store.create(e, { maxPerTenant: c.max })));
      const room = Math.max(0, Math.min(c.count, c.max - model.count(c.tenant)));
      expect(answers.filter(Boolean), `race of ${c.count} for ${room} places`).toHaveLength(room);
      const won = made.filter((_, i) => answers[i]).map((e) => e.id);
      for (const id of won) {
        model.byId.set(id, endpointOf(id, undefined, c.tenant, c.createdAt));
        model.wrote(id);
      }
      await expectTold(model, s, from, won, false);
      return room;
    }
    case "duplicate": {
      // A second endpoint with a stored id is refused, and leaves nothing behind (PostgreSQL: not a tenant's place).
      const current = model.byId.get(model.pickId(c.pick));
      if (current === undefined) return "skipped";
      const again = { ...endpointOf(current.id, undefined, current.tenant, T0), description: "duplicate" };
      await expect(store.create(again, { maxPerTenant: 100 })).rejects.toThrow();
      await expectTold(model, s, from, [], true);
      return "refused: duplicate";
    }
    case "get": {
      const id = model.pickId(c.pick);
      const got = await store.get(id);
      expect(got).toEqual(model.byId.get(id));
      const answer = got === undefined ? undefined : copy(got);
      scribble(got);
      return answer;
    }
    case "list":
      return await list(model, store, c);
    case "update": {
      const id = model.pickId(c.pick);
      const current = model.byId.get(id);
      const given = patchCopy(c.patch);
      const updated = await store.update(id, given);
      // The caller's patch is its own: changing it after the call changes nothing stored.
      scribblePatch(given);
      const expected = current === undefined ? undefined : model.patched(current, patchOf(c.patch));
      expect(updated).toEqual(expected);
      scribble(updated);
      if (expected !== undefined) {
        model.byId.set(id, expected);
        model.wrote(id);
      }
      await expectTold(model, s, from, expected === undefined ? [] : [id], true);
      return expected === undefined ? undefined : copy(expected);
    }
    case "modify":
      return await modify(model, s, c, from);
    case "merge": {
      // Concurrent read-modify-writes of one endpoint, each adding its own metadata key: none is lost.
      const id = model.pickId(c.pick);
      const current = model.byId.get(id);
      const answers = await Promise.all(
        c.keys.map((k, i) => store.modify(id, (now) => ({ metadata: { ...now.metadata, [k]: `merged ${i}` } }))),
      );
      if (current === undefined) {
        expect(answers).toEqual(c.keys.map(() => undefined));
        await expectTold(model, s, from, [], true);
        return "missing";
      }
      // fromEntries, as the stores' spread: a "__proto__" key is set as data, not as the prototype.
      const metadata = Object.fromEntries([
        ...Object.entries(current.metadata),
        ...c.keys.map((k, i) => [k, `merged ${i}`] as const),
      ]);
      for (const [i, k] of c.keys.entries()) {
        expect(answers[i]?.metadata[k], `modify ${i} answers its own key`).toBe(`merged ${i}`);
      }
      model.byId.set(id, { ...current, metadata });
      model.wrote(id, c.keys.length);
      for (const answer of answers) scribble(answer);
      await expectTold(
        model,
        s,
        from,
        c.keys.map(() => id),
        false,
      );
      return copy(model.byId.get(id));
    }
    case "delete": {
      const id = model.pickId(c.pick);
      const deleted = await store.delete(id);
      expect(deleted).toBe(model.byId.has(id));
      if (deleted) {
        model.byId.delete(id);
        model.wrote(id);
      }
      await expectTold(model, s, from, deleted ? [id] : [], true);
      return deleted;
    }
    case "deleteChecked": {
      // The API's conditional DELETE: `check` refuses unless the endpoint is as the caller last saw it.
      const id = model.pickId(c.pick);
      const current = model.byId.get(id);
      const refused = new Refused("precondition failed");
      const seen = c.guard === "holds" ? current?.description : `${current?.description} (stale)`;
      const given: WebhookEndpoint[] = [];
      const answer = await settle(
        store.deleteChecked(id, (now) => {
          given.push(copy(now));
          if (now.description !== seen) throw refused;
        }),
      );
      if (current === undefined) {
        expect(answer).toEqual({ value: false });
        expect(given, "check not called").toEqual([]);
      } else if (c.guard === "stale") {
        expect("error" in answer && answer.error, "deleteChecked rejects with what check threw").toBe(refused);
      } else {
        expect(answer).toEqual({ value: true });
        model.byId.delete(id);
        model.wrote(id);
      }
      for (const endpoint of given) expect(endpoint, "check is given the endpoint as stored").toEqual(current);
      const wrote = current !== undefined && c.guard === "holds";
      await expectTold(model, s, from, wrote ? [id] : [], true);
      return current === undefined ? false : wrote ? true : "refused";
    }
    case "recordOutcome": {
      const id = model.pickId(c.pick);
      const current = model.byId.get(id);
      const failingSince = current === undefined ? undefined : c.success ? null : (current.failingSince ?? c.at);
      expect(await store.recordOutcome(id, c.success, c.at)).toBe(failingSince);
      if (current !== undefined && failingSince !== undefined) model.byId.set(id, { ...current, failingSince });
      // Not a write the watch tells (EndpointStore.watch), nor one PostgreSQL's trigger notifies.
      await expectTold(model, s, from, [], false);
      return failingSince;
    }
  }
}

async function modify(model: Model, s: Subject, c: Extract<Command, { op: "modify" }>, from: number): Promise<unknown> {
  const id = model.pickId(c.pick);
  const current = model.byId.get(id);
  const refused = new Refused("precondition failed");
  const seen = c.guard === "stale" ? `${current?.description} (stale)` : current?.description;
  const given: WebhookEndpoint[] = [];
  const handed: EndpointPatch[] = [];
  const answer = await settle(
    s.store.modify(id, (now) => {
      given.push(copy(now));
      if (c.guard !== "none" && now.description !== seen) throw refused;
      handed.push(patchCopy(c.patch));
      return handed.at(-1) as EndpointPatch;
    }),
  );
  // What `next` returned is the caller's: changing it after the call changes nothing stored.
  for (const patch of handed) scribblePatch(patch);
  for (const endpoint of given) expect(endpoint, "next is given the endpoint as stored").toEqual(current);
  if (current === undefined) {
    expect(answer).toEqual({ value: undefined });
    expect(given, "next not called").toEqual([]);
    await expectTold(model, s, from, [], true);
    return undefined;
  }
  if (c.guard === "stale") {
    expect(answer, "modify rejects with what next threw").toEqual({ error: refused });
    expect("error" in answer && answer.error).toBe(refused);
    await expectTold(model, s, from, [], true);
    return "refused";
  }
  if ("error" in answer) throw answer.error;
  const modified = answer.value;
  const expected = model.patched(current, patchOf(c.patch));
  expect(modified).toEqual(expected);
  scribble(modified);
  model.byId.set(id, expected);
  model.wrote(id);
  await expectTold(model, s, from, [id], true);
  return copy(expected);
}

/** Pages through the list from the command's cursor; answers the ids seen. */
async function list(model: Model, store: EndpointStore, c: Extract<Command, { op: "list" }>): Promise<unknown> {
  const all = model.listed(c.tenant);
  let after: string | undefined;
  let wanted = all;
  if (c.cursor === "picked") {
    after = model.pickId(c.pick);
    const at = all.findIndex((e) => e.id === after);
    // A cursor that names no endpoint of this list (deleted, never one, another tenant's) gives an empty page.
    wanted = at === -1 ? [] : all.slice(at + 1);
  }
  if (c.limit === 0) {
    expect(await store.list({ limit: 0, startingAfter: after, tenant: c.tenant })).toEqual([]);
    return [];
  }
  const seen: WebhookEndpoint[] = [];
  for (let page = 0; page <= wanted.length; page++) {
    const rows = await store.list({ limit: c.limit, startingAfter: after, tenant: c.tenant });
    expect(rows.length).toBeLessThanOrEqual(c.limit);
    seen.push(...rows.map(copy));
    for (const row of rows) scribble(row);
    if (rows.length < c.limit) break;
    after = rows.at(-1)?.id;
  }
  expect(seen).toEqual(wanted);
  return seen.map((e) => e.id);
}

/** After every step: the store holds what the model holds, in list order, whole and per tenant; `get` agrees. */
async function check(model: Model, s: Subject, c: Command): Promise<void> {
  for (const tenant of [undefined, null, ...TENANTS]) {
    const rows = await s.store.list({ limit: 1_000, tenant });
    expect(rows, `list of ${String(tenant)} after ${c.op}`).toEqual(model.listed(tenant));
    for (const row of rows) scribble(row);
  }
  for (const n of "pick" in c ? [c.pick, c.pick + 1] : [model.used.length - 1]) {
    const id = model.pickId(n);
    expect(await s.store.get(id), `get ${id} after ${c.op}`).toEqual(model.byId.get(id));
  }
}

// --- The stores ------------------------------------------------------------------------------------------------------

interface StoreUnderTest {
  readonly name: string;
  /** A fresh, empty store, and what closes it. */
  open(): Promise<{ store: EndpointStore; exact: boolean; close: () => Promise<void> }>;
}

const memory: StoreUnderTest = {
  name: "memory",
  async open() {
    return { store: createMemoryEndpointStore(), exact: true, close: async () => {} };
  },
};

// Each run's ids are its own: a notification of an earlier run's write (its rows deleted) names none of them.
let runs = 0;

/**
 * Runs `commands` in lockstep on every store: each step on all of them at once, then their answers compared and each
 * checked against its model.
 */
async function run(targets: readonly StoreUnderTest[], commands: readonly Command[]): Promise<void> {
  const prefix = `we_r${runs++}`;
  const opened = await Promise.all(targets.map((t) => t.open()));
  const stops: (() => void)[] = [];
  // What each store's watch heard. A step that does not check its reads (a race, a refused write) leaves them
  // unawaited: all of them are settled before the run ends, so none is still running when the suite drops the schema.
  const heards: Subject["heard"][] = [];
  try {
    const subjects = opened.map(({ store, exact }) => {
      const heard: Subject["heard"] = [];
      const stop = store.watch?.((id) => void heard.push({ id, read: store.get(id) }));
      if (stop === undefined) throw new Error("every store here has watch");
      stops.push(stop);
      heards.push(heard);
      return { store, exact, heard, model: new Model(prefix) };
    });
    for (const c of commands) {
      const answers = await Promise.all(subjects.map((s) => step(s.model, s, c)));
      for (const [i, answer] of answers.entries()) {
        expect(answer, `${targets[i]?.name} answers ${c.op} as ${targets[0]?.name} does`).toEqual(answers[0]);
      }
      await Promise.all(subjects.map((s) => check(s.model, s, c)));
    }
  } finally {
    for (const stop of stops) stop();
    await Promise.allSettled(heards.flatMap((heard) => heard.map((h) => h.read)));
    await Promise.all(opened.map((o) => o.close()));
  }
}

// Runs per store: a memory step costs microseconds; a PostgreSQL step (the command and its checks, about eight
// statements) costs a few milliseconds on the server and more on PGlite, after a first migration of a second or two.
const RUNS: Record<string, { numRuns: number; maxLength: number }> = {
  memory: { numRuns: 150, maxLength: 40 },
  pglite: { numRuns: 8, maxLength: 30 },
  postgres: { numRuns: 10, maxLength: 30 },
};
const DIFFERENTIAL = { numRuns: 6, maxLength: 30 };

describe("EndpointStore against a reference model", () => {
  const postgres = databases().map((backend): StoreUnderTest => {
    const schemas = deliveryDatabase(backend, { prefix: "model_endpoints", max: 4 });
    let migrated: string | undefined;
    return {
      name: backend.name,
      async open() {
        // One schema for the suite, its rows deleted before each run (a migration costs more than a run).
        const schema = migrated ?? (await schemas.fresh());
        if (migrated === undefined) migrated = schema;
        else {
          for (const table of ["webhook_endpoints", "webhook_tenants"]) {
            await schemas.db.query(`DELETE FROM "${schema}"."${table}"`);
          }
        }
        // Listening (the default): the watch also hears the database's notifications, so an id may come twice.
        const store = createPostgresEndpointStore({ client: schemas.db, schema });
        return { store, exact: false, close: async () => {} };
      },
    };
  });
  const stores = [memory, ...postgres];

  describe.each(stores)("$name", (target) => {
    // Regression: PostgreSQL's row decoding (zod's record) dropped the key that jsonb kept, and the memory store keeps.
    it('keeps a "__proto__" key of metadata and headers as data through create, get, list and modify', async () => {
      const { store, close } = await target.open();
      try {
        const endpoint = endpointOf("we_proto", undefined, "t1", T0);
        const metadata = JSON.parse('{"__proto__":"m","plan":"pro"}') as Record<string, string>;
        const headers = JSON.parse('{"__proto__":"h"}') as Record<string, string>;
        expect(await store.create({ ...endpoint, metadata, headers })).toBe(true);
        const stored = { ...endpoint, metadata: copy(metadata), headers: copy(headers) };
        expect(await store.get(endpoint.id)).toEqual(stored);
        expect(Object.hasOwn((await store.get(endpoint.id))?.metadata ?? {}, "__proto__")).toBe(true);
        expect(await store.list({ limit: 10, tenant: "t1" })).toEqual([stored]);
        // A merge keeps every key it was given, the "__proto__" one included.
        const merged = await store.modify(endpoint.id, (now) => ({ metadata: { ...now.metadata, more: "x" } }));
        expect(merged?.metadata).toEqual(JSON.parse('{"__proto__":"m","plan":"pro","more":"x"}'));
      } finally {
        await close();
      }
    });

    const runs = RUNS[target.name] ?? { numRuns: 10, maxLength: 30 };
    it("keeps every promise of the contract through random writes, races, lists and scribbled answers", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(commands(true), { minLength: 1, maxLength: runs.maxLength, size: "max" }),
          async (commands) => {
            await run([target], commands);
          },
        ),
        { numRuns: runs.numRuns },
      );
    });
  });

  it("gives the same answers on every store, step by step (differential)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(commands(false), { minLength: 1, maxLength: DIFFERENTIAL.maxLength, size: "max" }),
        async (commands) => {
          await run(stores, commands);
        },
      ),
      { numRuns: DIFFERENTIAL.numRuns },
    );
  });
});
