/**
 * One law run by `check`: its outcome as printed and as `--json` gives it, with the request sequence of a failure
 * as its transcript prints it (the spec's headers, which are the user's `--header` values, by fingerprint only).
 */
import fc from "fast-check";
import type { NamedLaw } from "../testing/suite";
import { LawViolation } from "../testing/transcript";
import { noAnswerReason, type Output } from "./output";
import { RequestTimeoutError } from "./request-timeout";

/** The outcome of one law. */
export interface LawOutcome {
  resource: string;
  law: string;
  passed: boolean;
  runs: number;
  reason?: string;
  counterexample?: string;
  shrinks?: number;
  requests?: string;
}

// undici's fetch fails with a bare "fetch failed": the system code (ECONNREFUSED, the server is down) says why.
function failureReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof TypeError && message === "fetch failed"
    ? `the server did not answer (${noAnswerReason(error)})`
    : message;
}

/** Runs one law with fast-check; a failure keeps the shrunk counterexample and its request sequence. */
export async function runLaw(
  law: NamedLaw,
  resource: string,
  options: { runs: number; seed: number },
): Promise<LawOutcome> {
  const details = await fc.check(law.property, { numRuns: options.runs, seed: options.seed });
  if (!details.failed) return { resource, law: law.name, passed: true, runs: details.numRuns };
  const error = details.errorInstance;
  // A hung server is no counterexample: the runs shrunk after it failed at once (see timedFetch), not on the values.
  if (error instanceof RequestTimeoutError) {
    return { resource, law: law.name, passed: false, runs: details.numRuns, reason: error.message };
  }
  const violation = error instanceof LawViolation ? error : undefined;
  return {
    resource,
    law: law.name,
    passed: false,
    runs: details.numRuns,
    reason: violation?.reason ?? failureReason(error),
    counterexample: fc.stringify(details.counterexample),
    shrinks: details.numShrinks,
    ...(violation === undefined ? {} : { requests: violation.transcript }),
  };
}

/** Prints one outcome: a tick, or a cross with the reason, the counterexample and the request sequence. */
export function printOutcome(out: Output, outcome: LawOutcome): void {
  if (outcome.passed) {
    out.line(`  ${out.green("✓")} ${outcome.law} ${out.dim(`(${outcome.runs} runs)`)}`);
    return;
  }
  out.line(`  ${out.red("✗")} ${out.bold(outcome.law)}: ${outcome.reason}`);
  if (outcome.counterexample !== undefined) {
    out.line(out.dim(`    counterexample ${outcome.counterexample} (shrunk ${outcome.shrinks} times)`));
  }
  if (outcome.requests !== undefined) {
    out.line(`    --- request sequence ---\n${outcome.requests.replace(/^/gm, "    ")}`);
  }
}
