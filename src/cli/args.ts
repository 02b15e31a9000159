import { type ParseArgsConfig, parseArgs } from "node:util";
import { MAX_TIMER_MS } from "../options/timer-delay";
import { UsageError } from "./output";

/** The options of a command, in `node:util` `parseArgs` form. */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** Options every command takes. */
export const COMMON_OPTIONS = {
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
} as const satisfies OptionSpec;

function strictly<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Parses a command's arguments strictly: an unknown option, a missing value or an argument beyond `positionals`
 * is a {@link UsageError} (exit 2) instead of node's own `TypeError` or silence (`verify capture.http` would
 * otherwise read an empty stdin and blame the capture).
 * @param positionals The names of the arguments the command takes, e.g. `["<url>"]`.
 */
export function parseCommand<O extends OptionSpec>(argv: readonly string[], options: O, positionals: string[] = []) {
  const parsed = strictly(() =>
    parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true }),
  );
  const extra = parsed.positionals[positionals.length];
  if (extra !== undefined && (parsed.values as { help?: boolean }).help !== true) {
    const takes = positionals.length === 0 ? "options only" : `${positionals.join(" ")} and options`;
    throw new UsageError(`unexpected argument ${JSON.stringify(extra)}: the command takes ${takes}`);
  }
  return parsed;
}

/**
 * A whole number option, at least `min` and at most `Number.MAX_SAFE_INTEGER`: past it a number is rounded (a seed
 * printed for replay would not be the one given) and enough digits make it Infinity (`verify --now` crashed).
 */
export function integerOption(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > Number.MAX_SAFE_INTEGER)
    throw new UsageError(`--${name} must be a whole number ≥ ${min} and ≤ ${Number.MAX_SAFE_INTEGER}, got "${value}"`);
  return Number(value);
}

// A timer waits at most MAX_TIMER_MS; a longer delay fires at once (node warns TimeoutOverflowWarning).
const MAX_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/**
 * A positive number of seconds, decimals allowed (`0.2`, `30`, `.5`), at most 2147483 (what a timer can wait).
 * @example secondsOption("0.5", "timeout", 30) // 0.5
 */
export function secondsOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const seconds = Number(value);
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value) || seconds <= 0 || seconds > MAX_SECONDS)
    throw new UsageError(`--${name} must be a number of seconds > 0 and ≤ ${MAX_SECONDS}, got "${value}"`);
  return seconds;
}

/**
 * Whether `value` is an absolute http or https URL, the only ones the CLI sends to. `localhost:3000` parses as a URL
 * whose scheme is "localhost" (RFC 3986 §3.1), on which every fetch fails ("unknown scheme"), so it is refused.
 * @example isHttpUrl("http://localhost:3000/webhooks") // true; isHttpUrl("localhost:3000/webhooks") // false
 */
export function isHttpUrl(value: string): boolean {
  return URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);
}

/**
 * Refuses a URL with a user name or password (`http://user:pass@host`) as misuse, without printing it: fetch cannot
 * send one (Fetch standard, the Request constructor throws a TypeError on a URL that includes credentials),
 * RFC 9110 §4.2.4 deprecates userinfo in http(s) URIs, and the password would be in every line naming the URL.
 * @param what The option, e.g. "--forward-to".
 * @param instead Where credentials go instead, if the command has a place for them: `--header "authorization: Basic …"`.
 * @example refuseUserinfo("http://user:pw@host/hook", "send <url>") // throws UsageError
 */
export function refuseUserinfo(value: string, what: string, instead?: string): void {
  if (!URL.canParse(value)) return;
  const url = new URL(value);
  if (url.username === "" && url.password === "") return;
  throw new UsageError(
    `${what} has a user name or password in it (RFC 9110 §4.2.4), which fetch cannot send${instead === undefined ? "" : `; pass credentials in ${instead}`} (the URL is not printed)`,
  );
}

/**
 * A URL as the CLI prints it: each query parameter by its name, its value shown as `…` (a `?token=` is a credential as
 * much as a header is), and no fragment, which is never sent. A value that is no URL is returned as it is.
 * @example shownUrl("http://127.0.0.1:3000/hooks?token=s3cr3t") // "http://127.0.0.1:3000/hooks?token=…"
 */
export function shownUrl(value: string): string {
  if (!URL.canParse(value)) return value;
  const url = new URL(value);
  if (url.search === "") return `${url.origin}${url.pathname}`;
  const names = url.search
    .slice(1)
    .split("&")
    .map((pair) => `${pair.split("=")[0]}=…`);
  return `${url.origin}${url.pathname}?${names.join("&")}`;
}

// RFC 9110 §5.1: field-name = token.
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `--header "name: value"` options as a record (names lower-cased); a name given twice has its values joined as one
 * field (RFC 9110 §5.3: `, `; a Cookie's with `; `, RFC 6265 §5.4); a name that is no token is a UsageError, which
 * names the option by its place, not its text: a `--header "Authorization Bearer …"` missing its colon is a token.
 */
export function headerOptions(values: readonly string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [index, value] of (values ?? []).entries()) {
    const colon = value.indexOf(":");
    const name = value.slice(0, Math.max(colon, 0)).trim();
    if (colon <= 0 || !FIELD_NAME.test(name)) {
      const why = colon <= 0 ? "has no colon" : "has a name that is no token (RFC 9110 §5.1)";
      throw new UsageError(
        `--header #${index + 1} must be "name: value", as in "authorization: Bearer …"; it ${why} (not printed: it may hold a credential)`,
      );
    }
    const key = name.toLowerCase();
    const text = value.slice(colon + 1).trim();
    const before = headers[key];
    headers[key] = before === undefined ? text : `${before}${key === "cookie" ? "; " : ", "}${text}`;
  }
  return headers;
}
