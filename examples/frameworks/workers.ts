/**
 * Cloudflare Workers: the Fetch app as the Worker's `fetch`. Needs `compatibility_flags = ["nodejs_compat"]`
 * (signatures use node:crypto). A Worker's memory is per isolate: store webhooks in a durable inbox
 * (PostgreSQL through Hyperdrive, say) and process them in a Queue or a Cron Trigger.
 */
import type { Inbox } from "rest-webhooks/webhooks/consumer";
import { createFetchApp } from "./fetch-app";

interface Env {
  WEBHOOK_SECRET: string;
}

/** The subset of the Workers runtime's ExecutionContext the example uses. */
interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

/** Builds the Worker around a durable inbox. */
export function createWorker(inbox: Pick<Inbox, "add">) {
  return {
    fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
      const app = createFetchApp(
        { inbox, secrets: env.WEBHOOK_SECRET },
        // After-send work keeps the Worker alive until it is done.
        { afterSend: (run) => ctx.waitUntil(Promise.resolve().then(run)) },
      );
      return app(request);
    },
  };
}
