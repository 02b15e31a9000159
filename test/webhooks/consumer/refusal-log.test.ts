import { describe, expect, it, vi } from "vitest";
import { InboxEventTooLargeError, InboxFullError } from "../../../src/webhooks/consumer/index";
import { REFUSAL_LOG_EVERY_MS, refusalLog } from "../../../src/webhooks/consumer/refusal-log";
import { WebhookVerificationError } from "../../../src/webhooks/signing/index";

describe("the consumer's default error log", () => {
  const setup = () => {
    const clock = { now: 1_000_000 };
    const write = vi.fn();
    return { clock, write, log: refusalLog(() => clock.now, write) };
  };
  const full = new InboxFullError("full", 100);
  const down = new Error("connection refused");

  it("writes one line per kind of refusal a minute, then says how many it refused since", () => {
    const { clock, write, log } = setup();
    log(full, undefined, true);
    for (let i = 0; i < 5; i++) {
      clock.now += 1_000;
      log(full, undefined, true);
    }
    expect(write).toHaveBeenCalledTimes(1);
    expect(write).toHaveBeenLastCalledWith(expect.stringContaining("inbox is full"), full);
    clock.now += REFUSAL_LOG_EVERY_MS;
    log(full, undefined, true);
    expect(write).toHaveBeenCalledTimes(2);
    expect(write).toHaveBeenLastCalledWith(expect.stringContaining("(5 more refused since the last line)"), full);
    clock.now += REFUSAL_LOG_EVERY_MS;
    log(full, undefined, true);
    expect(write.mock.lastCall?.[0]).not.toContain("more refused");
  });

  it("counts each kind apart, and logs an onStored error each time", () => {
    const { write, log } = setup();
    log(full, undefined, true);
    log(down, undefined, true);
    log(down, undefined, true);
    const thrown = new Error("onStored");
    log(thrown, undefined, false);
    log(thrown, undefined, false);
    expect(write.mock.calls.map((call) => call[1])).toEqual([full, down, thrown, thrown]);
    expect(write.mock.calls[1]?.[0]).toContain("could not store");
  });

  it("names an event too large for the inbox as such (413), not as an inbox that could not store it", () => {
    const { write, log } = setup();
    const tooLarge = new InboxEventTooLargeError("too large", 100, 150);
    log(tooLarge, undefined, true);
    log(tooLarge, undefined, true);
    log(down, undefined, true);
    expect(write.mock.calls.map((call) => call[1])).toEqual([tooLarge, down]);
    expect(write.mock.calls[0]?.[0]).toContain("larger than the inbox can ever hold; it got 413");
  });

  it("names a consumer that cannot verify (a secret not set) as not configured, once a minute", () => {
    const { write, log } = setup();
    const unset = new WebhookVerificationError("secret_invalid", "No webhook secret is set.");
    log(unset, undefined, true);
    log(unset, undefined, true);
    log(down, undefined, true);
    expect(write.mock.calls.map((call) => call[1])).toEqual([unset, down]);
    expect(write.mock.calls[0]?.[0]).toContain("cannot verify deliveries");
  });

  it("writes again when the clock goes back, rather than staying silent until it catches up", () => {
    const { clock, write, log } = setup();
    log(down, undefined, true);
    clock.now -= 3_600_000;
    log(down, undefined, true);
    expect(write).toHaveBeenCalledTimes(2);
  });
});
