/** The life of an order: which status may follow which. */
export const ORDER_STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled"] as const;

/** An order's status. */
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The transition table: the statuses each status may move to (staying put is always allowed). */
export const TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  pending: ["paid", "cancelled"],
  paid: ["shipped", "cancelled"],
  shipped: ["delivered"],
  delivered: [],
  cancelled: [],
};

/** The outcome of asking for a status change. */
export type TransitionCheck =
  | { ok: true; changed: boolean }
  | { ok: false; from: OrderStatus; to: OrderStatus; allowed: readonly OrderStatus[] };

/**
 * Checks a status change against {@link TRANSITIONS}. Staying in the same status is allowed, so that a
 * repeated PUT or merge patch (RFC 9110 §9.2.2, RFC 7396) succeeds like the first.
 */
export function checkTransition(from: OrderStatus, to: OrderStatus): TransitionCheck {
  if (from === to) return { ok: true, changed: false };
  const allowed = TRANSITIONS[from];
  return allowed.includes(to) ? { ok: true, changed: true } : { ok: false, from, to, allowed };
}

/**
 * Whether moving an order from `from` to `to` takes the admin scope: a customer may keep a status (a repeated PUT or
 * patch, or new items while pending) and cancel a pending order; paying, shipping, delivering and cancelling a paid
 * order are the shop's to do.
 */
export function takesAdmin(from: OrderStatus, to: OrderStatus): boolean {
  return from !== to && !(from === "pending" && to === "cancelled");
}

/** Whether an order's items may still change: only before it is paid. */
export function itemsEditable(status: OrderStatus): boolean {
  return status === "pending";
}

/**
 * Whether deleting an order in `status` takes the admin scope: a customer may withdraw an order it has not paid
 * (`pending`); a paid, shipped, delivered or cancelled order (which may have been paid and refunded) is part of
 * the shop's records, so only the shop deletes it.
 */
export function deletionTakesAdmin(status: OrderStatus): boolean {
  return status !== "pending";
}
