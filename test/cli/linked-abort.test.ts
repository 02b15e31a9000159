import { describe, expect, it } from "vitest";
import { linkedAbort } from "../../src/cli/linked-abort";

describe("linkedAbort()", () => {
  it("aborts with the reason of the first signal to abort, and by its owner", () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkedAbort([a.signal, undefined, b.signal]);
    b.abort("b first");
    a.abort("a later");
    expect(linked.controller.signal.reason).toBe("b first");
    const own = linkedAbort([]);
    own.controller.abort("mine");
    expect(own.controller.signal.aborted).toBe(true);
  });

  it("starts aborted when a signal already is", () => {
    expect(linkedAbort([AbortSignal.abort("gone")]).controller.signal.reason).toBe("gone");
  });

  it("follows nothing once released (a long-lived signal keeps no listener per request)", () => {
    const stop = new AbortController();
    const linked = linkedAbort([stop.signal]);
    linked.release();
    stop.abort();
    expect(linked.controller.signal.aborted).toBe(false);
  });
});
