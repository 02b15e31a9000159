/**
 * Deno: `deno run -A examples/frameworks/deno.ts` serves the Fetch app with Deno.serve. In this repository, run
 * `npm run build` first: Deno resolves `rest-webhooks/*` through package.json's exports, to dist/.
 */
import { createMemoryInbox } from "rest-webhooks/webhooks/consumer/memory";
import { createFetchApp } from "./fetch-app";

// From Deno's own types; declared here so the example type-checks under tsc.
declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(
    options: { port: number; hostname?: string; onListen?: (address: { port: number }) => void },
    handler: (request: Request) => Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void> };
};

const app = createFetchApp(
  { inbox: createMemoryInbox(), secrets: Deno.env.get("WEBHOOK_SECRET") ?? "" },
  { afterSend: (run) => setTimeout(run, 0) },
);
Deno.serve(
  {
    port: Number(Deno.env.get("PORT") ?? 3000),
    hostname: "127.0.0.1",
    onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`),
  },
  app,
);
