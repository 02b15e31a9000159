import { z } from "zod";

/** The example consumer's settings, read from its environment. */
export interface ConsumerSettings {
  /** The endpoint's `whsec_` secret (`WEBHOOK_SECRET`). */
  secret: string;
  /** `PORT`. @default 4000 */
  port: number;
  /** `HOST`. @default "127.0.0.1" */
  host: string;
  /** `CONSUMER_FAIL_FIRST`: 503 to the first N deliveries of each matching event. @default 0 */
  failFirst: number;
  /** `CONSUMER_FAIL_TYPES`: the event types `failFirst` applies to. @default "*" */
  failTypes: string;
}

/** The settings, or every problem with the environment, one line each. */
export type LoadedConsumerSettings = { ok: true; settings: ConsumerSettings } | { ok: false; errors: string[] };

// A count in decimal digits: z.coerce.number() read "" and " " as 0 (so `PORT=` listened on a random port), "0x10"
// as 16 and "1e3" as 1000. The shop's configuration reads its PORT the same way.
const decimal = z
  .string()
  .regex(/^\d{1,10}$/, "must be written in decimal digits")
  .transform(Number);

const environmentSchema = z.object({
  WEBHOOK_SECRET: z.string().regex(/^whsec_/, "must be the endpoint's whsec_ secret"),
  PORT: decimal.pipe(z.number().max(65_535)).default(4000),
  HOST: z.string().min(1).default("127.0.0.1"),
  CONSUMER_FAIL_FIRST: decimal.default(0),
  CONSUMER_FAIL_TYPES: z.string().default("*"),
});

/**
 * Reads the example consumer's settings from environment variables.
 * @example const loaded = loadConsumerSettings(process.env);
 */
export function loadConsumerSettings(env: Readonly<Record<string, string | undefined>>): LoadedConsumerSettings {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    return { ok: false, errors: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) };
  }
  const e = parsed.data;
  return {
    ok: true,
    settings: {
      secret: e.WEBHOOK_SECRET,
      port: e.PORT,
      host: e.HOST,
      failFirst: e.CONSUMER_FAIL_FIRST,
      failTypes: e.CONSUMER_FAIL_TYPES,
    },
  };
}
