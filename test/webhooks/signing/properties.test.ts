import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  signWith,
  VERIFICATION_ERROR_CODES,
  type VerifyResult,
  verify,
  WebhookVerificationError,
} from "../../../src/webhooks/signing/index";
import { caseName, keyPairs, type SchemeCase, schemeCases } from "./scheme-cases";

const NOW = 1_700_000_000;
const clock = () => NOW * 1000;
const runs = { numRuns: 60 };

/** Message ids as Standard Webhooks allows them: visible, without '.'. */
const id = fc.string({ minLength: 1, maxLength: 40, unit: "grapheme-ascii" }).filter((text) => !/[.\s]/.test(text));
/** Bodies of any bytes, including sequences that are not UTF-8, and text of any characters. */
const body = fc.oneof(fc.uint8Array({ maxLength: 512 }), fc.string({ maxLength: 256, unit: "grapheme" }));
const timestamp = fc.integer({ min: NOW - 200, max: NOW + 200 });

function signFor(
  entry: SchemeCase,
  input: { id: string; timestamp: number; body: string | Uint8Array; secret: string },
) {
  return signWith(entry.scheme, { id: input.id, timestamp: input.timestamp, body: input.body, secrets: input.secret });
}

function check(
  entry: SchemeCase,
  bodyValue: string | Uint8Array,
  headers: Record<string, string>,
  secrets: string | string[],
) {
  return verify({ body: bodyValue, headers, secrets, scheme: entry.scheme, parse: "none", now: clock });
}

const failed = (result: VerifyResult<unknown>) => !result.ok && result.error instanceof WebhookVerificationError;

/** Replaces the character at `index` with a different printable ASCII character. */
function flipChar(text: string, index: number, shift: number): string {
  const code = text.charCodeAt(index);
  const replaced = 33 + ((code - 33 + 1 + (shift % 93) + 94) % 94);
  return (
    text.slice(0, index) + String.fromCharCode(replaced === code ? replaced + 1 : replaced) + text.slice(index + 1)
  );
}

describe.each(schemeCases.map((entry) => [caseName(entry), entry] as const))("%s", (_name, entry) => {
  it("sign → verify round-trips for any body, id and secret", () => {
    fc.assert(
      fc.property(id, timestamp, body, entry.secret, (idValue, ts, bodyValue, secret) => {
        const headers = signFor(entry, { id: idValue, timestamp: ts, body: bodyValue, secret });
        const result = check(entry, bodyValue, headers, secret);
        expect(result.ok).toBe(true);
        if (result.ok) {
          expect(result.payload).toBe(bodyValue);
          if (entry.idHeader) expect(result.id).toBe(idValue);
          expect(result.timestamp).toBe(entry.timestamped ? ts : undefined);
        }
      }),
      runs,
    );
  });

  it("flipping any single byte of the body fails", () => {
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 256 });
    fc.assert(
      fc.property(
        id,
        bytes,
        entry.secret,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (idValue, bodyValue, secret, at, mask) => {
          const headers = signFor(entry, { id: idValue, timestamp: NOW, body: bodyValue, secret });
          const altered = Uint8Array.from(bodyValue);
          altered[at % altered.length]! ^= mask;
          expect(failed(check(entry, altered, headers, secret))).toBe(true);
        },
      ),
      runs,
    );
  });

  it("flipping any single character of a signed header (signature, id, timestamp) fails", () => {
    fc.assert(
      fc.property(
        id,
        body,
        entry.secret,
        fc.nat(),
        fc.nat(),
        fc.nat(),
        (idValue, bodyValue, secret, which, at, shift) => {
          const headers = signFor(entry, { id: idValue, timestamp: NOW, body: bodyValue, secret });
          const signed = [entry.scheme.signatureHeader];
          if (entry.scheme.name === "standard-webhooks") signed.push("webhook-id", "webhook-timestamp");
          if (entry.scheme.name === "slack") signed.push("x-slack-request-timestamp");
          const name = signed[which % signed.length]!;
          const value = headers[name]!;
          const altered = { ...headers, [name]: flipChar(value, at % value.length, shift) };
          expect(failed(check(entry, bodyValue, altered, secret))).toBe(true);
        },
      ),
      runs,
    );
  });

  it("rotation accepts any listed secret and rejects the others", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(entry.secret, { minLength: 2, maxLength: 4 }),
        fc.nat(),
        body,
        (secrets, pick, bodyValue) => {
          const signer = secrets[pick % secrets.length]!;
          const headers = signFor(entry, { id: "msg_rotation", timestamp: NOW, body: bodyValue, secret: signer });
          expect(check(entry, bodyValue, headers, secrets).ok).toBe(true);
          const others = secrets.filter((secret) => secret !== signer);
          const rejected = check(entry, bodyValue, headers, others);
          expect(rejected.ok ? undefined : rejected.error.code).toBe("no_matching_signature");
        },
      ),
      runs,
    );
  });
});

describe("whatever the input, verify returns a result and throws nothing", () => {
  const names = fc.oneof(
    fc.constantFrom(
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
      "Webhook-Signature",
      "svix-signature",
      "stripe-signature",
      "x-hub-signature-256",
      "x-hub-signature",
      "x-shopify-hmac-sha256",
      "x-slack-signature",
      "x-slack-request-timestamp",
      "content-length",
    ),
    fc.string({ maxLength: 20 }),
  );
  const tokens = fc.oneof(
    fc.constantFrom("v1,", "v1a,", "t=", "v1=", "sha256=", "v0=", " ", ",", "=", "1700000000", "0", "-1", "."),
    fc.string({ maxLength: 12 }),
    fc.base64String({ maxLength: 90 }),
  );
  const value = fc.oneof(
    fc.array(tokens, { maxLength: 6 }).map((parts) => parts.join("")),
    fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 }),
    fc.constant(undefined),
  );
  const headers = fc.dictionary(names, value, { maxKeys: 8 });
  const anyBody = fc.oneof(body, fc.anything(), fc.constant(undefined), fc.constant("[object Object]"));
  // Secrets are configuration: any text (well formed or not) and the unset values; other types are misuse (below).
  const unset = fc.constantFrom(undefined, null, "");
  const anySecrets = fc.oneof(
    fc.constantFrom(...schemeCases.map((entry) => entry.secret)).chain((secret) => secret),
    fc.constantFrom(keyPairs[0]!.publicKey, "whsk_AAAA", "whpk_" + "A".repeat(43) + "=", " whsec_abc", "sk_live_x", ""),
    fc.string(),
    fc.array(fc.oneof(fc.string(), unset), { maxLength: 3 }),
    unset,
  );
  const scheme = fc.constantFrom(...schemeCases.map((entry) => entry.scheme));
  const parse = fc.constantFrom("json" as const, "form" as const, "none" as const);

  // A Fetch Headers with the fields it accepts (it refuses names and values that are not tokens or bytes).
  function toFetchHeaders(map: Record<string, string | string[] | undefined>): Headers {
    const out = new Headers();
    for (const [name, value] of Object.entries(map)) {
      for (const item of typeof value === "string" ? [value] : (value ?? [])) {
        try {
          out.append(name, item);
        } catch {
          // Not a valid field: left out.
        }
      }
    }
    return out;
  }
  const thrower = (what: string) => () => {
    throw new Error(`${what} blew up`);
  };
  // Built inside the property (fast-check itself probes generated values, which would trip the hostile ones).
  const later = <T>(arbitrary: fc.Arbitrary<T>, build: (value: T) => unknown = (value) => value) =>
    arbitrary.map((value) => Object.assign(() => build(value), { toString: () => `() => ${fc.stringify(value)}` }));
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };
  /** Header containers of any shape a request handler might hand over, including hostile ones. */
  const headerShapes: fc.Arbitrary<() => unknown> = fc.oneof(
    later(headers),
    later(headers, toFetchHeaders),
    later(fc.constantFrom(null, undefined, 0, 1, true, Symbol("h"))),
    later(fc.string()),
    later(fc.array(fc.oneof(fc.string(), fc.anything()), { maxLength: 4 })),
    later(fc.anything()),
    // A record some of whose fields throw when read.
    later(fc.tuple(headers, fc.array(names, { maxLength: 3 })), ([map, throwing]) => {
      const out: Record<string, unknown> = { ...map };
      for (const name of throwing)
        Object.defineProperty(out, name, { get: thrower(name), enumerable: true, configurable: true });
      return out;
    }),
    // Proxies whose traps throw, one or all of them.
    later(
      fc.tuple(headers, fc.subarray(["get", "has", "ownKeys", "getOwnPropertyDescriptor", "getPrototypeOf"] as const)),
      ([map, traps]) => new Proxy(map, Object.fromEntries(traps.map((trap) => [trap, thrower(trap)]))),
    ),
    // Fetch Headers look-alikes whose get misbehaves, and a revoked Proxy.
    later(fc.constantFrom("throws", "number", "object", "getter", "revoked"), (kind) => {
      if (kind === "throws") return { get: thrower("get") };
      if (kind === "number") return { get: () => 42 };
      if (kind === "object") return { get: () => ({ toString: thrower("toString") }) };
      if (kind === "getter") return Object.defineProperty({}, "get", { get: thrower("get getter") });
      return revoked();
    }),
  );
  /** Bodies of any type, including hostile objects. */
  const bodyShapes: fc.Arbitrary<() => unknown> = fc.oneof(
    later(anyBody),
    later(
      fc.constantFrom("bytes proxy", "throwing proxy", "throwing toString", "symbol", "bigint", "view", "revoked"),
      (kind) => {
        if (kind === "bytes proxy") return new Proxy(new Uint8Array(4), {});
        if (kind === "throwing proxy")
          return new Proxy({}, { getPrototypeOf: thrower("getPrototypeOf"), get: thrower("get") });
        if (kind === "throwing toString") return { toString: thrower("toString"), valueOf: thrower("valueOf") };
        if (kind === "symbol") return Symbol("body");
        if (kind === "bigint") return 10n;
        if (kind === "view") return new DataView(new ArrayBuffer(3));
        return revoked();
      },
    ),
  );

  it("never throws for arbitrary header containers (null, strings, arrays, throwing getters, Proxies) and bodies", () => {
    fc.assert(
      fc.property(
        headerShapes,
        bodyShapes,
        anySecrets,
        scheme,
        parse,
        (headerValue, bodyValue, secrets, schemeValue, format) => {
          const result = verify({
            body: bodyValue() as string,
            headers: headerValue() as Record<string, string>,
            secrets: secrets as string,
            scheme: schemeValue,
            parse: format,
            now: clock,
          });
          if (!result.ok) {
            expect(result.error).toBeInstanceOf(WebhookVerificationError);
            expect(VERIFICATION_ERROR_CODES).toContain(result.error.code);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("wrapping valid headers in a transparent Proxy changes nothing", () => {
    const entry = schemeCases[0]!;
    fc.assert(
      fc.property(id, body, entry.secret, (idValue, bodyValue, secret) => {
        const signed = signFor(entry, { id: idValue, timestamp: NOW, body: bodyValue, secret });
        const plain = check(entry, bodyValue, signed, secret);
        const proxied = verify({
          body: bodyValue,
          headers: new Proxy(signed, {}),
          secrets: secret,
          parse: "none",
          now: clock,
        });
        expect(proxied).toEqual(plain);
        expect(proxied.ok).toBe(true);
      }),
      runs,
    );
  });

  it("a secrets value of another type is misuse: TypeError, whatever the request", () => {
    const wrongSecret = fc.oneof(
      fc.oneof(fc.integer(), fc.boolean(), fc.object(), fc.uint8Array()),
      fc.tuple(fc.string(), fc.oneof(fc.integer(), fc.boolean(), fc.object())).map(([good, bad]) => [good, bad]),
    );
    fc.assert(
      fc.property(headerShapes, bodyShapes, wrongSecret, (headerValue, bodyValue, secrets) => {
        expect(() =>
          verify({
            body: bodyValue() as string,
            headers: headerValue() as Record<string, string>,
            secrets: secrets as unknown as string,
          }),
        ).toThrow(TypeError);
      }),
      { numRuns: 100 },
    );
  });

  it("never throws for arbitrary header maps, bodies and secrets; failures carry a known code", () => {
    fc.assert(
      fc.property(headers, anyBody, anySecrets, scheme, parse, (headerMap, bodyValue, secrets, schemeValue, format) => {
        const result = verify({
          body: bodyValue as string,
          headers: headerMap,
          secrets: secrets as string,
          scheme: schemeValue,
          parse: format,
          now: clock,
        });
        if (!result.ok) {
          expect(result.error).toBeInstanceOf(WebhookVerificationError);
          expect(VERIFICATION_ERROR_CODES).toContain(result.error.code);
          expect(result.error.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
  });
});
