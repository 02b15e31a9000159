import type { Handler } from "../http/message";
import { Router } from "../routing/router";
import { pathOf } from "./request";

/** What a framework integration mounts: the handler, and whether it answers a request at all. */
export interface Mounted {
  readonly handler: Handler;
  /**
   * False when the request is the framework's to answer: a {@link Router} that has no route for the
   * path (not even for another method). A plain handler answers everything.
   */
  answers(method: string, target: string): boolean;
}

const always = () => true;

/**
 * Turns a handler or a router into what an integration mounts. A router is compiled now, so declaration errors
 * surface when the app starts; routes declared later are not seen (as with `router.handler()`).
 */
export function mountable(app: Handler | Router, caller: string): Mounted {
  if (app instanceof Router) {
    const matcher = app.matcher();
    const handler = app.handler();
    return {
      handler,
      answers: (method, target) => {
        // The path the handler will see, so both agree on whether the router answers.
        const path = pathOf(target);
        // RFC 9110 §9.3.7: the router answers "OPTIONS *" itself.
        return matcher.match(method, path).kind !== "not_found" || (method === "OPTIONS" && path === "*");
      },
    };
  }
  if (typeof app !== "function")
    throw new TypeError(`${caller}: expected a Handler function or a Router, got ${typeof app}.`);
  return { handler: app, answers: always };
}
