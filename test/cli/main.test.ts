/**
 * The help texts and docs/cli.md name the same options: every option a command's `--help` lists is documented,
 * and every option the page documents is in some `--help` (regression: --host and --version were undocumented).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkUsage } from "../../src/cli/check";
import { listenUsage } from "../../src/cli/listen";
import { sendUsage } from "../../src/cli/send";
import { verifyUsage } from "../../src/cli/verify";
import { generateSecret, sign } from "../../src/webhooks/signing/index";
import { cliEntry, root, runCli, SOURCE } from "./run-cli";

const page = readFileSync(join(root, "docs", "cli.md"), "utf8");
const USAGES: Record<string, string> = { listen: listenUsage, send: sendUsage, verify: verifyUsage, check: checkUsage };
// `--name=value` on the page is the form, not an option.
const PLACEHOLDERS = new Set(["--name"]);

function options(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map(([option]) => option));
}

// Every test runs its own processes against servers of its own: the suites and their tests run side by side.
describe.concurrent("rest-webhooks --help and docs/cli.md", () => {
  for (const [command, usage] of Object.entries(USAGES)) {
    it(`documents every option of ${command} --help`, () => {
      const missing = [...options(usage)].filter((option) => !options(page).has(option));
      expect(missing).toEqual([]);
    });
  }

  it("documents the top-level options, and lists on --help every option the page names", async () => {
    const run = await runCli(["--help"]);
    expect(run.code).toBe(0);
    const top = options(run.stdout);
    // The options main.ts itself reads, before any command.
    for (const option of ["--help", "--version"]) expect(top).toContain(option);
    expect([...top].filter((option) => !options(page).has(option))).toEqual([]);
    const helped = new Set([...top, ...Object.values(USAGES).flatMap((usage) => [...options(usage)])]);
    expect([...options(page)].filter((option) => !helped.has(option) && !PLACEHOLDERS.has(option))).toEqual([]);
  });

  it("--version prints the package's version", async () => {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    // From the sources: main.ts reads package.json relative to its own file, which a bundle elsewhere is not.
    const run = await runCli(["--version"], { entry: SOURCE });
    expect(run).toMatchObject({ code: 0, stdout: `${version}\n` });
  });
});

describe.concurrent("rest-webhooks help and unknown commands", () => {
  it("help <command> prints that command's help, as <command> --help does", async () => {
    const [run, help] = await Promise.all([runCli(["help", "send"]), runCli(["send", "--help"])]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(help.stdout);
    expect(run.stdout).toContain("Usage: rest-webhooks send");
  });

  // Regression: with no command the usage went to stdout (a script reading it took it for output); it is misuse.
  it("with no command prints the usage on stderr and exits 2; --help prints it on stdout and exits 0", async () => {
    const [none, help] = await Promise.all([runCli([]), runCli(["--help"])]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain("Usage: rest-webhooks <command>");
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toContain("Usage: rest-webhooks <command>");
  });

  // Regression: a name on Object.prototype was taken for a command and crashed with a TypeError.
  it.each(["toString", "constructor", "__proto__"])(
    "%s is an unknown command: exit 2, no stack trace",
    async (name) => {
      const run = await runCli([name]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`unknown command "${name}"`);
      expect(run.stderr).not.toContain("TypeError");
    },
  );
});

describe.concurrent("rest-webhooks | head (stdout closed before the output)", () => {
  it("exits with the verdict, no EPIPE stack trace (regression: an unhandled 'error' event, exit 1)", async () => {
    const secret = generateSecret();
    const body = '{"type":"ping","data":{}}';
    const headers = sign({ id: "msg_pipe", timestamp: Math.floor(Date.now() / 1000), body, secrets: secret });
    const capture = `${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join("\n")}\n\n${body}`;
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    delete env.WEBHOOK_SECRET;
    const child = spawn(process.execPath, [...(await cliEntry()), "verify", "--secret", secret], {
      cwd: root,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    // The reader is gone before the CLI writes its first line, as `head -0` is.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdin.end(capture);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).not.toContain("EPIPE");
    expect(code).toBe(0);
  });
});

describe.concurrent("rest-webhooks <command> --json, a usage error", () => {
  // Regression: printed over six lines, where `listen --json` promises JSON Lines, one object per line.
  it("is one JSON object on one line of stdout", async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    try {
      const port = String((busy.address() as { port: number }).port);
      const run = await runCli(["listen", "--port", port, "--secret", generateSecret(), "--json"]);
      expect(run.code).toBe(2);
      const lines = run.stdout.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({ error: { code: "cli_usage" } });
      expect(run.stderr).toContain(`port ${port} is already in use`);
    } finally {
      busy.close();
    }
  });
});

// Regression: fetch cannot send a URL with a user name or password (it throws a TypeError quoting the URL), so
// `send` reported "no answer (… http://user:pw@…)", exit 1, and `check` printed the password in its error line.
describe.concurrent("a URL with a user name or password is misuse: exit 2, the password never printed", () => {
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const url = "http://user:pw-s3cr3t@127.0.0.1:9/x";
  const cases: Record<string, string[]> = {
    "send <url>": ["send", url, "--type", "t", "--secret", secret],
    "listen --forward-to": ["listen", "--port", "0", "--secret", secret, "--forward-to", url],
    "check <base-url>": ["check", url],
    "check --openapi": ["check", "http://127.0.0.1:9", "--openapi", url],
    "check --webhook-consumer": ["check", "--webhook-consumer", url, "--secret", secret],
  };
  for (const [what, args] of Object.entries(cases)) {
    it(what, async () => {
      const run = await runCli([...args, "--json"]);
      expect(run.code).toBe(2);
      expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: "cli_usage" } });
      expect(run.stderr).toContain("user name or password");
      expect(`${run.stdout}${run.stderr}`).not.toContain("pw-s3cr3t");
    });
  }
});
