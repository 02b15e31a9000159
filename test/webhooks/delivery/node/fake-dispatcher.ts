import type { AttemptResult } from "../../../../src/webhooks/delivery/attempt";
import type { DeliveryRequest } from "../../../../src/webhooks/delivery/delivery-request";
import type { Dispatcher, DispatchOptions } from "../../../../src/webhooks/delivery/node/dispatcher";

/** One request the fake dispatcher holds open. */
export interface Pending {
  readonly request: DeliveryRequest;
  readonly signal: AbortSignal | undefined;
  answer(result: AttemptResult): void;
}

/**
 * A dispatcher with no sockets: hosts named in `hanging` never answer (until the test answers them or the worker
 * aborts them), every other host answers 200 on the next macrotask. It records what went out and what is in flight.
 */
export function fakeDispatcher(hanging: (host: string) => boolean = () => false) {
  const sent: DeliveryRequest[] = [];
  const pending = new Set<Pending>();
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  let closed = false;
  const hostOf = (request: DeliveryRequest) => new URL(request.url).host;

  const dispatcher: Dispatcher = {
    dispatch(request: DeliveryRequest, options?: DispatchOptions): Promise<AttemptResult> {
      sent.push(request);
      const host = hostOf(request);
      const now = (inFlight.get(host) ?? 0) + 1;
      inFlight.set(host, now);
      maxInFlight.set(host, Math.max(now, maxInFlight.get(host) ?? 0));
      return new Promise((resolve) => {
        const done = (result: AttemptResult) => {
          if (!pending.delete(entry) && hanging(host)) return;
          inFlight.set(host, (inFlight.get(host) ?? 1) - 1);
          resolve(result);
        };
        const entry: Pending = { request, signal: options?.signal, answer: done };
        if (hanging(host)) {
          pending.add(entry);
          options?.signal?.addEventListener("abort", () =>
            done({ kind: "error", errorKind: "network", message: "aborted", durationMs: 0 }),
          );
        } else setImmediate(() => done({ kind: "response", status: 200, body: "ok", durationMs: 1 }));
      });
    },
    close() {
      closed = true;
    },
  };
  return {
    dispatcher,
    sent,
    pending,
    /** Requests sent to `host`. */
    sentTo: (host: string) => sent.filter((r) => hostOf(r) === host).length,
    /** The most requests `host` ever had in flight at once. */
    maxInFlight: (host: string) => maxInFlight.get(host) ?? 0,
    inFlight: (host: string) => inFlight.get(host) ?? 0,
    closed: () => closed,
  };
}
