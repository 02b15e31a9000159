import { z } from "zod";
import { parseForm } from "../../http/body";
import { forbiddenMemberProblem } from "../../http/forbidden-member";
import { type PrototypeFaultAt, prototypeMemberOf } from "../../http/prototype-members";
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

// A verified signature says who sent the bytes, not that a handler may Object.assign what they hold: a member that
// would set a prototype once copied is refused, as the body readers refuse it (no opt-out; `parse: "none"` gives
// the raw body). Duplicate members are not: the provider's signed bytes are what they are.
function prototypeMember(at: PrototypeFaultAt, scheme: string): WebhookVerificationError {
  const what = at.fault === "proto_key" ? "an own __proto__ member" : "a constructor member holding a prototype member";
  return new WebhookVerificationError(
    "payload_invalid",
    `The signature is valid but the payload has ${what} at "${at.pointer}", which copied into an object sets ` +
      'its prototype (prototype poisoning). Pass parse: "none" to read the raw body yourself.',
    { scheme, cause: forbiddenMemberProblem(at, { status: 422, in: "body" }) },
  );
}

/**
 * The payload of a verified body, validated by `schema` when given; `payload_invalid` otherwise, and for a payload
 * with an own `__proto__` member or a `constructor` member holding a `prototype` member (prototype poisoning), or a
 * form field named `__proto__`, naming it with a JSON Pointer (the cause is the `forbidden_member` problem).
 */
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
      // The escape-aware search (a name may be written with \u escapes); walked only when it finds one.
      const member = prototypeMemberOf(source, value, true);
      if (member !== undefined) return prototypeMember(member, scheme);
    } else {
      value = undefined;
    }
  } else if (format === "form") {
    // The router's reader (parseForm): a repeated name and a `name[]` are lists, as its form bodies and queries are.
    // Its null-prototype record keeps a field named __proto__ (or __proto__[]) as an own member, which
    // Object.assign turns into a prototype: refused, as safeFormBody does.
    const record = parseForm(text(body));
    if (Object.hasOwn(record, "__proto__")) {
      return prototypeMember({ pointer: "/__proto__", fault: "proto_key" }, scheme);
    }
    value = record;
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
