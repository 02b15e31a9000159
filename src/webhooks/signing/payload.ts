import { z } from "zod";
import { WebhookVerificationError } from "./errors";
import type { RawBody } from "./hmac";

/** How a verified body becomes the payload: JSON, an `application/x-www-form-urlencoded` record, or untouched. */
export type PayloadFormat = "json" | "form" | "none";

const decoder = new TextDecoder();

function text(body: RawBody): string {
  // RFC 8259 §8.1: a leading byte order mark may be ignored. TextDecoder drops it from bytes; a string read with
  // Buffer#toString keeps it as U+FEFF, which JSON.parse refuses: the same body must read the same either way.
  if (typeof body === "string") return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  // Lossy on purpose: bytes that are not UTF-8 were verified as bytes and only their reading is lenient.
  return decoder.decode(body);
}

/** The payload of a verified body, validated by `schema` when given; `payload_invalid` otherwise. */
export function readPayload<T>(
  body: RawBody,
  format: PayloadFormat,
  schema: z.ZodType<T> | undefined,
  scheme: string,
): { value: T } | WebhookVerificationError {
  let value: unknown = body;
  if (format === "json") {
    const source = text(body);
    if (source.length > 0) {
      try {
        value = JSON.parse(source);
      } catch (error) {
        return new WebhookVerificationError(
          "payload_invalid",
          `The signature is valid but the body is not JSON (${error instanceof Error ? error.message : String(error)}). Pass parse: "form" for application/x-www-form-urlencoded bodies (e.g. Slack slash commands) or parse: "none" for the raw body.`,
          { scheme, cause: error },
        );
      }
    } else {
      value = undefined;
    }
  } else if (format === "form") {
    value = Object.fromEntries(new URLSearchParams(text(body)));
  }
  if (schema === undefined) return { value: value as T };
  const parsed = schema.safeParse(value);
  if (parsed.success) return { value: parsed.data };
  const issues = z.prettifyError(parsed.error);
  return new WebhookVerificationError(
    "payload_invalid",
    `The signature is valid but the payload does not match the schema:\n${issues.length > 2000 ? `${issues.slice(0, 2000)}…` : issues}`,
    { scheme, cause: parsed.error },
  );
}

/** `payload[name]` when the payload is an object and that member a string. */
export function stringMember(payload: unknown, name: string): string | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const value = (payload as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}
