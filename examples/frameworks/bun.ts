/** Bun: `bun examples/frameworks/bun.ts` serves the Fetch app with Bun.serve. */
import { createMemoryInbox } from "rest-webhooks/webhooks/consumer/memory";
import { createFetchApp } from "./fetch-app";

// From @types/bun; declared here so the example type-checks without it.
declare const Bun: {
  serve(options: { port: number; hostname?: string; fetch: (request: Request) => Promise<Response> }): {
    port: number;
    stop(): void;
  };
};

const app = createFetchApp(
  { inbox: createMemoryInbox(), secrets: process.env.WEBHOOK_SECRET ?? "" },
  // Bun writes the Response after the fetch callback returns: run after-send work a turn later.
  { afterSend: (run) => setTimeout(run, 0) },
);
const server = Bun.serve({ port: Number(process.env.PORT ?? 3000), hostname: "127.0.0.1", fetch: app });
console.log(`listening on http://127.0.0.1:${server.port}`);
