import type { ServerResponse } from "node:http";
import type { AdapterOptions } from "../../../http/adapter-options";
import type { Handler, HttpResponse } from "../../../http/message";
import { adapt, type RequestListener } from "../../../node/adapt";
import { takeAfterSend } from "../../consumer/after-send";

function watch(res: ServerResponse, response: HttpResponse): HttpResponse {
  const callback = takeAfterSend(response);
  // 'finish': the whole response has been handed to the operating system. A connection that
  // breaks first never finishes; the event is then found by the processor's next poll.
  if (callback !== undefined) res.once("finish", callback);
  return response;
}

/**
 * Adapts a handler that serves a webhook consumer (alone, or mounted in a router) to a node:http
 * request listener, like `adapt` from `rest-webhooks/node`, and runs the after-send callback a
 * response carries (the consumer's `onStored`) on the response's `'finish'` event: a processor
 * woken by it never starts before the whole acknowledgement has been written.
 * @param handler the consumer from `createWebhookConsumer`, or any handler that returns its responses.
 * @param options the node adapter's options (`bodyLimit`, `onError`).
 * @example
 * const runner = startWebhookProcessor(processor);
 * const consumer = createWebhookConsumer({ inbox, secrets: process.env.WEBHOOK_SECRET!, onStored: runner.wake });
 * http.createServer({ joinDuplicateHeaders: true }, adaptWebhookConsumer(consumer)).listen(3000);
 */
export function adaptWebhookConsumer(handler: Handler, options: AdapterOptions = {}): RequestListener {
  return (req, res) => {
    // One adapter per request ties the callback to this `res`; `adapt` only builds a few closures.
    const watched: Handler = (request) => {
      const result = handler(request);
      if (typeof (result as Promise<HttpResponse>).then === "function") {
        return (result as Promise<HttpResponse>).then((response) => watch(res, response));
      }
      return watch(res, result as HttpResponse);
    };
    adapt(watched, options)(req, res);
  };
}
