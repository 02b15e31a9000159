import fc from "fast-check";
import { type ResourceSpec, targetPath } from "../testing/resource-spec";
import { resourceLaws } from "../testing/suite";
import { fromBaseUrl, type Target } from "../testing/target";
import { requestUrl } from "../testing/transcript";
import { standardWebhooks } from "../webhooks/signing/index";
import { headerOptions, integerOption, isHttpUrl, parseCommand, refuseUserinfo, secondsOption } from "./args";
import { checkConsumer, NOT_RUN } from "./consumer-check";
import { type LawOutcome, printOutcome, runLaw } from "./law-outcome";
import {
  type OpenApiDocument,
  type OpenApiResource,
  parentItem,
  type ResourceBodies,
  resourceBodies,
  resourcesOf,
} from "./openapi-resources";
import { EXIT, noAnswerReason, type Output, UsageError } from "./output";
import { DEFAULT_TIMEOUT_SECONDS, RequestTimeoutError, type TimedFetch, timedFetch } from "./request-timeout";
import { secretsOption, signingSecrets } from "./schemes";
import { readUserText } from "./user-file";

export const checkUsage = `Usage: rest-webhooks check <base-url> [options]
       rest-webhooks check --webhook-consumer <url> --secret <secret> [options]

Runs the testing kit's HTTP laws against a live server in any language, taking its collections, items and
request schemas from its OpenAPI 3.1 document: GET/HEAD change nothing, HEAD = GET, PUT twice = once,
DELETE twice leaves it gone, POST creates each time, merge-patch twice = once, 304 for its own ETag, 412 for a
stale If-Match, Idempotency-Key replay and mismatch, errors are problem documents. A failure prints the shrunk
request sequence as HTTP and the seed that replays it. Exits 1 when a law fails.

Options:
  --openapi <url|file>   The OpenAPI document (default <base-url>/openapi.json)
  --header <h>           A header sent with every request, "name: value" (repeatable), e.g. authorization;
                         printed only by fingerprint
  --path <template>      Only this collection, as written in the document (repeatable)
  --idempotency-key      Run the Idempotency-Key laws where the POST does not declare the header
  --ignore-field <name>  A top-level field that is not state (repeatable); date-time fields are ignored anyway
  --runs <n>             Runs per law (default 25)
  --seed <n>             The seed; a failure prints the one that replays it
  --timeout <seconds>    Give up on a request with no whole answer after this long (default 30): the document
                         fails the check (exit 2), a law's request fails that law
  --webhook-consumer <url> --secret <s>
                         Check a webhook consumer instead: a signed delivery must get a 2xx, then bad,
                         expired, future and foreign-secret signatures must get 400 (Standard Webhooks)
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
  timeout: { type: "string" },
  "webhook-consumer": { type: "string" },
  secret: { type: "string", multiple: true },
} as const;

async function loadDocument(
  source: string,
  headers: Record<string, string>,
  send: typeof fetch,
): Promise<OpenApiDocument> {
  let text: string;
  // RFC 3986 §3.1: a scheme is case-insensitive (HTTP://host is a URL, not a file).
  if (isHttpUrl(source)) {
    let response: Response;
    try {
      response = await send(source, { headers: { accept: "application/json", ...headers } });
      text = await response.text();
    } catch (error) {
      if (error instanceof RequestTimeoutError)
        throw new UsageError(`cannot read the OpenAPI document: ${error.message}`);
      // The system code (ECONNREFUSED: the server is down) rather than undici's bare "fetch failed".
      throw new UsageError(`cannot read the OpenAPI document: GET ${source} got no answer (${noAnswerReason(error)})`);
    }
    if (!response.ok)
      throw new UsageError(`cannot read the OpenAPI document: GET ${source} answered ${response.status}`);
  } else {
    text = await readUserText(source, "the OpenAPI document");
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

/** The collections a nested collection's items hang under, outermost first (`/users` for `/users/{user_id}/orders`). */
function ancestors(resource: OpenApiResource, all: readonly OpenApiResource[]): OpenApiResource[] {
  const parent = parentItem(resource.collection);
  const owner = parent && all.find((r) => r.item === parent.item);
  return owner === undefined ? [] : [...ancestors(owner, all), owner];
}

/** Fills a collection template's parameters by creating its parents (`POST /users` for `/users/{user_id}/orders`). */
async function concreteCollection(
  resource: OpenApiResource,
  all: readonly OpenApiResource[],
  context: {
    target: Target;
    send: typeof fetch;
    headers: Record<string, string>;
    seed: number;
    bodies: (r: OpenApiResource) => ResourceBodies;
  },
  out: Output,
): Promise<string> {
  if (!resource.collection.includes("{")) return resource.collection;
  const parent = parentItem(resource.collection);
  const owner = parent && all.find((r) => r.item === parent.item);
  if (parent === undefined || owner === undefined) {
    throw new Error(`no collection in the document creates the parent of ${resource.collection}`);
  }
  const collection = await concreteCollection(owner, all, context, out);
  const [body] = fc.sample(context.bodies(owner).createBody, { numRuns: 1, seed: context.seed });
  const url = requestUrl(context.target, collection);
  let response: Response;
  try {
    response = await context.send(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...context.headers },
      body: JSON.stringify(body),
    });
    // Read to its end: the time-out runs until the body ends, and the connection is freed for the laws.
    await response.arrayBuffer();
  } catch (error) {
    // The time-out names its request already; otherwise the system code (ECONNREFUSED), not undici's "fetch failed".
    if (error instanceof RequestTimeoutError) throw error;
    throw new Error(`creating its parent, POST ${collection} got no answer (${noAnswerReason(error)})`, {
      cause: error,
    });
  }
  const location = response.headers.get("location");
  if (response.status !== 201 || location === null || !URL.canParse(location, url)) {
    throw new Error(
      `creating its parent, POST ${collection} answered ${response.status}${location === null ? " without a Location" : ""}`,
    );
  }
  // RFC 9110 §10.2.2: the Location is resolved against the POST's URL, not appended to the base URL.
  const path = targetPath(context.target, new URL(location, url));
  out.progress(`created ${path} for ${resource.collection}`);
  return `${path}${parent.rest}`;
}

/** `rest-webhooks check`: the kit's resource laws (or the consumer's signature law) against a live server. */
export async function runCheck(argv: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parseCommand(argv, options, ["<base-url>"]);
  if (values.help) {
    out.help(checkUsage);
    return EXIT.ok;
  }
  const runs = integerOption(values.runs, "runs", 25, 1);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : integerOption(values.seed, "seed", 0);
  const timed: TimedFetch = timedFetch(secondsOption(values.timeout, "timeout", DEFAULT_TIMEOUT_SECONDS));
  const replay = (outcomes: LawOutcome[]) => {
    const failed = outcomes.filter((o) => !o.passed).length;
    const summary = `${outcomes.length - failed} passed, ${failed} failed · seed ${seed} (replay with --seed ${seed})`;
    out.line(failed === 0 ? out.green(summary) : out.red(summary));
    return failed === 0 ? EXIT.ok : EXIT.failed;
  };

  const headers = headerOptions(values.header);
  const consumerUrl = values["webhook-consumer"];
  const basic = '--header "authorization: Basic …"';
  if (consumerUrl !== undefined) {
    refuseUserinfo(consumerUrl, "--webhook-consumer", basic);
    if (!isHttpUrl(consumerUrl)) {
      throw new UsageError(`--webhook-consumer is not an http:// or https:// URL: ${consumerUrl}`);
    }
    const secrets = secretsOption(values.secret);
    // The kit's faulty provider signs with one secret: a second would be ignored, silently.
    if (secrets.length > 1)
      throw new UsageError("--webhook-consumer signs with one --secret: pass the consumer's current one");
    signingSecrets(standardWebhooks, secrets);
    const secret = secrets[0] as string;
    const outcome = await checkConsumer(consumerUrl, { secret, headers, runs, seed, timed }, out);
    if (out.json) out.result({ seed, runs, laws: [outcome], notRun: NOT_RUN });
    return replay([outcome]);
  }

  const baseArg = positionals[0];
  if (baseArg !== undefined) refuseUserinfo(baseArg, "the base URL", basic);
  if (values.openapi !== undefined) refuseUserinfo(values.openapi, "--openapi", basic);
  if (baseArg === undefined || !isHttpUrl(baseArg))
    throw new UsageError("check needs the server's base URL, http:// or https://, e.g. http://localhost:3000");
  const base = baseArg.replace(/\/$/, "");
  const document = await loadDocument(values.openapi ?? `${base}/openapi.json`, headers, timed.fetch);
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

  // Bodies are derived only for the collections tested and the parents they are created under, all before the
  // first request: a schema nothing can be derived from is a UsageError naming its operation, not a half-run.
  const derived = new Map<OpenApiResource, ResourceBodies>();
  const bodies = (resource: OpenApiResource): ResourceBodies => {
    const known = derived.get(resource) ?? resourceBodies(document, resource);
    derived.set(resource, known);
    return known;
  };
  for (const resource of chosen) for (const needed of [...ancestors(resource, all), resource]) bodies(needed);
  const target = fromBaseUrl(base, timed.fetch);
  const outcomes: LawOutcome[] = [];
  const notes: string[] = [];
  for (const resource of chosen) {
    out.line(out.bold(resource.collection));
    let collection: string;
    timed.reset();
    try {
      collection = await concreteCollection(resource, all, { target, send: timed.fetch, headers, seed, bodies }, out);
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
    const { createBody, replaceBody, patchBody } = bodies(resource);
    const spec: ResourceSpec = {
      collection,
      createBody,
      ...(replaceBody === undefined ? {} : { replaceBody }),
      ...(patchBody === undefined ? {} : { patchBody }),
      headers,
      volatileFields: [...resource.clockFields, ...(values["ignore-field"] ?? [])],
      supports,
    };
    const laws = resourceLaws(target, spec);
    for (const [index, law] of laws.entries()) {
      out.progress(`[${index + 1}/${laws.length}] ${resource.collection}: ${law.name}…`);
      timed.reset();
      const outcome = await runLaw(law, resource.collection, { runs, seed });
      outcomes.push(outcome);
      printOutcome(out, outcome);
    }
  }
  if (out.json) out.result({ base, seed, runs, laws: outcomes, notes });
  return replay(outcomes);
}
