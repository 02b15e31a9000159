import type { AddressInfo } from "node:net";
import { empty, type HttpRequest, type HttpResponse } from "../http/message";
import { createServer } from "../node/index";
import { defaultEventId, defaultEventType } from "../webhooks/consumer/event-identity";
import { secretFingerprint, verify } from "../webhooks/signing/index";
import { integerOption, isHttpUrl, parseCommand, refuseUserinfo, shownUrl } from "./args";
import { forward } from "./forward";
import { EXIT, type Output, UsageError } from "./output";
import { consumerSecrets, schemeOption, secretsOption } from "./schemes";

export const listenUsage = `Usage: rest-webhooks listen --secret <secret> [options]

A local webhook consumer: verifies each delivery and prints one line per event (time, type, id, and
verified or the reason it was not). Answers 202 to a verified delivery, the problem document of the
failure (400) otherwise; with --forward-to, forwards verified deliveries and answers with that URL's reply.

Options:
  --port <n>          Port to listen on (default 3030; 0 picks a free one)
  --host <addr>       Address to listen on (default 127.0.0.1)
  --secret <s>        The signing secret; repeat while rotating (default: $WEBHOOK_SECRET)
  --scheme <name>     standard (default), stripe, github, shopify or slack
  --forward-to <url>  Forward verified deliveries (same headers and bytes) to this URL
  --json              One JSON object per line (JSON Lines) instead of text
  -h, --help          This help`;

const options = {
  port: { type: "string" },
  host: { type: "string" },
  secret: { type: "string", multiple: true },
  scheme: { type: "string" },
  "forward-to": { type: "string" },
} as const;

// The adapter's default limit (1 MiB) answered 413 before verifying, with no line printed; GitHub caps a payload at
// 25 MB ("Webhook events and payloads"), the largest of the schemes listen verifies.
const BODY_LIMIT = 25 * 1024 * 1024;

// The time of day in UTC, marked so (ISO 8601 `Z`): a bare 14:03:07 read as local time was hours off.
function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 24);
}

// Why the adapter answered before listen's handler could run.
const REFUSALS: Record<number, { code: string; reason: string }> = {
  413: { code: "body_too_large", reason: `the body is over listen's ${BODY_LIMIT / 1024 / 1024} MiB limit` },
};

/** `rest-webhooks listen`: a verifying consumer that prints every delivery, and forwards it when asked. */
export async function runListen(argv: readonly string[], out: Output): Promise<number> {
  const { values } = parseCommand(argv, options);
  if (values.help) {
    out.help(listenUsage);
    return EXIT.ok;
  }
  const secrets = secretsOption(values.secret);
  const scheme = schemeOption(values.scheme);
  consumerSecrets(scheme, secrets);
  const port = integerOption(values.port, "port", 3030);
  if (port > 65_535) throw new UsageError("--port must be at most 65535");
  const forwardTo = values["forward-to"];
  if (forwardTo !== undefined) refuseUserinfo(forwardTo, "--forward-to");
  if (forwardTo !== undefined && !isHttpUrl(forwardTo))
    throw new UsageError(`--forward-to is not an http:// or https:// URL: ${forwardTo}`);
  // What the lines show of it: its query by names only.
  const shownTarget = forwardTo === undefined ? undefined : shownUrl(forwardTo);
  const emit = (record: Record<string, unknown>, text: string) => {
    if (out.json) process.stdout.write(`${JSON.stringify(record)}\n`);
    else out.line(text);
  };

  // Aborted on Ctrl-C: a forward still waiting for its target would otherwise hold the process for its timeout.
  const stopping = new AbortController();
  const handler = async (request: HttpRequest): Promise<HttpResponse> => {
    const at = Date.now();
    const result = verify({ body: request.body, headers: request.headers, secrets, scheme, parse: "none" });
    const record: Record<string, unknown> = {
      time: new Date(at).toISOString(),
      method: request.method,
      path: request.path,
    };
    if (!result.ok) {
      const reason = result.error.message.split("\n")[0] ?? "";
      emit(
        { ...record, verified: false, code: result.error.code, reason: result.error.message },
        `${out.dim(clock(at))}  ${out.red("✗ not verified")}  ${request.method} ${request.path}  ${out.bold(result.error.code)}: ${reason}`,
      );
      return result.error.toProblem().toResponse();
    }
    let payload: unknown;
    try {
      payload = JSON.parse(new TextDecoder().decode(request.body));
    } catch {
      payload = undefined; // form bodies (Slack) have no JSON type; the line says so
    }
    // As verify with the consumer's default parse "json" reports it: the signed id, else the payload's (Stripe's
    // evt_…, Slack's event_id). Verifying with parse "none" keeps form bodies (Slack commands) printable.
    const id = result.id ?? scheme.payloadId?.(payload);
    const identity = { id, payload, headers: request.headers, body: request.body, scheme: scheme.name };
    const type = defaultEventType(identity) || "(no type)";
    const eventId = defaultEventId(identity);
    Object.assign(record, { verified: true, type, id: eventId });
    const line = `${out.dim(clock(at))}  ${out.green("✓ verified")}  ${out.bold(type)}  ${eventId}`;
    if (forwardTo === undefined) {
      emit(record, line);
      return empty(202);
    }
    const forwarded = await forward(forwardTo, request, stopping.signal);
    const redirect = forwarded.location === undefined ? "" : ` (redirect to ${forwarded.location}, not followed)`;
    const outcome =
      forwarded.error === undefined
        ? `HTTP ${forwarded.status}${redirect}`
        : `no answer (${forwarded.error}), answered 502`;
    emit(
      { ...record, forwardedTo: shownTarget, forwardStatus: forwarded.error === undefined ? forwarded.status : null },
      `${line}  → ${shownTarget} ${outcome}`,
    );
    return { status: forwarded.status, headers: forwarded.headers, body: forwarded.body ?? null };
  };

  const server = createServer(handler, { bodyLimit: BODY_LIMIT });
  // A delivery the adapter refused unread (over the body limit) never reaches the handler: printed here, or whoever
  // watches the terminal sees nothing of it. The handler runs only once the whole body was read, so an error answer
  // to a request whose body did not all arrive is the adapter's.
  server.on("request", (req, res) => {
    res.once("close", () => {
      if (res.statusCode < 400 || req.complete) return;
      const at = Date.now();
      const refusal = REFUSALS[res.statusCode];
      const code = refusal?.code ?? "refused";
      const reason = refusal?.reason ?? `the request was answered ${res.statusCode} before it could be verified`;
      const target = `${req.method} ${(req.url ?? "").split("?")[0]}`;
      emit(
        {
          time: new Date(at).toISOString(),
          method: req.method,
          path: (req.url ?? "").split("?")[0],
          verified: false,
          refused: res.statusCode,
          code,
          reason,
        },
        `${out.dim(clock(at))}  ${out.red(`✗ refused (${res.statusCode})`)}  ${target}  ${out.bold(code)}: ${reason}`,
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, values.host ?? "127.0.0.1", () => resolve());
  }).catch((error: { code?: string; message: string }) => {
    throw new UsageError(
      error.code === "EADDRINUSE" ? `port ${port} is already in use: pick another with --port` : error.message,
    );
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  const fingerprints = secrets.map(secretFingerprint).join(", ");
  emit(
    { listening: url, scheme: scheme.name, secrets: secrets.map(secretFingerprint), forwardTo: shownTarget ?? null },
    `listening on ${out.bold(url)} (scheme ${scheme.name}, secret ${fingerprints})${shownTarget ? `, forwarding to ${shownTarget}` : ""}; Ctrl-C to stop`,
  );
  return new Promise<number>((resolve) => {
    const stop = () => {
      stopping.abort();
      server.close(() => resolve(EXIT.ok));
      server.closeAllConnections();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    // A reader that stopped (`listen --json | head -n 1`, a script waiting for an event) ends the pipeline only
    // once listen ends: its next line finds the pipe closed, and listen stops as on Ctrl-C (main ignores the EPIPE).
    process.stdout.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") stop();
    });
  });
}
