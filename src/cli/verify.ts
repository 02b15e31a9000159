import { type VerifyResult, verify, type WebhookScheme } from "../webhooks/signing/index";
import { integerOption, parseCommand } from "./args";
import { type Capture, parseCapture } from "./capture";
import { EXIT, type Output, UsageError } from "./output";
import { SCHEMES, schemeOption, secretsOption } from "./schemes";
import { readUserFile } from "./user-file";

export const verifyUsage = `Usage: rest-webhooks verify --secret <secret> [options] < capture.http

Reads a captured request on stdin (an optional request line, header lines, a blank line, the raw body) and
explains the verdict with the library's own diagnosis. Exits 0 only when it verifies.

Options:
  --secret <s>       The signing secret; repeat while rotating (default: $WEBHOOK_SECRET)
  --scheme <name>    standard (default), stripe, github, shopify or slack
  --file <path>      Read the capture from a file instead of stdin
  --now <seconds>    Verify as of this Unix time (a capture's receipt time); default: now
  --tolerance <s>    Accepted timestamp distance in seconds (default 300)
  --json             One JSON document on stdout
  -h, --help         This help`;

const options = {
  secret: { type: "string", multiple: true },
  scheme: { type: "string" },
  file: { type: "string" },
  now: { type: "string" },
  tolerance: { type: "string" },
} as const;

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// A Date spans ±8.64e15 ms (ECMA-262 "Time Values and Time Range"): a timestamp signed in microseconds is past it:
// toISOString would throw, so such a time is printed as the Unix seconds it is.
function signedAt(seconds: number): string {
  const ms = seconds * 1000;
  return Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `Unix time ${seconds}`;
}

function schemeKey(scheme: WebhookScheme): string {
  return Object.entries(SCHEMES).find(([, s]) => s === scheme)?.[0] ?? scheme.name;
}

/** Further explanations beside the library's message: a valid signature outside the window, another scheme. */
function hints(
  capture: Capture,
  secrets: string[],
  scheme: WebhookScheme,
  result: VerifyResult<unknown>,
  nowMs: number,
): string[] {
  if (result.ok) return [];
  const out: string[] = [];
  const base = { body: capture.body, headers: capture.headers, secrets, parse: "none" as const, now: () => nowMs };
  const code = result.error.code;
  if (code === "timestamp_too_old" || code === "timestamp_in_future") {
    const anyTime = verify({ ...base, scheme, toleranceSeconds: Number.POSITIVE_INFINITY });
    if (anyTime.ok && anyTime.timestamp !== undefined) {
      const skew = Math.round(nowMs / 1000 - anyTime.timestamp);
      out.push(
        `The signature itself is valid: only the timestamp is off, signed ${signedAt(anyTime.timestamp)} (${Math.abs(skew)} s ${skew > 0 ? "ago" : "ahead"}). To check an old capture, pass --now ${anyTime.timestamp}.`,
      );
    } else {
      out.push("The signature does not match either, whatever the time: see the secret and body.");
    }
  }
  if (code === "no_matching_signature" || code === "missing_header" || code === "malformed_header") {
    for (const other of Object.values(SCHEMES)) {
      if (other === scheme) continue;
      const tried = verify({ ...base, scheme: other, toleranceSeconds: Number.POSITIVE_INFINITY });
      if (tried.ok)
        out.push(`It verifies as a ${other.name} webhook with this secret: pass --scheme ${schemeKey(other)}.`);
    }
  }
  return out;
}

/** `rest-webhooks verify`: explains whether a captured request verifies, and why not. */
export async function runVerify(argv: readonly string[], out: Output): Promise<number> {
  const { values } = parseCommand(argv, options);
  if (values.help) {
    out.help(verifyUsage);
    return EXIT.ok;
  }
  const secrets = secretsOption(values.secret);
  const scheme = schemeOption(values.scheme);
  const tolerance = integerOption(values.tolerance, "tolerance", 300);
  const nowMs = values.now === undefined ? Date.now() : integerOption(values.now, "now", 0) * 1000;
  // A terminal on stdin means nothing was piped: say so instead of waiting for input forever.
  if (values.file === undefined && process.stdin.isTTY) {
    throw new UsageError("pipe a captured request on stdin (verify --secret … < capture.http) or pass --file");
  }
  const bytes = values.file === undefined ? await readStdin() : await readUserFile(values.file, "the capture (--file)");
  const capture = parseCapture(bytes);
  if (typeof capture === "string") throw new UsageError(`cannot read the capture: ${capture}`);
  const result = verify({
    body: capture.body,
    headers: capture.headers,
    secrets,
    scheme,
    parse: "none",
    toleranceSeconds: tolerance,
    now: () => nowMs,
  });
  const extra = hints(capture, secrets, scheme, result, nowMs);
  if (out.json) {
    out.result(
      result.ok
        ? {
            verified: true,
            scheme: result.scheme,
            id: result.id ?? null,
            timestamp: result.timestamp ?? null,
            notes: capture.notes,
          }
        : {
            verified: false,
            scheme: scheme.name,
            code: result.error.code,
            message: result.error.message,
            hints: extra,
            notes: capture.notes,
          },
    );
  }
  for (const note of capture.notes) out.line(out.dim(`note: ${note}`));
  if (result.ok) {
    const when = result.timestamp === undefined ? "" : `, signed ${signedAt(result.timestamp)}`;
    out.line(
      `${out.green("✓ verified")} as ${result.scheme}${result.id === undefined ? "" : ` (id ${result.id})`}${when}`,
    );
    return EXIT.ok;
  }
  out.line(`${out.red("✗ not verified")}: ${out.bold(result.error.code)} (scheme ${scheme.name})`);
  out.line(result.error.message);
  for (const hint of extra) out.line(`${out.yellow("hint:")} ${hint}`);
  return EXIT.failed;
}
