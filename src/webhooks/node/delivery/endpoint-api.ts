import type { Handler } from "../../../http/message";
import {
  createEndpointAdmin as createEndpointAdminCore,
  type EndpointAdmin,
  type EndpointAdminOptions,
} from "../../delivery/endpoint-admin";
import {
  createEndpointHandler as createEndpointHandlerCore,
  type EndpointHandlerOptions,
} from "../../delivery/endpoint-handler";
import { systemResolver } from "./system-resolver";

/**
 * `createEndpointAdmin` of `rest-webhooks/webhooks`, with DNS at registration: an endpoint whose host name resolves
 * to any forbidden address (loopback, private, link-local…) is refused when created or when its URL changes.
 * `resolve` defaults to {@link systemResolver}; pass your own, or `false` to check IP literals only.
 * @example const admin = createEndpointAdmin({ endpoints, queue });
 */
export function createEndpointAdmin(options: EndpointAdminOptions): EndpointAdmin {
  return createEndpointAdminCore({ ...options, resolve: options.resolve ?? systemResolver });
}

/**
 * `createEndpointHandler` of `rest-webhooks/webhooks`, with DNS at registration (see {@link createEndpointAdmin}):
 * a refused host answers `422 forbidden_address` or `422 unresolvable_host`.
 * @example createServer(createEndpointHandler({ endpoints, queue, apiKeys: [process.env.API_KEY!] }))
 */
export function createEndpointHandler(options: EndpointHandlerOptions): Handler {
  return createEndpointHandlerCore({ ...options, resolve: options.resolve ?? systemResolver });
}
