import { readFile } from "node:fs/promises";
import fc from "fast-check";
import { badSignaturesAreRejected } from "../testing/laws/consumer";
import type { ResourceSpec } from "../testing/resource-spec";
import { type NamedLaw, resourceLaws } from "../testing/suite";
import { fromBaseUrl } from "../testing/target";
import { LawViolation } from "../testing/transcript";
import { headerOptions, integerOption, parseCommand } from "./args";
import { type OpenApiDocument, type OpenApiResource, parentItem, resourcesOf } from "./openapi-resources";
import { EXIT, type Output, UsageError } from "./output";
import { secretsOption } from "./schemes";

export const checkUsage = `Usage: rest-webhooks check <base-url> [options]
       rest-webhooks check --webhook-consumer <url> --secret <secret> [options]

Runs the testing kit's HTTP laws against a live server in any language, taking its collections, items and
request schemas from its OpenAPI 3.1 document: GET/HEAD change nothing, HEAD = GET, PUT twice = once,
DELETE twice leaves it gone, POST creates each time, merge-patch twice = once, 304 for its own ETag, 412 for a
stale If-Match, Idempotency-Key replay and mismatch, errors are problem documents. A failure prints the shrunk
request sequence as HTTP and the seed that replays it. Exits 1 when a law fails.

Options:
  --openapi <url|file>   The OpenAPI document (default <base-url>/openapi.json)
  --header <h>           A header sent with every request, "name: value" (repeatable), e.g. authorization
  --path <template>      Only this collection, as written in the document (repeatable)
  --idempotency-key      Run the Idempotency-Key laws where the POST does not declare the header
  --ignore-field <name>  A top-level field that is not state (repeatable); date-time fields are ignored anyway
  --runs <n>             Runs per law (default 25)
  --seed <n>             The seed; a failure prints the one that replays it
  --webhook-consumer <url> --secret <s>
                         Check a webhook consumer instead: bad, expired, future and foreign-secret
                         signatures must get 400
  --json                 One JSON document on stdout (progress stays on a terminal's stderr)
  -h, --help             This help`;

const options = {
  openapi: { type: "string" },
  header: { type: "string", multiple: true },
  path: { type: "string", multiple: true },
  "idempotency-key": { type: "boolean" },
  "ignore-field": { type: "string", multiple: true },
  runs: { type: "string" },
  seed: { type: "string" },
  "webhook-consumer": { type: "string" },
  secret: { type: "string", multiple: true },
} as const;

/** The outcome of one law. */
interface LawOutcome {
  resource: string;
  law: string;
  passed: boolean;
  runs: number;
  reason?: string;
  counterexample?: string;
  shrinks?: number;
  requests?: string;
}

async function loadDocument(source: string, headers: Record<string, string>): Promise<OpenApiDocument> {
  let text: string;
  try {
    if (/^https?:\/\//.test(source)) {
      const response = await fetch(source, { headers: { accept: "application/json", ...headers } });
      if (!response.ok) throw new Error(`GET ${source} answered ${response.status}`);
      text = await response.text();
    } else {
      text = await readFile(source, "utf8");
    }
  } catch (error) {
    throw new UsageError(`cannot read the OpenAPI document: ${(error as Error).message}`);
  }
  try {
    const document = JSON.parse(text) as OpenApiDocument;
    if (typeof document !== "object" || document === null || typeof document.paths !== "object") {
      throw new Error("no paths object");
    }
    return document;
  } catch (error) {
    throw new UsageError(`${source} is not an OpenAPI JSON document: ${(error as Error).message}`);
  }
}

/** Fills a collection template's parameters by creating its parents (`POST /users` for `/users/{user_id}/orders`). */
async function concreteCollection(
  resource: OpenApiResource,
  all: readonly OpenApiResource[],
  base: string,
  headers: Record<string, string>,
  seed: number,
  out: Output,
): Promise<string> {
  if (!resource.collection.includes("{")) return resource.collection;
  const parent = parentItem(resource.collection);
  const owner = parent && all.find((r) => r.item === parent.item);
  if (parent === undefined || owner === undefined) {
    throw new Error(`no collection in the document creates the parent of ${resource.collection}`);
  }
  const collection = await concreteCollection(owner, all, base, headers, seed, out);
  const [body] = fc.sample(owner.createBody, { numRuns: 1, seed });
  const response = await fetch(`${base}${collection}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const location = response.headers.get("location");
  if (response.status !== 201 || location === null) {
    throw new Error(
      `creating its parent, POST ${collection} answered ${response.status}${location === null ? " without a Location" : ""}`,
    );
  }
  const path = new URL(location, `${base}${collection}`).pathname;
  out.progress(`created ${path} for ${resource.collection}`);
  return `${path}${parent.rest}`;
}

async function runLaw(law: NamedLaw, resource: string, runs: number, seed: number): Promise<LawOutcome> {
  const details = await fc.check(law.property, { numRuns: runs, seed });
  if (!details.failed) return { resource, law: law.name, passed: true, runs: details.numRuns };
  const error = details.errorInstance;
  const violation = error instanceof LawViolation ? error : undefined;
  return {
    resource,
    law: law.name,
    passed: false,
    runs: details.numRuns,
    reason: violation?.reason ?? (error instanceof Error ? error.message : String(error)),
    counterexample: fc.stringify(details.counterexample),
    shrinks: details.numShrinks,
    ...(violation === undefined ? {} : { requests: violation.transcript }),
  };
}

function printOutcome(out: Output, outcome: LawOutcome): void {
  if (outcome.passed) {
    out.line(`  ${out.green("✓")} ${outcome.law} ${out.dim(`(${outcome.runs} runs)`)}`);
    return;
  }
  out.line(`  ${out.red("✗")} ${out.bold(outcome.law)}: ${outcome.reason}`);
  out.line(out.dim(`    counterexample ${outcome.counterexample} (shrunk ${outcome.shrinks} times)`));
  if (outcome.requests !== undefined) {
    out.line(`    --- request sequence ---\n${outcome.requests.replace(/^/gm, "    ")}`);
  }
}

async function checkConsumer(url: string, values: { secret?: string[] }, runs: number, seed: number, out: Output) {
  const secrets = secretsOption(values.secret);
  const target = new URL(url);
  const consumer = {
    path: `${target.pathname}${target.search}`,
    secret: secrets[0] as string,
    // Processing is not observable over HTTP: the laws that count it need the in-process kit.
    processed: () => [],
    settle: async () => {},
  };
  const law = {
    name: "bad signatures are rejected (400)",
    property: badSignaturesAreRejected(fromBaseUrl(target.origin), consumer),
  };
  out.line(out.bold(url));
  out.progress(`[1/1] ${law.name}…`);
  const outcome = await runLaw(law, url, runs, seed);
  printOutcome(out, outcome);
  const notRun = ["duplicates are processed once", "acknowledgement does not wait for processing"];
  out.line(
    out.dim(
      `  not run over HTTP (they count processing): ${notRun.join("; ")}; run consumerLaws from rest-webhooks/testing in-process`,
    ),
  );
  return { outcomes: [outcome], notRun };
}

/** `rest-webhooks check`: the kit's resource laws (or the consumer's signature law) against a live server. */
export async function runCheck(argv: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parseCommand(argv, options);
  if (values.help) {
    out.line(checkUsage);
    return EXIT.ok;
  }
  const runs = integerOption(values.runs, "runs", 25, 1);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : integerOption(values.seed, "seed", 0);
  const replay = (outcomes: LawOutcome[]) => {
    const failed = outcomes.filter((o) => !o.passed).length;
    const summary = `${outcomes.length - failed} passed, ${failed} failed · seed ${seed} (replay with --seed ${seed})`;
    out.line(failed === 0 ? out.green(summary) : out.red(summary));
    return failed === 0 ? EXIT.ok : EXIT.failed;
  };

  const consumerUrl = values["webhook-consumer"];
  if (consumerUrl !== undefined) {
    if (!URL.canParse(consumerUrl)) throw new UsageError(`--webhook-consumer is not a URL: ${consumerUrl}`);
    const { outcomes, notRun } = await checkConsumer(consumerUrl, values, runs, seed, out);
    if (out.json) out.result({ seed, runs, laws: outcomes, notRun });
    return replay(outcomes);
  }

  const baseArg = positionals[0];
  if (baseArg === undefined || !URL.canParse(baseArg))
    throw new UsageError("check needs the server's base URL, e.g. http://localhost:3000");
  const base = baseArg.replace(/\/$/, "");
  const headers = headerOptions(values.header);
  const document = await loadDocument(values.openapi ?? `${base}/openapi.json`, headers);
  const all = resourcesOf(document, values["idempotency-key"] === true);
  const chosen = values.path === undefined ? all : all.filter((r) => values.path?.includes(r.collection));
  for (const wanted of values.path ?? []) {
    if (!all.some((r) => r.collection === wanted)) {
      throw new UsageError(
        `--path ${wanted}: not a collection of the document (${all.map((r) => r.collection).join(", ") || "none found"})`,
      );
    }
  }
  if (chosen.length === 0)
    throw new UsageError("the document has no collection: a path with a JSON POST and an item path answering GET");

  const outcomes: LawOutcome[] = [];
  const notes: string[] = [];
  const target = fromBaseUrl(base);
  for (const resource of chosen) {
    out.line(out.bold(resource.collection));
    let collection: string;
    try {
      collection = await concreteCollection(resource, all, base, headers, seed, out);
    } catch (error) {
      const outcome = {
        resource: resource.collection,
        law: "the collection can be reached",
        passed: false,
        runs: 0,
        reason: (error as Error).message,
      };
      outcomes.push(outcome);
      printOutcome(out, outcome);
      continue;
    }
    const supports = { ...resource.supports };
    if (supports.idempotencyKey && !supports.list) {
      supports.idempotencyKey = false;
      const note = `${resource.collection}: Idempotency-Key laws not run: the collection answers no GET to count it with`;
      notes.push(note);
      out.line(out.dim(`  ${note}`));
    }
    const spec: ResourceSpec = {
      collection,
      createBody: resource.createBody,
      ...(resource.replaceBody === undefined ? {} : { replaceBody: resource.replaceBody }),
      ...(resource.patchBody === undefined ? {} : { patchBody: resource.patchBody }),
      headers,
      volatileFields: [...resource.clockFields, ...(values["ignore-field"] ?? [])],
      supports,
    };
    const laws = resourceLaws(target, spec);
    for (const [index, law] of laws.entries()) {
      out.progress(`[${index + 1}/${laws.length}] ${resource.collection}: ${law.name}…`);
      const outcome = await runLaw(law, resource.collection, runs, seed);
      outcomes.push(outcome);
      printOutcome(out, outcome);
    }
  }
  if (out.json) out.result({ base, seed, runs, laws: outcomes, notes });
  return replay(outcomes);
}
