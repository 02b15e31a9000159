import { WebhookVerificationError } from "./errors";
import type { HeaderLookup } from "./headers";
import type { RawBody } from "./hmac";
import type { SignedHeaders, WebhookScheme } from "./scheme";
import { describeSecret } from "./secrets";

const RAW_BODY_HOWTO =
  'Pass the exact bytes received: on Express mount express.raw({ type: "*/*", inflate: false }) on the webhook route (before any JSON parser), on Fetch runtimes use await request.arrayBuffer() (request.text() replaces bytes that are not UTF-8), on node:http collect the request chunks into a Buffer.';

// The ArrayBuffer brand check: the byteLength getter throws for anything else (a Proxy, a look-alike).
const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")?.get as (
  this: unknown,
) => number;

function asBytes(body: unknown): RawBody | undefined {
  // ArrayBuffer.isView is a brand check too: a Proxy around bytes is not bytes node:crypto can hash.
  if (ArrayBuffer.isView(body)) {
    return body instanceof Uint8Array ? body : new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  }
  if (typeof body !== "object" || body === null) return undefined;
  arrayBufferByteLength.call(body);
  return new Uint8Array(body as ArrayBuffer);
}

/**
 * The body as bytes or text when it is raw; `undefined` for anything else (a parsed object, undefined, a Proxy, a
 * detached buffer…). Never throws: the body comes from the request.
 */
export function rawBody(body: unknown): RawBody | undefined {
  if (typeof body === "string") return body;
  try {
    return asBytes(body);
  } catch {
    return undefined;
  }
}

/** The `missing_header` error for request headers that are no record (`null`, a string, an array…). */
export function headersNotReadable(scheme: string, headers: unknown): WebhookVerificationError {
  const what =
    headers === null
      ? "null"
      : Array.isArray(headers)
        ? "an array (req.rawHeaders, or header entries?)"
        : typeof headers;
  return new WebhookVerificationError(
    "missing_header",
    `The request headers are ${what}, not a record of header fields or a Fetch Headers, so no signature header can be read. Pass the request's headers as received: req.headers on node:http and Express, request.headers on Fetch runtimes.`,
    { scheme },
  );
}

/** The `body_not_raw` error for a body that is not a string or bytes. */
export function bodyNotRaw(scheme: string, body: unknown): WebhookVerificationError {
  const what =
    body === undefined || body === null
      ? `The body is ${String(body)}: the raw request body was not captured (or a body parser consumed it).`
      : typeof body === "object"
        ? "The body is a parsed object, not the raw body: a body parser ran before verification. Signatures cover the exact bytes sent, and re-serialising an object (JSON.stringify) changes them."
        : `The body is a ${typeof body}, not the raw body.`;
  return new WebhookVerificationError("body_not_raw", `${what} ${RAW_BODY_HOWTO}`, { scheme });
}

function byteLength(body: RawBody): number {
  return typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
}

/**
 * What the body shows of a consumer that did not pass the raw body, for the message: it is the string
 * "[object Object]", or its length differs from the request's Content-Length. Only a hint: the sender chooses
 * both (a body of those 15 bytes; bytes that are not UTF-8, which `request.text()` turns into U+FFFD), so
 * neither may turn the sender's failure into the consumer's (`body_not_raw`, a 500).
 */
function bodyHint(body: RawBody, header: HeaderLookup): string | undefined {
  if (body === "[object Object]") {
    return 'The body is the string "[object Object]": if this consumer converted an object to a string, that is the cause.';
  }
  // A Content-Length that differs from the body shows the body changed after receipt; with a content coding
  // the length is of the coded bytes, so the comparison says nothing.
  const declared = header("content-length");
  const coding = header("content-encoding");
  if (
    declared !== undefined &&
    (coding === undefined || coding.trim().toLowerCase() === "identity") &&
    /^[0-9]{1,15}$/.test(declared) &&
    Number(declared) !== byteLength(body)
  ) {
    return `The body given is ${byteLength(body)} bytes while the request's Content-Length is ${declared}: if this consumer re-serialised, decoded or trimmed the body, that is the cause.`;
  }
  return undefined;
}

/**
 * Why no signature matched: `no_matching_signature` (400) whatever the body, since a sender can make any body
 * fail. The message lists what was tried and the usual causes, first among them a body that visibly is not
 * what was sent (see {@link bodyHint}).
 */
export function noMatchingSignature(
  scheme: WebhookScheme,
  signed: SignedHeaders,
  body: RawBody,
  secrets: readonly string[],
  header: HeaderLookup,
): WebhookVerificationError {
  const hint = bodyHint(body, header);
  const tried = secrets.map(describeSecret).join(", ");
  const count = `${secrets.length} secret${secrets.length === 1 ? "" : "s"}`;
  return new WebhookVerificationError(
    "no_matching_signature",
    [
      `No signature in the ${scheme.signatureHeader} header matched (scheme ${scheme.name}; ${signed.signatures.length} signature(s) received; tried ${count}: ${tried}).`,
      ...(hint === undefined ? [] : [`${hint} ${RAW_BODY_HOWTO}`]),
      "Usual causes:",
      '(1) the body is not the raw request body: it was parsed and re-serialised (JSON.stringify(req.body)), decoded and re-encoded, or trimmed; verify the exact bytes received (Express: express.raw({ type: "*/*", inflate: false }));',
      "(2) the wrong secret: another endpoint's secret, the test-mode secret for a live event (or the reverse), or a secret rotated at the provider but not here (pass old and new while rotating);",
      `(3) the wrong scheme or secret form: ${scheme.name} expects secrets like ${scheme.secretForm}; Standard Webhooks decodes the base64 after whsec_, while Stripe uses the whole whsec_ string as the key;`,
      "(4) something between sender and here changed the body (a proxy, a charset conversion, a decompression).",
    ].join("\n"),
    { scheme: scheme.name },
  );
}

// The signature header each scheme sends, and the name to pass as `scheme`.
const SCHEME_HEADERS: readonly [header: string, scheme: string, option: string][] = [
  ["webhook-signature", "standard-webhooks", "standardWebhooks (the default)"],
  ["svix-signature", "standard-webhooks", "standardWebhooks (the default)"],
  ["stripe-signature", "stripe", "stripe"],
  ["x-hub-signature-256", "github", "github"],
  ["x-shopify-hmac-sha256", "shopify", "shopify"],
  ["x-slack-signature", "slack", "slack"],
];

/**
 * A `missing_header` failure, told which scheme the request does look like when it carries another scheme's
 * signature header (a Stripe webhook verified as Standard Webhooks, say).
 */
export function missingWithSchemeHint(
  error: WebhookVerificationError,
  scheme: string,
  header: HeaderLookup,
): WebhookVerificationError {
  if (error.code !== "missing_header") return error;
  const found = SCHEME_HEADERS.find(([name, other]) => other !== scheme && header(name) !== undefined);
  if (found === undefined) return error;
  const [name, other, option] = found;
  return new WebhookVerificationError(
    "missing_header",
    `${error.message} This request carries a ${name} header: it looks like a ${other} webhook; pass scheme: ${option}.`,
    { scheme },
  );
}
