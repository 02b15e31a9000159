/** app/api/[...path]/route.ts: the items API as Next.js App Router route handlers. */
import { fetchApp } from "../../state";

const handle = (request: Request) => fetchApp()(request);

export {
  handle as DELETE,
  handle as GET,
  handle as HEAD,
  handle as OPTIONS,
  handle as PATCH,
  handle as POST,
  handle as PUT,
};
