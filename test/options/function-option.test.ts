import { describe, expect, it } from "vitest";
import { optionalFunction, requiredFunction } from "../../src/options/function-option";
import { describeOption, refuseOption } from "../../src/options/refuse-option";

describe("function options", () => {
  it("returns a function, or undefined when the option is optional and left out", () => {
    const now = () => 0;
    expect(optionalFunction("owner", "now", now)).toBe(now);
    expect(optionalFunction("owner", "now", undefined)).toBeUndefined();
    expect(requiredFunction("owner", "handler", now)).toBe(now);
  });

  it("refuses anything else in the one wording, naming what the function must do", () => {
    expect(() => optionalFunction("verify", "now", Date.now(), "a function returning milliseconds")).toThrow(
      /^verify: now must be a function returning milliseconds, got \d+\.$/,
    );
    expect(() => optionalFunction("owner", "onEvent", "log")).toThrow(
      new TypeError('owner: onEvent must be a function, got "log".'),
    );
    expect(() => optionalFunction("owner", "onEvent", null)).toThrow(
      new TypeError("owner: onEvent must be a function, got null."),
    );
    expect(() => requiredFunction("owner", "handler", undefined)).toThrow(
      new TypeError("owner: handler must be a function, got undefined."),
    );
  });
});

describe("refused options", () => {
  it("name the value so the caller sees why it was refused", () => {
    expect(describeOption("5")).toBe('"5"');
    expect(describeOption("x".repeat(50))).toBe(JSON.stringify(`${"x".repeat(40)}…`));
    expect(describeOption(Object.create(null))).toBe("[object Object]");
    expect(describeOption([1])).toBe("[object Array]");
    expect(describeOption(() => 1)).toBe("a function");
    expect(describeOption(Symbol("s"))).toBe("Symbol(s)");
    expect(describeOption(1.5)).toBe("1.5");
    expect(() => refuseOption("createWebhookConsumer", "status", "202", "200 or 202")).toThrow(
      new TypeError('createWebhookConsumer: status must be 200 or 202, got "202".'),
    );
  });
});
