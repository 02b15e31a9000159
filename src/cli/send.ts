import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { MAX_TIMER_MS } from "../options/timer-delay";
import { STANDARD_WEBHOOKS_SCHEDULE, scheduleBackoff } from "../webhooks/retry/backoff";
import { signWith } from "../webhooks/signing/index";
import { headerOptions, integerOption, isHttpUrl, parseCommand, refuseUserinfo } from "./args";
import { bodyStart, EXIT, noAnswerReason, type Output, UsageError } from "./output";
import { schemeOption, secretsOption, signingSecrets } from "./schemes";
import { readUserText } from "./user-file";

export const sendUsage = `Usage: rest-webhooks send <url> --type <type> --data <json|@file> --secret <secret> [options]

Signs a test event and POSTs it; prints the response status, headers and the start of its body.
The body is {"type", "timestamp", "data"} (Standard Webhooks), with the id in the headers (and "id" in the body).

Options:
  --type <type>        The event type, e.g. order.created
  --data <json|@file>  The event's data: JSON text, or @path to read it from a file (default {})
  --secret <s>         The signing secret (default: $WEBHOOK_SECRET); repeat for one signature per secret
                       with standard and stripe (github, shopify and slack send one)
  --scheme <name>      standard (default), stripe, github, shopify or slack
  --id <id>            The event id (default msg_<random>), the same on every attempt
  --header <h>         An extra request header "name: value" (repeatable)
  --repeat <n>         Up to n attempts: on a failure (not 2xx, or no answer) retry after our backoff,
                       the Standard Webhooks schedule (0, 5 s, 5 min, 30 min, 2 h, …) with ±20 % jitter
  --schedule <ms,…>    Delays before each attempt instead, in ms (e.g. 0,1000,5000); sets the attempts too,
                       so not with --repeat
  --json               One JSON document on stdout
  -h, --help           This help`;

const options = {
  type: { type: "string" },
  data: { type: "string" },
  secret: { type: "string", multiple: true },
  scheme: { type: "string" },
  id: { type: "string" },
  header: { type: "string", multiple: true },
  repeat: { type: "string" },
  schedule: { type: "string" },
} as const;

interface Attempt {
  attempt: number;
  status: number | null;
  error?: string;
  headers?: Record<string, string>;
  body?: string;
}

async function readData(value: string | undefined): Promise<unknown> {
  if (value === undefined) return {};
  const path = value.startsWith("@") ? value.slice(1) : undefined;
  const text = path === undefined ? value : await readUserText(path, "--data");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--data is not JSON: ${(error as Error).message}`);
  }
}

function scheduleOption(schedule: string | undefined, repeat: string | undefined): readonly number[] {
  // --schedule sets the attempts too: a --repeat beside it would be silently ignored.
  if (schedule !== undefined && repeat !== undefined) {
    throw new UsageError("--repeat and --schedule both set the attempts: pass one (--schedule 0,1000,5000 makes 3)");
  }
  if (schedule !== undefined) {
    if (!/^\d+(,\d+)*$/.test(schedule))
      throw new UsageError(`--schedule must be ms like 0,1000,5000, got "${schedule}"`);
    const delays = schedule.split(",").map(Number);
    // A timer waits at most MAX_TIMER_MS: a longer delay would fire at once, after saying it waits.
    if (delays.some((delay) => delay > MAX_TIMER_MS))
      throw new UsageError(`--schedule delays are at most ${MAX_TIMER_MS} ms (about 24.8 days), got "${schedule}"`);
    return delays;
  }
  const attempts = integerOption(repeat, "repeat", 1, 1);
  if (attempts > STANDARD_WEBHOOKS_SCHEDULE.length) {
    throw new UsageError(`--repeat is at most ${STANDARD_WEBHOOKS_SCHEDULE.length} (the Standard Webhooks schedule)`);
  }
  return STANDARD_WEBHOOKS_SCHEDULE.slice(0, attempts);
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** `rest-webhooks send`: signs and sends a test event, retrying on our backoff with `--repeat`. */
export async function runSend(argv: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parseCommand(argv, options, ["<url>"]);
  if (values.help) {
    out.help(sendUsage);
    return EXIT.ok;
  }
  const url = positionals[0];
  if (url !== undefined) refuseUserinfo(url, "the URL", '--header "authorization: Basic …"');
  if (url === undefined || !isHttpUrl(url))
    throw new UsageError("send needs the http:// or https:// URL to send to, e.g. http://localhost:3000/webhooks");
  if (values.type === undefined) throw new UsageError("--type is required, e.g. --type order.created");
  const secrets = secretsOption(values.secret);
  const scheme = schemeOption(values.scheme);
  // Before the first --schedule delay, not after it.
  signingSecrets(scheme, secrets);
  const extra = headerOptions(values.header);
  const data = await readData(values.data);
  const delays = scheduleOption(values.schedule, values.repeat);
  // The library's backoff: attempt n+1 waits policy(n); the first attempt waits delays[0].
  const policy = scheduleBackoff(delays, values.schedule === undefined ? 0.2 : 0);
  const id = values.id ?? `msg_${randomUUID().replaceAll("-", "")}`;
  const attempts: Attempt[] = [];
  let wait = policy.firstDelayMs;
  for (let n = 1; ; n++) {
    if (wait > 0) {
      out.progress(`waiting ${seconds(wait)} before attempt ${n} of ${policy.maxAttempts}`);
      await sleep(wait);
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ id, type: values.type, timestamp: new Date(timestamp * 1000).toISOString(), data });
    let signed: Record<string, string>;
    try {
      signed = signWith(scheme, { id, timestamp, body, secrets });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const headers = { "content-type": "application/json", "user-agent": "rest-webhooks-cli", ...extra, ...signed };
    const attempt: Attempt = { attempt: n, status: null };
    try {
      // Not followed, as the library's dispatcher: a 3xx is the attempt's answer, a failure. Following it would
      // report a 307's target as the receiver, and fetch turns a 301 or 302 into a GET without the body that still
      // carries the signature (RFC 9110 §15.4.2, §15.4.3).
      const response = await fetch(url, {
        method: "POST",
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(30_000),
      });
      attempt.status = response.status;
      attempt.headers = Object.fromEntries(response.headers);
      attempt.body = bodyStart(await response.text());
    } catch (error) {
      attempt.error = noAnswerReason(error);
    }
    attempts.push(attempt);
    report(out, attempt, id, policy.maxAttempts);
    const succeeded = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
    const next = succeeded ? undefined : policy(n, Math.random);
    if (next === undefined) {
      if (out.json) out.result({ id, type: values.type, scheme: scheme.name, delivered: succeeded, attempts });
      if (!succeeded && n > 1) out.line(out.red(`✗ gave up after ${n} attempts`));
      return succeeded ? EXIT.ok : EXIT.failed;
    }
    wait = next;
  }
}

function report(out: Output, attempt: Attempt, id: string, of: number): void {
  const label = `attempt ${attempt.attempt}/${of} (${id})`;
  if (attempt.status === null) {
    out.line(`${out.red("✗")} ${label}: no answer (${attempt.error})`);
    return;
  }
  const ok = attempt.status >= 200 && attempt.status < 300;
  const location = attempt.status >= 300 && attempt.status < 400 ? attempt.headers?.location : undefined;
  const redirect = location === undefined ? "" : ` (redirect to ${location}, not followed)`;
  out.line(`${ok ? out.green("✓") : out.red("✗")} ${label}: HTTP ${out.bold(String(attempt.status))}${redirect}`);
  for (const [name, value] of Object.entries(attempt.headers ?? {})) out.line(out.dim(`  ${name}: ${value}`));
  if (attempt.body) out.line(`  ${attempt.body.replaceAll("\n", "\n  ")}`);
}
