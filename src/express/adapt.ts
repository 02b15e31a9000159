import type { ServerResponse } from "node:http";
import { type AdapterOptions, bodyLimitOf } from "../http/adapter-options";
import type { Handler } from "../http/message";
import { nodeDispatcher } from "../node/adapt";
import { mountable } from "../node/mount";
import { mountedTargetProblem } from "../node/mounted-target";
import type { ConsumedCause } from "../node/request";
import type { Router } from "../routing/router";
import { type DecodedBodies, type ExpressRequest, expressBody } from "./body";
import { bodyConsumedError, bodyDecodedError } from "./errors";

/**
 * An Express middleware, typed structurally: Express's `req`/`res` are node's with more on them, so it mounts
 * with `app.use` or a route method, and the package needs no Express types.
 */
export type ExpressMiddleware = (req: ExpressRequest, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Mounts a {@link Handler} or a {@link Router} as Express middleware, through the node adapter: the same request
 * model, body limit, problem documents and after-send callbacks as `rest-webhooks/node`. A router calls `next()`
 * for a path it has no route for (a path it knows with another method gets its 405 with `Allow`); a plain
 * handler answers every request that reaches it. Paths are as Express gives them: relative to the mount point
 * (`app.use("/api", adapt(router))` sees `/users` for `/api/users`). A path with a dot-segment or a `\` gets a 400
 * `bad_request_target` problem: Express matched its own middleware on it as sent, the handler would see it resolved.
 *
 * The body is read raw by the adapter. After `express.raw({ inflate: false, ... })` the bytes it read are used
 * (`inflate: false`: by default it decodes a `Content-Encoding`, and bytes it decoded are the 500 `body_consumed`,
 * with or without a Content-Length; with it, Express itself answers a coded body 415); after a parser or middleware
 * that consumed the stream (`express.json()`, ...) the request fails with the node and Fetch adapters' 500
 * `body_consumed` problem, and `onError` gets its cause, an `ExpressIntegrationError` (`body_consumed`) saying where
 * to mount instead.
 * @param app a handler, or a router (compiled now: declaration errors surface at start-up).
 * @param options the node adapter's options (`bodyLimit`, `onError`).
 * @example
 * const app = express();
 * app.use("/webhooks", webhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET! }));
 * app.use("/api", adapt(router));
 * app.use(express.json()); // your own JSON routes after ours
 */
export function adapt(app: Handler | Router, options: AdapterOptions = {}): ExpressMiddleware {
  return adaptBodies(app, options, "refuse");
}

/** {@link adapt}, told what to do with bytes `express.raw()` decoded (see {@link DecodedBodies}). Internal. */
export function adaptBodies(
  app: Handler | Router,
  options: AdapterOptions,
  decodedBodies: DecodedBodies,
): ExpressMiddleware {
  const { handler, answers } = mountable(app, "rest-webhooks/express adapt");
  const dispatch = nodeDispatcher(handler, options);
  const limit = bodyLimitOf(options, "rest-webhooks/express adapt");
  const consumed: ConsumedCause = (req) => bodyConsumedError(req.method ?? "GET", req.url ?? "/", limit);
  const decoded: ConsumedCause = (req) => bodyDecodedError(req.method ?? "GET", req.url ?? "/", limit);
  return (req, res, next) => {
    // Express matched its mounts and guards on the path as sent: never serve another one (src/node/mounted-target.ts).
    const refused = mountedTargetProblem(req.url ?? "/", "Express");
    if (refused !== undefined) {
      dispatch(req, res, refused);
      return;
    }
    if (!answers(req.method ?? "GET", req.url ?? "/")) {
      next();
      return;
    }
    dispatch(req, res, expressBody(req, limit, consumed, decoded, decodedBodies));
  };
}
