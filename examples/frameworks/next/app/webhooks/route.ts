/** app/webhooks/route.ts: the webhook consumer as a Next.js route handler (the Node.js runtime: node:crypto). */
import { fetchApp } from "../state";

export const runtime = "nodejs";

const handle = (request: Request) => fetchApp()(request);

// Every method, not POST alone: for a method a route module does not export, Next.js answers a bare 405 without
// Allow; the app answers 405 with Allow: POST as a problem document (RFC 9110 §15.5.6), as the other examples do.
export {
  handle as DELETE,
  handle as GET,
  handle as HEAD,
  handle as OPTIONS,
  handle as PATCH,
  handle as POST,
  handle as PUT,
};
