/**
 * The Fetch adapter: serves a {@link Handler} as `(Request) => Promise<Response>`, with the same names
 * and meaning as `rest-webhooks/node`.
 */
export type { AdapterOptions, ReadRequestResult } from "../http/adapter-options";
export type { Handler, HttpRequest, HttpResponse } from "../http/message";
export { adapt } from "./adapt";
export { readRequest } from "./request";
export { sendResponse } from "./response";
