import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { AttemptDeadline } from "../../../src/webhooks/consumer/attempt-deadline";
import { WebhookConsumerError } from "../../../src/webhooks/consumer/errors";

const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("AttemptDeadline", () => {
  it("races against the deadline itself and makes no signal of its own until the handler reads it", () => {
    const deadline = new AbortController();
    const attempt = new AttemptDeadline(deadline.signal, 5_000);
    expect(attempt.race).toBe(deadline.signal);
    expect(listeners(deadline.signal)).toBe(0);
    const signal = attempt.signal;
    expect(attempt.signal).toBe(signal);
    expect(listeners(deadline.signal)).toBe(1);
    expect(signal.aborted).toBe(false);
  });

  it("aborts the handler's signal at the deadline with a handler_timeout whose cause is the deadline's reason", () => {
    const deadline = new AbortController();
    const attempt = new AttemptDeadline(deadline.signal, 5_000);
    const signal = attempt.signal;
    const reason = new Error("window over");
    deadline.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(WebhookConsumerError);
    expect(signal.reason).toMatchObject({
      code: "handler_timeout",
      message: "The handler did not finish within 5000 ms.",
      cause: reason,
    });
    // The race lost to the deadline: the attempt fails with the same handler_timeout the handler saw.
    expect(attempt.failure(reason)).toBe(signal.reason);
    expect(listeners(deadline.signal)).toBe(0);
  });

  it("reads a deadline that has already passed as aborted", () => {
    const attempt = new AttemptDeadline(AbortSignal.abort(), 250);
    expect(attempt.signal.aborted).toBe(true);
    expect(attempt.signal.reason).toMatchObject({ code: "handler_timeout" });
  });

  it("turns only the deadline's own reason, once it has aborted, into the time-out", () => {
    const deadline = new AbortController();
    const attempt = new AttemptDeadline(deadline.signal, 5_000);
    const thrown = new Error("the handler's own");
    expect(attempt.failure(thrown)).toBe(thrown);
    expect(attempt.failure(deadline.signal.reason)).toBe(deadline.signal.reason);
    deadline.abort();
    expect(attempt.failure(thrown)).toBe(thrown);
    expect(attempt.failure(deadline.signal.reason)).toMatchObject({ code: "handler_timeout" });
  });

  it("lets go of the deadline when the attempt ends: the handler's signal never aborts after", () => {
    const deadline = new AbortController();
    const read = new AttemptDeadline(deadline.signal, 5_000);
    const signal = read.signal;
    read.end();
    expect(listeners(deadline.signal)).toBe(0);
    const unread = new AttemptDeadline(deadline.signal, 5_000);
    unread.end();
    // Read only after the end (a handler's late background work).
    const late = unread.signal;
    expect(listeners(deadline.signal)).toBe(0);
    deadline.abort();
    expect(signal.aborted).toBe(false);
    expect(late.aborted).toBe(false);
  });

  it("has no race and a signal that never aborts without a time-out", () => {
    const attempt = new AttemptDeadline(undefined, 0);
    expect(attempt.race).toBeUndefined();
    expect(attempt.signal.aborted).toBe(false);
    const error = new Error("x");
    expect(attempt.failure(error)).toBe(error);
  });
});
