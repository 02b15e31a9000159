import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttemptDeadline } from "../../../src/webhooks/consumer/attempt-deadline";
import type { InboxEvent } from "../../../src/webhooks/consumer/event";
import { handlerInput } from "../../../src/webhooks/consumer/handler-input";
import { type BundledScript, bundleScript } from "../../support/bundled-script";

const event: InboxEvent = {
  id: "evt_1",
  type: "order.shipped",
  payload: { order: "o_1" },
  scheme: "standard-webhooks",
  timestamp: undefined,
  receivedAt: 0,
};

interface Input {
  event: InboxEvent;
  attempt: number;
  signal: AbortSignal;
  client?: string;
}

// An AttemptDeadline that counts the reads of its signal.
function countingDeadline(): { deadline: AttemptDeadline; reads: () => number } {
  const deadline = new AttemptDeadline(new AbortController().signal, 1_000);
  let reads = 0;
  const made = Object.getOwnPropertyDescriptor(AttemptDeadline.prototype, "signal")?.get as () => AbortSignal;
  Object.defineProperty(deadline, "signal", {
    get() {
      reads++;
      return made.call(deadline);
    },
  });
  return { deadline, reads: () => reads };
}

describe("handlerInput", () => {
  it("holds the context's members, then event, attempt and signal, as own enumerable members in that order", () => {
    const input = handlerInput<Input>({ client: "pg" }, event, 2, countingDeadline().deadline);
    expect(Object.keys(input)).toEqual(["client", "event", "attempt", "signal"]);
    expect(input.event).toBe(event);
    expect(input.attempt).toBe(2);
    expect(input.signal).toBeInstanceOf(AbortSignal);
  });

  it("makes the signal only when the handler reads it, and the same signal on every read", () => {
    const { deadline, reads } = countingDeadline();
    const input = handlerInput<Input>({}, event, 1, deadline);
    expect(reads()).toBe(0);
    const first = input.signal;
    expect(input.signal).toBe(first);
    expect(reads()).toBe(2);
  });

  it("is carried by a spread of the input, signal included, and shows nothing else", () => {
    const input = handlerInput<Input>({}, event, 1, countingDeadline().deadline);
    const copy = { ...input, log: "x" };
    expect(copy.signal).toBe(input.signal);
    expect(Object.getOwnPropertySymbols(input)).toHaveLength(1);
    expect(Object.getOwnPropertySymbols(copy)).toHaveLength(0);
  });

  it("lets a context member named like one of its own be overridden by it, as the object literal did", () => {
    const input = handlerInput<Input>({ event: "theirs", attempt: 9 }, event, 1, countingDeadline().deadline);
    expect(input.event).toBe(event);
    expect(input.attempt).toBe(1);
  });
});

// An object literal's `get signal()` is a new closure per attempt, and V8 gave each input a hidden class of its own,
// held in the old generation, which kept every event's payload alive through the scavenges (handler-input.ts).
describe("the processor's handler inputs in V8", () => {
  let bundled: BundledScript | undefined;
  beforeAll(async () => {
    bundled = await bundleScript(fileURLToPath(new URL("./fixtures/handler-input-maps.ts", import.meta.url)));
  }, 60_000);
  afterAll(() => bundled?.remove());

  it("share one hidden class, a handler that read its signal included", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      "--allow-natives-syntax",
      (bundled as BundledScript).file,
    ]);
    expect(JSON.parse(stdout)).toEqual({ count: 3, sameMap: true, afterRead: true });
  }, 60_000);
});
