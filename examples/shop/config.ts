import { randomBytes } from "node:crypto";
import { z } from "zod";

/** The shop's configuration, after the environment has been read and checked. */
export interface ShopConfig {
  /** HS256 secret that verifies the API's bearer tokens (at least 32 characters: RFC 7518 §3.2). */
  jwtSecret: string;
  /** The secret key of the webhook endpoint API (`Authorization: Bearer <key>`). */
  apiKey: string;
  /**
   * Where users, orders, idempotency keys and the delivery queue live: embedded PGlite in a data directory (the
   * default: the data survives restarts, no server needed), a PostgreSQL server, or memory (lost on restart).
   */
  storage:
    | { kind: "memory" }
    | { kind: "pglite"; dataDir: string; schema: string }
    | { kind: "postgres"; url: string; schema: string };
  /** Accept `http://` and loopback webhook URLs (local development and tests only). */
  allowInsecureWebhookUrls: boolean;
  /** Delays before each delivery attempt, in ms (the first one included). @default the Standard Webhooks schedule */
  retryScheduleMs?: readonly number[];
  /** An egress proxy every delivery goes through (HTTP CONNECT), e.g. `http://egress.internal:3128`. @default none */
  webhookProxy?: string;
  /** How long an endpoint's open circuit waits before its probe, in ms. @default the worker's (30 s) */
  webhookCircuitCoolDownMs?: number;
  /** Largest request body, in bytes (413 beyond). */
  bodyLimit: number;
  /** Run the delivery worker in this process. */
  deliver: boolean;
  /** The clock, epoch ms (tests inject one). */
  now?: () => number;
}

/** What `main.ts` needs beyond the shop's own configuration. */
export interface ServerConfig {
  port: number;
  host: string;
}

/** The configuration read from the environment, and which secrets were generated because they were unset. */
export type LoadedConfig =
  | { ok: true; shop: ShopConfig; server: ServerConfig; generated: ("SHOP_API_KEY" | "SHOP_JWT_SECRET")[] }
  | { ok: false; errors: string[] };

const flag = z
  .enum(["1", "0", "true", "false", "yes", "no", ""])
  .default("")
  .transform((value) => value === "1" || value === "true" || value === "yes");

const schedule = z
  .string()
  .regex(/^\d+(,\d+)*$/, "a comma-separated list of milliseconds, e.g. 0,1000,2000")
  .transform((value) => value.split(",").map(Number))
  .optional();

// A count in decimal digits: Number() would read "" and " " as 0 (so `PORT=` listened on a random port), "0x10" as
// 16 and "1e3" as 1000.
const decimal = z
  .string()
  .regex(/^\d{1,10}$/, "must be written in decimal digits")
  .transform(Number);

const environmentSchema = z.object({
  NODE_ENV: z.string().default("development"),
  PORT: decimal.pipe(z.number().max(65_535)).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  SHOP_JWT_SECRET: z.string().min(32, "must be at least 32 characters (RFC 7518 §3.2)").optional(),
  SHOP_API_KEY: z
    .string()
    .min(16, "must be at least 16 characters")
    // RFC 6750 §2.1: what an Authorization: Bearer field carries (a line feed from a file would never authenticate).
    .regex(/^[A-Za-z0-9\-._~+/]+=*$/, "must be letters, digits, - . _ ~ + / and = padding (an RFC 6750 b64token)")
    .optional(),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  SHOP_STORAGE: z.enum(["pglite", "memory", "postgres"]).optional(),
  SHOP_DATA_DIR: z.string().min(1).default(".data/shop"),
  SHOP_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, "must be a lower-case SQL identifier")
    .default("shop"),
  WEBHOOKS_ALLOW_INSECURE_URLS: flag,
  SHOP_WEBHOOK_RETRY_SCHEDULE: schedule,
  SHOP_WEBHOOK_PROXY: z.url({ protocol: /^https?$/, error: "an http:// or https:// proxy URL" }).optional(),
  SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS: decimal.pipe(z.number().min(1)).optional(),
  SHOP_BODY_LIMIT: decimal.pipe(z.number().min(1024)).default(65_536),
});

/**
 * Reads the shop's configuration from environment variables. In development (NODE_ENV other than
 * `production`) a missing API key or JWT secret is generated and reported in `generated`; in production
 * both are required.
 * @example const loaded = loadConfig(process.env);
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): LoadedConfig {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    return { ok: false, errors: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) };
  }
  const e = parsed.data;
  const production = e.NODE_ENV === "production";
  const errors: string[] = [];
  const generated: ("SHOP_API_KEY" | "SHOP_JWT_SECRET")[] = [];
  let apiKey = e.SHOP_API_KEY;
  let jwtSecret = e.SHOP_JWT_SECRET;
  if (apiKey === undefined) {
    if (production) errors.push("SHOP_API_KEY: required in production");
    apiKey = `sk_dev_${randomBytes(24).toString("base64url")}`;
    generated.push("SHOP_API_KEY");
  }
  if (jwtSecret === undefined) {
    if (production) errors.push("SHOP_JWT_SECRET: required in production");
    jwtSecret = randomBytes(32).toString("base64url");
    generated.push("SHOP_JWT_SECRET");
  }
  if (production && e.WEBHOOKS_ALLOW_INSECURE_URLS) {
    errors.push("WEBHOOKS_ALLOW_INSECURE_URLS: must not be set in production");
  }
  // DATABASE_URL picks a server; otherwise the data lives in an embedded PGlite directory unless memory is asked for.
  const kind = e.SHOP_STORAGE ?? (e.DATABASE_URL === undefined ? "pglite" : "postgres");
  if (kind === "postgres" && e.DATABASE_URL === undefined)
    errors.push("DATABASE_URL: required with SHOP_STORAGE=postgres");
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    generated,
    server: { port: e.PORT, host: e.HOST },
    shop: {
      jwtSecret,
      apiKey,
      storage:
        kind === "memory"
          ? { kind: "memory" }
          : kind === "postgres"
            ? { kind: "postgres", url: e.DATABASE_URL as string, schema: e.SHOP_DB_SCHEMA }
            : { kind: "pglite", dataDir: e.SHOP_DATA_DIR, schema: e.SHOP_DB_SCHEMA },
      allowInsecureWebhookUrls: e.WEBHOOKS_ALLOW_INSECURE_URLS,
      ...(e.SHOP_WEBHOOK_RETRY_SCHEDULE === undefined ? {} : { retryScheduleMs: e.SHOP_WEBHOOK_RETRY_SCHEDULE }),
      ...(e.SHOP_WEBHOOK_PROXY === undefined ? {} : { webhookProxy: e.SHOP_WEBHOOK_PROXY }),
      ...(e.SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS === undefined
        ? {}
        : { webhookCircuitCoolDownMs: e.SHOP_WEBHOOK_CIRCUIT_COOLDOWN_MS }),
      bodyLimit: e.SHOP_BODY_LIMIT,
      deliver: true,
    },
  };
}
