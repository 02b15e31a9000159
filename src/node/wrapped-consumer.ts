import type { Handler } from "../http/message";
import { optionalFunction } from "../options/function-option";
import { describeOption } from "../options/refuse-option";

/**
 * The consumer's handler with a framework helper's `wrap` option applied, checked when the helper is made: a `wrap`
 * that is no function, or returns none, would otherwise fail every delivery with a 500. Internal: the Express and
 * Fastify helpers use it, as they use `consumerAdapterOptions`.
 */
export function wrappedConsumer(
  consumer: Handler,
  wrap: ((handler: Handler) => Handler) | undefined,
  owner: string,
): Handler {
  const checked = optionalFunction(owner, "wrap", wrap, "a function taking the consumer's handler and returning one");
  if (checked === undefined) return consumer;
  const handler: unknown = checked(consumer);
  if (typeof handler !== "function") {
    throw new TypeError(`${owner}: wrap must return a handler function, got ${describeOption(handler)}.`);
  }
  return handler as Handler;
}
