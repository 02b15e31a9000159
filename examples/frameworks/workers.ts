/**
 * Cloudflare Workers: the Fetch app as the Worker's `fetch`. Needs `compatibility_flags = ["nodejs_compat"]`
 * (signatures use node:crypto). A Worker's memory is per isolate: store webhooks in a durable inbox
 * (PostgreSQL through Hyperdrive, say) and process them in a Queue or a Cron Trigger.
 */
import { adapt } from "rest-webhooks/fetch";
import type { Handler } from "rest-webhooks/http";
import type { Inbox } from "rest-webhooks/webhooks/consumer";
import { createAppRouter } from "./fetch-app";

interface Env {
  WEBHOOK_SECRET: string;
}

/** The subset of the Workers runtime's ExecutionContext the example uses. */
interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

/** Builds the Worker around a durable inbox. */
export function createWorker(inbox: Pick<Inbox, "add">) {
  // Made once per isolate, on the first request (the secret comes with `env`): made per request, the items API
  // would start empty every time.
  let app: Handler | undefined;
  return {
    fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
      app ??= createAppRouter({ inbox, secrets: env.WEBHOOK_SECRET }).handler();
      // Adapted per request, so after-send work keeps this request's Worker invocation alive until it is done.
      return adapt(app, { afterSend: (run) => ctx.waitUntil(Promise.resolve().then(run)) })(request);
    },
  };
}

// export default createWorker(inbox); // the Worker module: workerd calls its fetch(request, env, ctx)
