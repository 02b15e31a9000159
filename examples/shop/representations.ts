import type { OrderRecord, UserRecord } from "./storage/types";

/** A user as the API shows it: `{id, name, tier}`. */
export function userJson(user: UserRecord): { id: string; name: string; tier: string } {
  return { id: user.id, name: user.name, tier: user.tier };
}

/** An order as the API shows it: the response body, and the data of its webhook events. */
export type OrderJson = {
  id: string;
  user_id: string;
  status: OrderRecord["status"];
  items: { sku: string; quantity: number; unit_price: number }[];
  total: number;
  created_at: string;
  updated_at: string;
};

// The last time formatted: a burst of orders placed within one millisecond, or one order read again and again,
// formats the same instant, and a comparison is much cheaper than toISOString().
let lastTime = Number.NaN;
let lastIso = "";

/** An epoch-ms time in RFC 3339 (`toISOString`). */
function rfc3339(ms: number): string {
  if (ms !== lastTime) {
    lastIso = new Date(ms).toISOString();
    lastTime = ms;
  }
  return lastIso;
}

/** An order as the API shows it (snake_case, amounts in minor units, times in RFC 3339). */
export function orderJson(order: OrderRecord): OrderJson {
  const createdAt = rfc3339(order.createdAt);
  return {
    id: order.id,
    user_id: order.userId,
    status: order.status,
    items: order.items.map((item) => ({ sku: item.sku, quantity: item.quantity, unit_price: item.unit_price })),
    total: order.total,
    created_at: createdAt,
    // A new order was created and last updated at the same instant: format it once.
    updated_at: order.updatedAt === order.createdAt ? createdAt : rfc3339(order.updatedAt),
  };
}

/** The server-computed total: Σ quantity × unit price. */
export function orderTotal(items: readonly { quantity: number; unit_price: number }[]): number {
  let total = 0;
  for (const item of items) total += item.quantity * item.unit_price;
  return total;
}

/** Whether two item lists are the same, line by line. */
export function sameItems(
  a: readonly { sku: string; quantity: number; unit_price: number }[],
  b: readonly { sku: string; quantity: number; unit_price: number }[],
): boolean {
  if (a.length !== b.length) return false;
  return a.every((item, i) => {
    const other = b[i];
    return (
      other !== undefined &&
      item.sku === other.sku &&
      item.quantity === other.quantity &&
      item.unit_price === other.unit_price
    );
  });
}
