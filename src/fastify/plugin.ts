import type { FastifyInstance, FastifyPluginCallback } from "fastify";
import { type AdapterOptions, bodyLimitOf } from "../http/adapter-options";
import type { Handler } from "../http/message";
import { nodeDispatcher } from "../node/adapt";
import { consumerAdapterOptions } from "../node/consumer-adapter-options";
import { type Mounted, mountable } from "../node/mount";
import { startBody } from "../node/request";
import type { Router } from "../routing/router";
import { createWebhookConsumer, type WebhookConsumerOptions } from "../webhooks/consumer/consumer-handler";

/** Options of {@link restWebhooks}: what to serve, and the node adapter's options. */
export interface RestWebhooksPluginOptions extends AdapterOptions {
  /** A handler (answers every request under the plugin's prefix) or a router (answers its own paths). */
  handler: Handler | Router;
}

/** Options of {@link webhookConsumer}: the consumer's, and the path it answers on. */
export interface WebhookConsumerPluginOptions extends WebhookConsumerOptions {
  /** The route, under the plugin's prefix, e.g. `/webhooks/stripe`. */
  url: string;
}

/**
 * Registers `url` for every method in this (encapsulated) context, with the bodies left raw: the context's
 * content-type parsers are replaced by one that reads nothing, and the node adapter reads the stream itself, so
 * its body limit and 413 apply and the bytes reach the handler (and a signature check) as sent.
 */
function register(fastify: FastifyInstance, mounted: Mounted, options: AdapterOptions, url: string): void {
  const dispatch = nodeDispatcher(mounted.handler, options);
  const limit = bodyLimitOf(options, "rest-webhooks/fastify");
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  fastify.route({
    method: fastify.supportedMethods,
    url,
    // HEAD is among the methods: the handler answers it (RFC 9110 §9.3.2), not a route Fastify derives from GET.
    exposeHeadRoute: false,
    handler: (request, reply) => {
      const req = request.raw;
      if (!mounted.answers(req.method ?? "GET", req.url ?? "/")) {
        reply.callNotFound();
        return;
      }
      // The node adapter writes the response; Fastify must not touch it.
      reply.hijack();
      dispatch(req, reply.raw, startBody(req, limit));
    },
  });
}

/**
 * A Fastify 5 plugin serving a {@link Handler} or a {@link Router} through the node adapter: the same request
 * model, body limit, problem documents and after-send callbacks as `rest-webhooks/node`. It registers one
 * catch-all route (`/*` under the plugin's prefix; Fastify's own routes are more specific and win), takes the
 * bodies raw through its own content-type parser (in this plugin's context only), and hands a path the router has
 * no route for to Fastify's not-found handler. Paths are matched as sent, prefix included.
 * @param options `handler` and the adapter's `bodyLimit` and `onError`.
 * @example
 * const app = Fastify();
 * await app.register(restWebhooks, { handler: router });
 * await app.listen({ port: 3000 });
 */
export const restWebhooks: FastifyPluginCallback<RestWebhooksPluginOptions> = (fastify, options, done) => {
  const { handler, ...adapter } = options;
  register(fastify, mountable(handler, "rest-webhooks/fastify restWebhooks"), adapter, "/*");
  done();
};

/**
 * A Fastify 5 plugin serving a webhook consumer (`createWebhookConsumer`) at `url`, with the body taken raw
 * through the plugin's own content-type parser so the signature is checked on the bytes the provider sent.
 * @param options the consumer's options and `url`; its `bodyLimit` (default 1 MiB) and `onError` serve the
 * adapter too.
 * @example
 * await app.register(webhookConsumer, { url: "/webhooks", inbox, secrets: process.env.WEBHOOK_SECRET! });
 */
export const webhookConsumer: FastifyPluginCallback<WebhookConsumerPluginOptions> = (fastify, options, done) => {
  const { url, ...consumer } = options;
  const mounted = mountable(createWebhookConsumer(consumer), "rest-webhooks/fastify webhookConsumer");
  register(fastify, mounted, consumerAdapterOptions(consumer), url);
  done();
};
