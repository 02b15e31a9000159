/** What `check` prints of a failing law: why a server did not answer. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runLaw } from "../../src/cli/law-outcome";
import { freePort } from "../support/free-port";

describe("runLaw()", () => {
  it('names why the server did not answer: ECONNREFUSED (regression: a bare "fetch failed")', async () => {
    const url = `http://127.0.0.1:${await freePort()}/things`;
    const property = fc.asyncProperty(fc.constant(null), async () => {
      await fetch(url);
    });
    const outcome = await runLaw({ name: "GET answers", property }, "/things", {
      runs: 1,
      seed: 1,
    });
    expect(outcome).toMatchObject({ passed: false, reason: "the server did not answer (ECONNREFUSED)" });
  });
});
