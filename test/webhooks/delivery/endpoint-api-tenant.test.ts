/**
 * Tenant isolation of the endpoint API as a model-based property: random sequences of operations, each sent by a
 * random caller (two tenants sharing nothing, and the operator) naming any endpoint id seen so far, through the Fetch
 * adapter. Whatever the sequence, no answer to a tenant names another tenant's or the operator's endpoint, their
 * deliveries or their secrets, and nothing a tenant sends changes another's endpoint.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { adapt } from "../../../src/fetch/index";
import { createRouter } from "../../../src/routing/index";
import { declareEndpointApi } from "../../../src/webhooks/delivery/endpoint-api";
import { createEvent } from "../../../src/webhooks/delivery/event";
import { createMemoryDeliveryQueue, createMemoryEndpointStore } from "../../../src/webhooks/delivery/memory/index";
import { OPERATOR } from "../../../src/webhooks/delivery/tenant";

const KEYS = { acme: "sk_acme_key", globex: "sk_globex_key", operator: "sk_operator_key" } as const;
type Caller = keyof typeof KEYS;
const CALLERS = Object.keys(KEYS) as Caller[];
const BASE = "https://api.example.com/v1/webhook_endpoints";

// What one step does: its caller, and which of the endpoints seen so far it names (an index, modulo their number).
const step = fc.record({
  caller: fc.constantFrom(...CALLERS),
  op: fc.constantFrom(
    "create",
    "createAll",
    "list",
    "listAfter",
    "get",
    "patch",
    "update",
    "rotate",
    "delete",
    "deliveries",
    "attempts",
    "replay",
    "test",
    "publish",
  ),
  pick: fc.nat(),
});

describe("the endpoint API's tenant isolation (property)", () => {
  it("no answer to a tenant names another tenant's or the operator's endpoints, deliveries or secrets, and no tenant changes another's endpoint", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const endpoints = createMemoryEndpointStore();
        const queue = createMemoryDeliveryQueue({ endpoints });
        const owners = new Map<string, Caller>(CALLERS.map((caller) => [KEYS[caller], caller]));
        const app = adapt(
          declareEndpointApi(createRouter(), {
            endpoints,
            queue,
            apiKeys: Object.values(KEYS),
            resolve: false,
            tenant: (request) => {
              const caller = owners.get((request.headers.authorization ?? "").replace(/^Bearer /, ""));
              return caller === "operator" ? OPERATOR : caller;
            },
          }).handler(),
        );
        // The model: who owns each endpoint id, and each endpoint's deliveries and secrets.
        const ownerOf = new Map<string, Caller>();
        const secretsOf = new Map<string, Caller>();
        const deliveryOwner = new Map<string, Caller>();
        const allTenants = new Set<string>();
        const send = async (caller: Caller, method: string, path: string, body?: unknown) => {
          const response = await app(
            new Request(`${BASE}${path}`, {
              method,
              headers: { authorization: `Bearer ${KEYS[caller]}`, "content-type": "application/json" },
              body: body === undefined ? undefined : JSON.stringify(body),
            }),
          );
          return { status: response.status, text: await response.text() };
        };
        for (const { caller, op, pick } of steps) {
          const ids = [...ownerOf.keys()];
          const id = ids.length === 0 ? "we_none" : (ids[pick % ids.length] as string);
          const named = ownerOf.get(id);
          // The operator sees everything; a tenant only its own.
          const visible = caller === "operator" || named === caller;
          const before = await endpoints.get(id);
          let answer: { status: number; text: string } | undefined;
          switch (op) {
            case "create": {
              answer = await send(caller, "POST", "", { url: "https://hooks.example.com/in", enabled_events: ["*"] });
              if (answer.status === 201) {
                const created = JSON.parse(answer.text) as { id: string; secret: string; tenant: string | null };
                expect(created.tenant).toBe(caller === "operator" ? null : caller);
                ownerOf.set(created.id, caller);
                secretsOf.set(created.secret, caller);
              }
              break;
            }
            case "createAll": {
              // An endpoint for every tenant's events: the operator's alone may have one.
              const body = { url: "https://audit.example.com/in", enabled_events: ["*"], all_tenants: true };
              answer = await send(caller, "POST", "", body);
              expect(answer.status).toBe(caller === "operator" ? 201 : 422);
              if (answer.status === 201) {
                const created = JSON.parse(answer.text) as { id: string; secret: string };
                ownerOf.set(created.id, caller);
                allTenants.add(created.id);
                secretsOf.set(created.secret, caller);
              }
              break;
            }
            case "list":
              answer = await send(caller, "GET", "?limit=100");
              break;
            case "listAfter":
              answer = await send(caller, "GET", `?limit=100&starting_after=${id}`);
              if (named !== undefined && !visible) expect(answer.status).toBe(400);
              break;
            case "get":
              answer = await send(caller, "GET", `/${id}`);
              break;
            case "patch":
              answer = await send(caller, "PATCH", `/${id}`, { description: `by ${caller}` });
              break;
            case "update":
              answer = await send(caller, "POST", `/${id}`, { status: "disabled" });
              break;
            case "rotate": {
              answer = await send(caller, "POST", `/${id}/rotate_secret`);
              if (answer.status === 200) secretsOf.set((JSON.parse(answer.text) as { secret: string }).secret, caller);
              break;
            }
            case "delete":
              answer = await send(caller, "DELETE", `/${id}`);
              if (answer.status === 200) {
                ownerOf.delete(id);
                allTenants.delete(id);
              }
              break;
            case "deliveries":
              answer = await send(caller, "GET", `/${id}/deliveries`);
              break;
            case "attempts":
              answer = await send(caller, "GET", `/${id}/attempts`);
              break;
            case "replay":
              answer = await send(caller, "POST", `/${id}/replay`, { since: 0 });
              break;
            case "test": {
              answer = await send(caller, "POST", `/${id}/test`);
              if (answer.status === 202) {
                // A test event is for the endpoint asked about, and its delivery belongs to that endpoint's owner.
                const delivery = JSON.parse(answer.text) as { id: string; endpoint_id: string };
                expect(delivery.endpoint_id).toBe(id);
                deliveryOwner.set(delivery.id, ownerOf.get(id) as Caller);
              }
              break;
            }
            case "publish": {
              // The provider publishes for the caller's tenant (the operator: for no tenant).
              const tenant = caller === "operator" ? undefined : caller;
              const { deliveryIds } = await queue.publish(createEvent({ type: "order.created", data: {} }), { tenant });
              for (const deliveryId of deliveryIds) {
                const endpointId = (await queue.get(deliveryId))?.endpointId as string;
                // Every delivery is to an endpoint of the tenant it was published for, or to the operator's for all.
                const owner = ownerOf.get(endpointId) as Caller;
                if (!allTenants.has(endpointId)) expect(owner).toBe(caller);
                deliveryOwner.set(deliveryId, owner);
              }
              break;
            }
          }
          if (answer === undefined) continue;
          // Another tenant's endpoint, or the operator's, is not found (a cursor naming it: 400, checked above).
          if (named !== undefined && !visible && !["create", "createAll", "list", "listAfter"].includes(op)) {
            expect(answer.status, `${caller} ${op} ${id}`).toBe(404);
            expect(await endpoints.get(id), `${caller} ${op} ${id}`).toEqual(before);
          }
          if (caller === "operator") continue;
          // Nothing in the answer belongs to anyone else (a problem may echo the id the caller itself sent).
          for (const [endpointId, owner] of ownerOf) {
            if (owner !== caller && endpointId !== id) expect(answer.text, `${caller} ${op}`).not.toContain(endpointId);
          }
          for (const [deliveryId, owner] of deliveryOwner) {
            if (owner !== caller) expect(answer.text, `${caller} ${op}`).not.toContain(deliveryId);
          }
          for (const [secret, owner] of secretsOf) {
            if (owner !== caller) expect(answer.text, `${caller} ${op}`).not.toContain(secret);
          }
        }
      }),
      {
        numRuns: 100,
        // Always tried first: a tenant's publish beside the operator's endpoint, and beside another tenant's.
        examples: [
          [
            [
              { caller: "operator", op: "create", pick: 0 },
              { caller: "acme", op: "publish", pick: 0 },
            ],
          ],
          [
            [
              { caller: "globex", op: "create", pick: 0 },
              { caller: "acme", op: "create", pick: 0 },
              { caller: "acme", op: "publish", pick: 0 },
              { caller: "operator", op: "publish", pick: 0 },
            ],
          ],
          [
            [
              { caller: "operator", op: "createAll", pick: 0 },
              { caller: "acme", op: "create", pick: 0 },
              { caller: "acme", op: "publish", pick: 0 },
              { caller: "acme", op: "list", pick: 0 },
              { caller: "acme", op: "deliveries", pick: 1 },
              { caller: "globex", op: "publish", pick: 0 },
            ],
          ],
        ],
      },
    );
  });
});
