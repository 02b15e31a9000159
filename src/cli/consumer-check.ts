/**
 * `check --webhook-consumer`: the kit's signature law against a consumer over HTTP. The law only holds meaning
 * once the consumer is shown to accept a correctly signed delivery: one that answers 400 to everything verifies
 * nothing, yet rejects every bad signature.
 */
import { randomUUID } from "node:crypto";
import { badSignaturesAreRejected, type ConsumerSpec } from "../testing/laws/consumer";
import { createFaultyProvider } from "../testing/provider";
import { fromBaseUrl, type Target } from "../testing/target";
import { Transcript } from "../testing/transcript";
import { type LawOutcome, printOutcome, runLaw } from "./law-outcome";
import { noAnswerReason, type Output } from "./output";
import type { TimedFetch } from "./request-timeout";

const LAW = "bad signatures are rejected (400)";

/** What the consumer laws need that a consumer cannot show over HTTP: the CLI says they were not run. */
export const NOT_RUN = ["duplicates are processed once", "acknowledgement does not wait for processing"];

/** The options of one consumer check. */
export interface ConsumerCheckOptions {
  secret: string;
  /** `--header` fields, sent with every request. */
  headers: Record<string, string>;
  runs: number;
  seed: number;
  /** Every request goes through it: `--timeout`. */
  timed: TimedFetch;
}

/** A fetch that adds `headers` to every request, without replacing a field the law set itself. */
function withHeaders(headers: Record<string, string>, send: typeof fetch): typeof fetch {
  return (input, init) => {
    const request = new Request(input, init);
    const merged = new Headers(request.headers);
    for (const [name, value] of Object.entries(headers)) if (!merged.has(name)) merged.set(name, value);
    return send(new Request(request, { headers: merged }));
  };
}

/** Sends one correctly signed delivery; the reason it was not acknowledged with a 2xx, if it was not. */
async function refusedSignedDelivery(
  target: Target,
  consumer: ConsumerSpec,
  secretFields: Iterable<string>,
): Promise<Pick<LawOutcome, "reason" | "requests"> | undefined> {
  const transcript = new Transcript(target, secretFields);
  const provider = createFaultyProvider({ target, path: consumer.path, secret: consumer.secret }, transcript);
  const event = {
    id: `evt_${randomUUID().replaceAll("-", "")}`,
    type: "rest_webhooks.check",
    timestamp: new Date().toISOString(),
    data: {},
  };
  let status: number;
  try {
    status = (await provider.deliver(event, "none")).status;
  } catch (error) {
    return { reason: `a correctly signed delivery got no answer (${noAnswerReason(error)})` };
  }
  if (status >= 200 && status < 300) return undefined;
  return {
    reason: `a correctly signed delivery answered ${status}, expected 2xx: a consumer that refuses it verifies nothing (is --secret the consumer's secret?)`,
    requests: transcript.format(),
  };
}

/**
 * Runs the signature law against the consumer at `url`, after checking that it accepts a signed delivery.
 * @example
 * const options = { secret, headers: {}, runs: 25, seed: 1, timed: timedFetch(30) };
 * await checkConsumer("http://localhost:3000/webhooks", options, out);
 */
export async function checkConsumer(url: string, options: ConsumerCheckOptions, out: Output): Promise<LawOutcome> {
  const location = new URL(url);
  const target = fromBaseUrl(location.origin, withHeaders(options.headers, options.timed.fetch));
  const consumer: ConsumerSpec = {
    path: `${location.pathname}${location.search}`,
    secret: options.secret,
    // Processing is not observable over HTTP: the laws that count it need the in-process kit.
    processed: () => [],
    settle: async () => {},
  };
  const secretFields = new Set(Object.keys(options.headers));
  out.line(out.bold(url));
  out.progress(`[1/1] ${LAW}…`);
  options.timed.reset();
  const refused = await refusedSignedDelivery(target, consumer, secretFields);
  const outcome: LawOutcome =
    refused === undefined
      ? await runLaw({ name: LAW, property: badSignaturesAreRejected(target, consumer) }, url, {
          runs: options.runs,
          seed: options.seed,
        })
      : { resource: url, law: LAW, passed: false, runs: 0, ...refused };
  printOutcome(out, outcome);
  out.line(
    out.dim(
      `  not run over HTTP (they count processing): ${NOT_RUN.join("; ")}; run consumerLaws from rest-webhooks/testing in-process`,
    ),
  );
  return outcome;
}
