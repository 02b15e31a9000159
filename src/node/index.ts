/**
 * The node:http adapter: serves a {@link Handler} from `node:http` (and anything built on it),
 * with the same names and meaning as `rest-webhooks/fetch`.
 */
export type { AdapterOptions, ReadRequestResult } from "../http/adapter-options";
export type { Handler, HttpRequest, HttpResponse } from "../http/message";
export { adapt, createServer, type RequestListener } from "./adapt";
export { answerClientError } from "./client-error";
export { readRequest } from "./request";
export { sendResponse } from "./response";
export { DEFAULT_SERVER_LIMITS, type NodeAdapterOptions, type ServerLimits } from "./server-limits";
