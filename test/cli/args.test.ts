/** The CLI's argument parsing: strict, every misuse a UsageError (exit 2), never ignored. */
import { describe, expect, it } from "vitest";
import {
  headerOptions,
  integerOption,
  isHttpUrl,
  parseCommand,
  refuseUserinfo,
  secondsOption,
} from "../../src/cli/args";
import { usageError } from "./usage-error";

const options = { secret: { type: "string", multiple: true }, port: { type: "string" } } as const;

describe("parseCommand()", () => {
  it("reads --flag=value, repeated flags and -- as node's parseArgs does", () => {
    const { values, positionals } = parseCommand(
      ["--secret=a", "--secret", "b", "--port", "3030", "--", "--url"],
      options,
      ["<url>"],
    );
    expect(values).toMatchObject({ secret: ["a", "b"], port: "3030" });
    expect(positionals).toEqual(["--url"]);
  });

  describe("an argument the command does not take is misuse (regression: ignored, verify read an empty stdin)", () => {
    it("one past the command's arguments", () => {
      const error = usageError(() => parseCommand(["capture.http", "--secret", "s"], options));
      expect(error.code).toBe("cli_usage");
      expect(error.message).toContain('unexpected argument "capture.http"');
    });

    it("a second URL", () => {
      const error = usageError(() => parseCommand(["http://a", "http://b"], options, ["<url>"]));
      expect(error.message).toContain('unexpected argument "http://b": the command takes <url> and options');
    });

    it("but not beside --help, which answers whatever else is there", () => {
      expect(parseCommand(["capture.http", "--help"], options).values.help).toBe(true);
    });
  });

  it("an unknown option or a missing value is a UsageError, not node's TypeError", () => {
    expect(usageError(() => parseCommand(["--bogus"], options)).code).toBe("cli_usage");
    expect(usageError(() => parseCommand(["--port"], options)).code).toBe("cli_usage");
  });
});

describe("integerOption()", () => {
  for (const value of ["1e3", "0x10", "-5", "1.5", "", " 7"]) {
    it(`refuses ${JSON.stringify(value)}`, () => {
      expect(usageError(() => integerOption(value, "runs", 25, 1)).message).toContain("--runs must be a whole number");
    });
  }

  // Regression: `verify --now 999…9` (400 digits) was Infinity, and verify's TypeError a stack trace (exit 1); a
  // seed past 2^53 was printed for replay rounded (1e+23), which --seed then refused.
  it.each(["9007199254740992", "9".repeat(400)])(
    "refuses %s, past the whole numbers a double holds exactly",
    (value) => {
      expect(usageError(() => integerOption(value, "now", 0)).message).toContain("≤ 9007199254740991");
    },
  );

  it("reads a whole number and falls back when absent", () => {
    expect(integerOption("9007199254740991", "seed", 0)).toBe(Number.MAX_SAFE_INTEGER);
    expect(integerOption("010", "runs", 25)).toBe(10);
    expect(integerOption(undefined, "runs", 25)).toBe(25);
  });
});

describe("isHttpUrl() (regression: localhost:3000 taken as a URL, every request failing with unknown scheme)", () => {
  for (const url of ["http://localhost:3000/webhooks", "https://example.com", "HTTP://127.0.0.1:9"]) {
    it(`takes ${url}`, () => expect(isHttpUrl(url)).toBe(true));
  }
  for (const url of ["localhost:3000/webhooks", "127.0.0.1:3000", "ftp://example.com", "file:///etc/hosts", "/hooks"]) {
    it(`refuses ${url}`, () => expect(isHttpUrl(url)).toBe(false));
  }
});

describe("secondsOption()", () => {
  it("reads whole and decimal seconds, the fallback when absent", () => {
    expect(secondsOption("0.2", "timeout", 30)).toBe(0.2);
    expect(secondsOption(".5", "timeout", 30)).toBe(0.5);
    expect(secondsOption("45", "timeout", 30)).toBe(45);
    expect(secondsOption("2147483", "timeout", 30)).toBe(2147483);
    expect(secondsOption(undefined, "timeout", 30)).toBe(30);
  });

  it.each(["0", "0.0", "-1", "abc", "1e3", "", " 1", "Infinity", "2147484"])("refuses %j as misuse", (value) => {
    expect(usageError(() => secondsOption(value, "timeout", 30)).message).toBe(
      `--timeout must be a number of seconds > 0 and ≤ 2147483, got "${value}"`,
    );
  });
});

describe("headerOptions()", () => {
  it("lower-cases names and trims values", () => {
    expect(headerOptions(["X-Api-Key:  k1 "])).toEqual({ "x-api-key": "k1" });
  });

  // Regression: a name given twice kept its last value, silently.
  it("joins the values of a name given twice as one field (RFC 9110 §5.3; Cookie with '; ', RFC 6265 §5.4)", () => {
    expect(headerOptions(["Accept: a/b", "accept: c/d", "Cookie: a=1", "Cookie: b=2"])).toEqual({
      accept: "a/b, c/d",
      cookie: "a=1; b=2",
    });
  });

  it("refuses a name that is no token", () => {
    expect(usageError(() => headerOptions(["bad name: x"])).message).toContain("--header");
  });

  // Regression: the refusal quoted the whole option, so a token with its colon forgotten went to the CI log.
  describe("refuses a malformed one without printing it: it may carry a credential", () => {
    for (const given of ["Authorization Bearer sk_live_51Hs3cr3t", "Authorization=Bearer sk_live_51Hs3cr3t: x"]) {
      it(JSON.stringify(given), () => {
        const message = usageError(() => headerOptions(["accept: a/b", given])).message;
        expect(message).toContain("--header #2");
        expect(message).not.toContain("sk_live_51Hs3cr3t");
      });
    }
  });
});

describe("refuseUserinfo()", () => {
  it("accepts a URL without userinfo, and text that is no URL (the caller says what it wants)", () => {
    expect(() => refuseUserinfo("http://127.0.0.1:3000/hook", "--forward-to")).not.toThrow();
    expect(() => refuseUserinfo("openapi.json", "--openapi")).not.toThrow();
  });

  it("refuses a user name alone too, naming the option and where credentials go, not the URL", () => {
    const error = usageError(() => refuseUserinfo("https://tok3n@example.com/", "--openapi", "--header"));
    expect(error.message).toContain("--openapi");
    expect(error.message).toContain("pass credentials in --header");
    expect(error.message).not.toContain("tok3n");
  });
});
