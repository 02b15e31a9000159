/** Why the Express integration could not serve a request; stable, for `onError` to branch on. */
export type ExpressIntegrationErrorCode = "body_consumed";

/**
 * A misconfigured Express app, reported to `onError` (the client gets a 500 problem of the same code, whose
 * `cause` it is): the message says what to change.
 */
export class ExpressIntegrationError extends Error {
  override readonly name = "ExpressIntegrationError";
  readonly code: ExpressIntegrationErrorCode;

  constructor(code: ExpressIntegrationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * The body was read by a parser or middleware mounted before us; the message names the fix. `express.raw()` is shown
 * with the adapter's `limit`: its own default (100 kB) would refuse, with Express's HTML 413, bodies the adapter
 * accepts; and with `inflate: false`, or it would decode a `Content-Encoding: gzip` body the node adapter passes as
 * sent.
 */
export function bodyConsumedError(method: string, target: string, limit: number): ExpressIntegrationError {
  return new ExpressIntegrationError(
    "body_consumed",
    `rest-webhooks/express: the body of ${method} ${target} was already read by a middleware mounted before this one ` +
      "(express.json(), express.urlencoded(), express.text(), or one reading req itself), so its exact bytes are " +
      "gone: a webhook signature cannot be checked on them and the body readers cannot see them. Mount rest-webhooks " +
      'before the body parser (app.use("/webhooks", webhookConsumer(...)) above app.use(express.json())), or put ' +
      `express.raw({ type: "*/*", inflate: false, limit: ${limit} }) in front of it on this path (the limit is this ` +
      "adapter's bodyLimit; inflate: false keeps a Content-Encoding's bytes as sent).",
  );
}

/**
 * `express.raw()` decoded the body's `Content-Encoding` (its default `inflate: true`): the bytes are not those sent,
 * and the header still names the coding. Told by the coding beside bytes body-parser left (with inflate: false it
 * refuses a coded body itself), or, without one, by a length other than `Content-Length`.
 */
export function bodyDecodedError(method: string, target: string, limit: number): ExpressIntegrationError {
  return new ExpressIntegrationError(
    "body_consumed",
    `rest-webhooks/express: the body of ${method} ${target} was decoded from its Content-Encoding by express.raw() ` +
      "(its default inflate: true), so its exact bytes are gone: a webhook signature cannot be checked on them, and " +
      "the Content-Encoding field no longer describes them. Mount rest-webhooks before the body parser, or give " +
      `express.raw() inflate: false: express.raw({ type: "*/*", inflate: false, limit: ${limit} }) (Express then ` +
      "answers a coded body 415 itself; mounted before any body parser, rest-webhooks takes the coded bytes as sent).",
  );
}
