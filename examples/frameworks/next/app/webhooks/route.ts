/** app/webhooks/route.ts: the webhook consumer as a Next.js route handler (the Node.js runtime: node:crypto). */
import { fetchApp } from "../state";

export const runtime = "nodejs";

export function POST(request: Request): Promise<Response> {
  return fetchApp()(request);
}
