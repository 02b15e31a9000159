// One contender of bench/shop in a process of its own (../support/server-process.ts). Its argument: {contender,
// secret}; it answers "events" with how many order.created events it has queued so far, and "stop counting" by
// unwrapping the shop's storage before timing.
import { randomBytes } from "node:crypto";
import { createShop } from "../../examples/shop/app";
import type { ShopConfig } from "../../examples/shop/config";
import { listen } from "../../examples/shop/server";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import type { ShopStorage } from "../../examples/shop/storage/types";
import { issueToken } from "../../examples/shop/tokens";
import { serveOverIpc } from "../support/server-process";
import { ORDER_ID, USER_ID } from "./common";
import { bare, type Contender, expressApp, fastify } from "./peers";

/** What the bench's process needs to load a contender: where it listens and what to ask for. */
export interface ServedTarget {
  name: string;
  url: string;
  orderPath: string;
  collectionPath: string;
  token: string;
}
export type ContenderName = "shop" | "bare" | "fastify" | "express";
export type Question = "events" | "stop counting";

const ITEMS = { items: [{ sku: "TEA-1", quantity: 2, unit_price: 450 }] };

// Counting stops before timing, so the timed shop runs its storage unwrapped but for one branch.
let counting = true;

/** The shop's memory storage, counting the events its transactions publish (for the check before timing). */
function countingStorage(): { storage: ShopStorage; events: () => number } {
  const memory = createMemoryStorage();
  let events = 0;
  const storage: ShopStorage = {
    ...memory,
    transaction: (work) => {
      if (!counting) return memory.transaction(work);
      return memory.transaction((tx) =>
        work({
          getUser: (id) => tx.getUser(id),
          getOrder: (userId, orderId) => tx.getOrder(userId, orderId),
          listOrders: (userId, query) => tx.listOrders(userId, query),
          putUser: (user) => tx.putUser(user),
          placeOrder: (order) => tx.placeOrder(order),
          updateOrder: (order) => tx.updateOrder(order),
          deleteOrder: (userId, orderId) => tx.deleteOrder(userId, orderId),
          touchOrders: (userId, at) => tx.touchOrders(userId, at),
          publish: (event) => {
            if (event.type === "order.created") events++;
            return tx.publish(event);
          },
        }),
      );
    },
  };
  return { storage, events: () => events };
}

/**
 * POSTs the seeded order's items to a collection through `fetch`, and reads the answer to its end (an unread body holds
 * the client's connection): the seeding every contender's process makes of itself before timing.
 */
async function postOrder(collectionUrl: string, authorization: string): Promise<Response> {
  const response = await fetch(collectionUrl, {
    method: "POST",
    headers: { authorization, "content-type": "application/json" },
    body: JSON.stringify(ITEMS),
  });
  await response.arrayBuffer();
  return response;
}

async function startShop(secret: string): Promise<ServedTarget & Pick<Contender, "events" | "close">> {
  const config: ShopConfig = {
    jwtSecret: secret,
    apiKey: `sk_bench_${randomBytes(16).toString("base64url")}`,
    storage: { kind: "memory" },
    allowInsecureWebhookUrls: false,
    bodyLimit: 65_536,
    deliver: false,
  };
  const { storage, events } = countingStorage();
  const shop = await createShop(config, { storage });
  const server = await listen(shop.handler, { port: 0, host: "127.0.0.1", bodyLimit: config.bodyLimit });
  const admin = { authorization: `Bearer ${await issueToken(secret, { sub: "admin", admin: true })}` };
  const user = await fetch(`${server.url}/users`, {
    method: "POST",
    headers: { ...admin, "content-type": "application/json" },
    body: JSON.stringify({ name: "Bench", tier: "basic" }),
  });
  const userId = ((await user.json()) as { id: string }).id;
  const order = await postOrder(`${server.url}/users/${userId}/orders`, admin.authorization);
  return {
    name: "rest-webhooks shop",
    url: server.url,
    orderPath: order.headers.get("location") as string,
    collectionPath: `/users/${userId}/orders`,
    token: await issueToken(secret, { sub: userId, expiresIn: "2h" }),
    events,
    close: async () => {
      await server.close();
      await shop.close();
    },
  };
}

/**
 * A peer's process makes the requests the shop's seeding makes (two POSTs, through `fetch`, to itself) before it is
 * timed, so every contender's process has run the same client code and held the same connection. Before, the shop's
 * process alone did so; six runs each way read the shop at 0.95 → 0.99 (GET), 0.92 → 0.94 (304) and 0.94 → 0.95 (POST)
 * of Fastify on average, at the edge of the runs' noise (docs/benchmarks.md, "The keeping floor").
 */
async function startPeer(contender: Contender, secret: string): Promise<ServedTarget & Contender> {
  const token = await issueToken(secret, { sub: USER_ID, expiresIn: "2h" });
  const collectionPath = `/users/${USER_ID}/orders`;
  for (let i = 0; i < 2; i++) {
    const seeded = await postOrder(`${contender.url}${collectionPath}`, `Bearer ${token}`);
    if (seeded.status !== 201) throw new Error(`${contender.name}: seeding POST → ${seeded.status}`);
  }
  return { ...contender, orderPath: `${collectionPath}/${ORDER_ID}`, collectionPath, token };
}

function start(name: ContenderName, secret: string) {
  switch (name) {
    case "shop":
      return startShop(secret);
    case "bare":
      return bare(secret).then((c) => startPeer(c, secret));
    case "fastify":
      return fastify(secret).then((c) => startPeer(c, secret));
    case "express":
      return expressApp(secret).then((c) => startPeer(c, secret));
  }
}

const { contender, secret } = JSON.parse(process.argv[2] ?? "{}") as { contender: ContenderName; secret: string };
const served = await start(contender, secret);
serveOverIpc<Question>(
  {
    name: served.name,
    url: served.url,
    orderPath: served.orderPath,
    collectionPath: served.collectionPath,
    token: served.token,
  } satisfies ServedTarget,
  (question) => {
    if (question === "events") return served.events();
    counting = false;
    return 0;
  },
  () => served.close(),
);
