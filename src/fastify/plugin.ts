import { type IncomingMessage, METHODS, type ServerResponse } from "node:http";
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { type AdapterOptions, bodyLimitOf } from "../http/adapter-options";
import type { Handler } from "../http/message";
import { nodeDispatcher } from "../node/adapt";
import { consumerAdapterOptions } from "../node/consumer-adapter-options";
import { type Mounted, mountable } from "../node/mount";
import { mountedTargetProblem } from "../node/mounted-target";
import { type ConsumedCause, startBody } from "../node/request";
// Shared with the Express helper; no Express import behind it.
import { wrappedConsumer } from "../node/wrapped-consumer";
import type { Router } from "../routing/router";
import { createWebhookConsumer, type WebhookConsumerOptions } from "../webhooks/consumer/consumer-handler";

/** Options of {@link restWebhooks}: what to serve, and the node adapter's options. */
export interface RestWebhooksPluginOptions extends AdapterOptions {
  /** A handler (answers every request under the plugin's prefix) or a router (answers its own paths). */
  handler: Handler | Router;
}

/** Options of {@link webhookConsumer}: the consumer's, the path it answers on, and what to wrap around it. */
export interface WebhookConsumerPluginOptions extends WebhookConsumerOptions {
  /** The route, under the plugin's prefix, e.g. `/webhooks/stripe`. */
  url: string;
  /**
   * Wraps the consumer's handler once, when the plugin registers: `traceWebhookReceipt` from `rest-webhooks/otel`
   * (its `receive webhook` span, parent and link as on the node adapter), or a handler of your own in front of the
   * consumer (a provider's handshake). The plugin keeps its route, raw body and answers as without it.
   * @default none: the consumer's handler as built
   * @example
   * await app.register(webhookConsumer, { url: "/webhooks", inbox, secrets, wrap: traceWebhookReceipt });
   */
  wrap?: (handler: Handler) => Handler;
}

// Fastify 5 answers a Content-Type whose media type is not `token "/" token` (RFC 9110 §8.3.1) with its own 415
// (FST_ERR_CTP_INVALID_MEDIA_TYPE) before any parser runs: the same test as its lib/content-type.js, so exactly those
// values are kept from it and put back before the adapter reads the request.
const FASTIFY_MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;
// QUERY: Fastify also answers a missing Content-Type with its own 400 (FST_ERR_ROUTE_MISSING_CONTENT_TYPE, after RFC
// 10008 §2), so a QUERY without a usable one is shown this one instead, and the field as sent put back.
const QUERY_STAND_IN = "application/octet-stream";

// The field as sent (undefined: absent), and what the plugin left in its place for Fastify.
interface HiddenContentType {
  readonly sent: string | undefined;
  readonly shown: string | undefined;
}
const hiddenContentTypes = new WeakMap<IncomingMessage, HiddenContentType>();

function hideRefusedContentType(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const req = request.raw;
  const sent = req.headers["content-type"];
  const refused = sent !== undefined && !FASTIFY_MEDIA_TYPE.test(sent);
  if (req.method === "QUERY" && (sent === undefined || refused)) {
    hiddenContentTypes.set(req, { sent, shown: QUERY_STAND_IN });
    req.headers["content-type"] = QUERY_STAND_IN;
  } else if (refused) {
    hiddenContentTypes.set(req, { sent, shown: undefined });
    delete req.headers["content-type"];
  }
  done();
}

// Puts the field back as sent, unless a hook has set another value since.
function restoreContentType(req: IncomingMessage): void {
  const hidden = hiddenContentTypes.get(req);
  if (hidden === undefined || req.headers["content-type"] !== hidden.shown) return;
  if (hidden.sent === undefined) delete req.headers["content-type"];
  else req.headers["content-type"] = hidden.sent;
}

// Every method node's parser accepts (it answers any other token 400 itself, before Fastify), so the catch-all can
// take them all, as the node adapter does: a router's PURGE route, a 405 with Allow for PROPFIND at a path it knows.
// CONNECT never reaches a request listener (node:http emits 'connect'). Fastify 5 knows nine methods of its own.
function addNodeMethods(fastify: FastifyInstance): void {
  const known = new Set(fastify.supportedMethods);
  for (const method of METHODS) {
    // hasBody: the app's own routes for the method may then take a body, as with POST.
    if (method !== "CONNECT" && !known.has(method)) fastify.addHttpMethod(method, { hasBody: true });
  }
}

// Fields set on the reply by Fastify hooks (@fastify/cors, @fastify/helmet: reply.header() in onRequest or
// preHandler) that a hijacked reply never writes: set on the raw response, where the handler's own fields, given to
// writeHead, replace them.
function copyReplyHeaders(reply: FastifyReply, res: ServerResponse): void {
  const fields = reply.getHeaders();
  for (const name in fields) {
    const value = fields[name];
    if (value !== undefined) res.setHeader(name, value);
  }
}

// The cause of the node adapter's 500 body_consumed when a hook read `request.raw` before the route's handler.
const fastifyConsumedCause: ConsumedCause = (req) =>
  new TypeError(
    `rest-webhooks/fastify: the body of ${req.method} ${req.url} was already read from request.raw before the ` +
      "plugin's route (by an onRequest, preParsing, preValidation or preHandler hook, or a stream a preParsing hook " +
      "piped it into), so its exact bytes are gone: a webhook signature cannot be checked on them and the body " +
      "readers cannot see them. The plugin reads request.raw itself and never a preParsing hook's payload: leave " +
      "request.raw unread in hooks that run for these routes.",
  );

// The path Fastify registers `url` at in this context (lib/route.js: one "/" between prefix and path).
function fullPath(prefix: string, url: string): string {
  return prefix.endsWith("/") && url.startsWith("/") ? prefix + url.slice(1) : prefix + url;
}

/**
 * Registers `url` for every method node accepts (those Fastify lacks added to the instance first) in this
 * (encapsulated) context, with the bodies left raw: the context's content-type parsers are replaced by one that
 * reads nothing, and the node adapter reads the stream itself, so its body limit and 413 apply and the bytes reach
 * the handler (and a signature check) as sent. A method some route registered earlier already has at that path
 * (@fastify/cors's `OPTIONS *`, say) is left to it: Fastify refuses two.
 */
function register(fastify: FastifyInstance, mounted: Mounted, options: AdapterOptions, urls: readonly string[]): void {
  const dispatch = nodeDispatcher(mounted.handler, options);
  const limit = bodyLimitOf(options, "rest-webhooks/fastify");
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  addNodeMethods(fastify);
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    const req = request.raw;
    restoreContentType(req);
    // Fastify matched its routes, prefixes and hooks on the path as sent: never serve another one
    // (src/node/mounted-target.ts).
    const refused = mountedTargetProblem(req.url ?? "/", "Fastify");
    if (refused === undefined && !mounted.answers(req.method ?? "GET", req.url ?? "/")) {
      reply.callNotFound();
      return;
    }
    // The node adapter writes the response; Fastify must not touch it.
    reply.hijack();
    copyReplyHeaders(reply, reply.raw);
    dispatch(req, reply.raw, refused ?? startBody(req, limit, fastifyConsumedCause));
  };
  for (const url of urls) {
    const path = fullPath(fastify.prefix, url);
    const methods = fastify.supportedMethods.filter((method) => !fastify.hasRoute({ method, url: path }));
    if (methods.length === 0) continue;
    fastify.route({
      method: methods,
      url,
      // HEAD is among the methods: the handler answers it (RFC 9110 §9.3.2), not a route Fastify derives from GET.
      exposeHeadRoute: false,
      onRequest: hideRefusedContentType,
      handler,
    });
  }
}

// A callback plugin's throw escapes avvio as an uncaught exception (and register() waits for its plugin timeout):
// misuse (bad options) is handed to done() instead, so register() and ready() reject with the TypeError.
function misuse(done: (error?: Error) => void, setUp: () => void): void {
  try {
    setUp();
  } catch (error) {
    done(error instanceof Error ? error : new TypeError(String(error)));
    return;
  }
  done();
}

/**
 * A Fastify 5 plugin serving a {@link Handler} or a {@link Router} through the node adapter: the same request
 * model, body limit, problem documents and after-send callbacks as `rest-webhooks/node`. It registers one
 * catch-all route for every method node's parser accepts (`fastify.addHttpMethod` adds those Fastify 5 lacks, such
 * as `PURGE` and `PROPFIND`, to the instance), at `/*` under the plugin's prefix, and the prefix itself (Fastify's
 * own routes are more specific and win, and a method a route registered earlier already has at `/*`, such as
 * @fastify/cors's `OPTIONS *`, is left to that route), takes the bodies raw through its own content-type parser (in
 * this plugin's context only), and hands a path the router has no route for to Fastify's not-found handler. Paths
 * are matched as sent, prefix included; a path with a dot-segment or a `\` gets a 400 `bad_request_target` problem
 * (Fastify matched its routes and hooks on it as sent, the handler would see it resolved). Header fields Fastify
 * hooks set with `reply.header()` are sent too; the handler's own replace any of the same name.
 * @param options `handler` and the adapter's `bodyLimit` and `onError`.
 * @example
 * const app = Fastify();
 * await app.register(restWebhooks, { handler: router });
 * await app.listen({ port: 3000 });
 */
export const restWebhooks: FastifyPluginCallback<RestWebhooksPluginOptions> = (fastify, options, done) => {
  const { handler, ...adapter } = options;
  const prefix = fastify.prefix;
  // "/api/*" does not match "/api" itself: under a prefix, the prefix is a path of its own.
  const urls = prefix === "" || prefix.endsWith("/") ? ["/*"] : ["", "/*"];
  misuse(done, () => register(fastify, mountable(handler, "rest-webhooks/fastify restWebhooks"), adapter, urls));
};

/**
 * A Fastify 5 plugin serving a webhook consumer (`createWebhookConsumer`) at `url`, with the body taken raw
 * through the plugin's own content-type parser so the signature is checked on the bytes the provider sent.
 * @param options the consumer's options and `url`; its `bodyLimit` (default 1 MiB) and `onError` serve the
 * adapter too; `wrap` wraps the handler built from them (tracing).
 * @example
 * await app.register(webhookConsumer, { url: "/webhooks", inbox, secrets: process.env.WEBHOOK_SECRET! });
 */
export const webhookConsumer: FastifyPluginCallback<WebhookConsumerPluginOptions> = (fastify, options, done) => {
  const { url, wrap, ...consumer } = options;
  const owner = "rest-webhooks/fastify webhookConsumer";
  misuse(done, () => {
    const mounted = mountable(wrappedConsumer(createWebhookConsumer(consumer), wrap, owner), owner);
    register(fastify, mounted, consumerAdapterOptions(consumer), [url]);
  });
};
