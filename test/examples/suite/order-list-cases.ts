import { expect, it } from "vitest";
import type { Reply, RunningShop } from "../shop-harness";

interface ListedOrder {
  id: string;
  user_id: string;
  status: string;
}

const ITEMS = [{ sku: "LIST-1", quantity: 1, unit_price: 100 }];
const MERGE = { "content-type": "application/merge-patch+json" };
// RFC 8288 §3, as the shop writes it: one link, the next page.
const NEXT = /^<([^>]+)>; rel="next"$/;

/** The target of a response's `rel="next"` link, or undefined on the last page. */
function nextOf(reply: Reply): string | undefined {
  const link = reply.headers.get("link");
  if (link === null) return undefined;
  const target = NEXT.exec(link)?.[1];
  expect(target, link).toBeDefined();
  return target;
}

/**
 * Both order lists (`/users/{user_id}/orders`, `/orders`): bare JSON arrays paged by `Link: <…>; rel="next"`,
 * keyset cursors that skip and repeat nothing while orders come and go, `/orders` scoped by the token alone,
 * and the validators of a list that spans users.
 */
export function orderListCases(shop: () => RunningShop): void {
  async function newUser(): Promise<{ id: string; token: string }> {
    const created = await shop().api("POST", "/users", { body: { name: "Lister", tier: "basic" } });
    const id = created.json<{ id: string }>().id;
    return { id, token: await shop().tokenFor(id) };
  }
  async function newOrder(userId: string): Promise<string> {
    const placed = await shop().api("POST", `/users/${userId}/orders`, { body: { items: ITEMS } });
    expect(placed.status).toBe(201);
    return placed.json<{ id: string }>().id;
  }
  async function ship(userId: string, orderId: string): Promise<void> {
    const path = `/users/${userId}/orders/${orderId}`;
    for (const status of ["paid", "shipped"]) {
      expect((await shop().api("PATCH", path, { body: { status }, headers: MERGE })).status).toBe(200);
    }
  }
  /** Follows `rel="next"` from `start` to the last page, calling `between` after each page; every id seen. */
  async function walk(
    start: string,
    token: string | undefined,
    between: (page: number) => Promise<void> = async () => {},
  ): Promise<ListedOrder[]> {
    const seen: ListedOrder[] = [];
    let next: string | undefined = start;
    for (let page = 0; next !== undefined; page++) {
      expect(page, "pages").toBeLessThan(1000);
      const reply = await shop().api("GET", next, token === undefined ? {} : { token });
      expect(reply.status, next).toBe(200);
      seen.push(...reply.json<ListedOrder[]>());
      next = nextOf(reply);
      if (next !== undefined) await between(page);
    }
    return seen;
  }

  it("answers a page of `limit` orders as a JSON array, with a Link to the next exactly when there is one", async () => {
    const user = await newUser();
    const placed: string[] = [];
    for (let i = 0; i < 4; i++) placed.push(await newOrder(user.id));
    const first = await shop().api("GET", `/users/${user.id}/orders?limit=3`);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/json");
    const body = first.json<ListedOrder[]>();
    expect(Array.isArray(body)).toBe(true);
    expect(body.map((o) => o.id)).toEqual(placed.slice(0, 3));
    const next = nextOf(first);
    expect(next).toMatch(new RegExp(`^/users/${user.id}/orders\\?limit=3&cursor=[A-Za-z0-9_-]+$`));
    const last = await shop().api("GET", next as string);
    expect(last.json<ListedOrder[]>().map((o) => o.id)).toEqual(placed.slice(3));
    expect(last.headers.get("link")).toBeNull();
    // A page that ends exactly at the last order has no next page either.
    const exact = await shop().api("GET", `/users/${user.id}/orders?limit=4`);
    expect(exact.json<ListedOrder[]>()).toHaveLength(4);
    expect(exact.headers.get("link")).toBeNull();
    const empty = await shop().api("GET", `/users/${(await newUser()).id}/orders`);
    expect(empty.text).toBe("[]");
    expect(empty.headers.get("link")).toBeNull();
  });

  it("keeps the filter and the page size in the next link", async () => {
    const user = await newUser();
    for (let i = 0; i < 3; i++) await ship(user.id, await newOrder(user.id));
    await newOrder(user.id);
    const first = await shop().api("GET", `/orders?status=shipped&limit=2`, { token: user.token });
    expect(first.json<ListedOrder[]>()).toHaveLength(2);
    expect(nextOf(first)).toMatch(/^\/orders\?status=shipped&limit=2&cursor=[A-Za-z0-9_-]+$/);
  });

  it("visits every order exactly once following rel=next, while orders are created and deleted between pages", async () => {
    for (const list of ["a user's orders", "/orders"]) {
      const user = await newUser();
      const [start, token] =
        list === "/orders" ? ["/orders?limit=2", user.token] : [`/users/${user.id}/orders?limit=2`];
      const before: string[] = [];
      for (let i = 0; i < 9; i++) before.push(await newOrder(user.id));
      // Deleted after the first page (already visited) and after the second (not reached yet).
      const victims = [before[0], before[6]] as string[];
      const created: string[] = [];
      const seen = await walk(start, token, async (page) => {
        created.push(await newOrder(user.id));
        const victim = victims[page];
        if (victim !== undefined) {
          expect((await shop().api("DELETE", `/users/${user.id}/orders/${victim}`)).status).toBe(204);
        }
      });
      const ids = seen.map((o) => o.id);
      expect(new Set(ids).size, `${list}: no order twice`).toBe(ids.length);
      const throughout = before.filter((id) => !victims.includes(id));
      expect(ids, `${list}: nothing that existed throughout is skipped`).toEqual(expect.arrayContaining(throughout));
      expect(ids, `${list}: deleted before it was reached`).not.toContain(victims[1]);
      // Keyset pagination: a new order comes after every cursor, so the walk reaches each one, in order.
      expect(ids.slice(-created.length), list).toEqual(created);
    }
  });

  it("walks an admin's /orders across every user with no order twice, while orders come and go", async () => {
    const a = await newUser();
    const b = await newUser();
    const throughout = [await newOrder(a.id), await newOrder(b.id), await newOrder(a.id), await newOrder(b.id)];
    const doomed = await newOrder(b.id);
    const seen = await walk("/orders?limit=5", shop().adminToken, async (page) => {
      await newOrder(page % 2 === 0 ? a.id : b.id);
      if (page === 0) await shop().api("DELETE", `/users/${b.id}/orders/${doomed}`);
    });
    const ids = seen.map((o) => o.id);
    expect(new Set(ids).size, "no order twice").toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(throughout));
    expect(seen.filter((o) => o.user_id === a.id).length).toBeGreaterThanOrEqual(2);
    expect(seen.filter((o) => o.user_id === b.id).length).toBeGreaterThanOrEqual(2);
  });

  it("lists /orders?status=shipped across users for an admin, and only the caller's own for a user", async () => {
    const a = await newUser();
    const b = await newUser();
    const aShipped = await newOrder(a.id);
    const aPending = await newOrder(a.id);
    const bShipped = await newOrder(b.id);
    await ship(a.id, aShipped);
    await ship(b.id, bShipped);
    const all = await walk("/orders?status=shipped&limit=100", shop().adminToken);
    expect(all.every((o) => o.status === "shipped")).toBe(true);
    const ids = all.map((o) => o.id);
    expect(ids).toEqual(expect.arrayContaining([aShipped, bShipped]));
    expect(ids).not.toContain(aPending);
    expect(ids.indexOf(aShipped)).toBeLessThan(ids.indexOf(bShipped));
    const own = await shop().api("GET", "/orders?status=shipped", { token: a.token });
    expect(own.json<ListedOrder[]>().map((o) => o.id)).toEqual([aShipped]);
    const everything = await shop().api("GET", "/orders", { token: a.token });
    expect(everything.json<ListedOrder[]>().map((o) => o.id)).toEqual([aShipped, aPending]);
    const byB = await shop().api("GET", "/orders?status=shipped", { token: b.token });
    expect(byB.json<ListedOrder[]>().map((o) => o.id)).toEqual([bShipped]);
  });

  it("never widens a user's /orders to other users, whatever the query says", async () => {
    const a = await newUser();
    const b = await newUser();
    const aOrder = await newOrder(a.id);
    await newOrder(b.id);
    // An admin's cursor is only a position: it cannot carry the admin's scope.
    const adminPage = await shop().api("GET", "/orders?limit=1", { token: shop().adminToken });
    const adminCursor = new URL(nextOf(adminPage) as string, "http://x").searchParams.get("cursor") as string;
    const queries = [
      `user_id=${b.id}`,
      `user_id=${b.id}&user_id=${a.id}`,
      `status=pending&user_id=${b.id}`,
      "status=pending&status=shipped",
      "limit=1&limit=100",
      `cursor=${adminCursor}&cursor=${adminCursor}`,
      "admin=true",
      "scope=admin",
      "all=1",
      "User_Id=x",
      "__proto__=x",
      "constructor=x",
      "status[]=pending",
      "filter[user_id]=x",
    ];
    for (const query of queries) {
      const reply = await shop().api("GET", `/orders?${query}`, { token: a.token });
      expect(reply.status, query).toBe(400);
      expect(reply.headers.get("content-type"), query).toBe("application/problem+json");
    }
    for (const query of ["", `cursor=${adminCursor}`, "limit=100", "status=pending"]) {
      // Headers naming another user change nothing either.
      const reply = await shop().api("GET", `/orders?${query}`, {
        token: a.token,
        headers: { "x-user-id": b.id, forwarded: `for=${b.id}` },
      });
      expect(reply.status, query).toBe(200);
      const listed = reply.json<ListedOrder[]>();
      expect(
        listed.map((o) => o.id),
        query,
      ).toEqual([aOrder]);
    }
    // Without a token, /orders is a 401 like every user route; a token for a user that does not exist lists nothing.
    expect((await shop().api("GET", "/orders", { token: undefined })).status).toBe(401);
    const stranger = await shop().api("GET", "/orders", { token: await shop().tokenFor("usr_nobody") });
    expect(stranger.status).toBe(200);
    expect(stranger.text).toBe("[]");
  });

  it("answers 400 problems for a bad limit, status or cursor on /orders", async () => {
    for (const query of ["limit=0", "limit=101", "status=lost", "cursor=zzzz", "cursor=" + "a".repeat(33)]) {
      const reply = await shop().api("GET", `/orders?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.headers.get("content-type"), query).toBe("application/problem+json");
    }
  });

  it("takes a limit in plain decimal digits only, on both lists (not what Number() would coerce)", async () => {
    const user = await newUser();
    await newOrder(user.id);
    await newOrder(user.id);
    const refused = ["0x2", "1e0", "%2B1", "%201", "1%20", "1.0", "01", "0b1", "", "Infinity", "9".repeat(16)];
    for (const path of [`/users/${user.id}/orders`, "/orders"]) {
      for (const limit of refused) {
        const reply = await shop().api("GET", `${path}?limit=${limit}`);
        expect(reply.status, `${path}?limit=${limit}`).toBe(400);
        expect(reply.json(), `${path}?limit=${limit}`).toMatchObject({
          code: "validation_failed",
          errors: [{ pointer: "/limit", in: "query" }],
        });
      }
      const one = await shop().api("GET", `${path}?limit=1`, path === "/orders" ? { token: user.token } : {});
      expect(one.json<ListedOrder[]>(), path).toHaveLength(1);
      expect(nextOf(one), path).toMatch(/[?&]limit=1&/);
    }
  });

  it("answers 400 invalid_cursor for another spelling of an issued cursor (regression: it served that page)", async () => {
    const user = await newUser();
    await newOrder(user.id);
    await newOrder(user.id);
    const next = nextOf(await shop().api("GET", `/users/${user.id}/orders?limit=1`)) as string;
    const cursor = new URL(next, "http://shop.test").searchParams.get("cursor") as string;
    const position = Buffer.from(cursor, "base64url").toString("latin1"); // e.g. "o42"
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(cursor.slice(-1));
    const spellings = [
      `${cursor}A`, // a trailing character too short to make a byte
      `${cursor.slice(0, -1)}${alphabet[last ^ 1]}`, // the last group's unused low bits
      Buffer.from(position.replace("o", "o0")).toString("base64url"), // a leading zero
    ].filter((other) => other !== cursor && /^[A-Za-z0-9_-]{1,32}$/.test(other));
    const decodesAlike = spellings.filter(
      (other) => Buffer.from(other, "base64url").toString("latin1").replace("o0", "o") === position,
    );
    expect(decodesAlike.length).toBeGreaterThanOrEqual(2);
    for (const other of decodesAlike) {
      for (const path of [`/users/${user.id}/orders`, "/orders"]) {
        const reply = await shop().api("GET", `${path}?limit=1&cursor=${other}`);
        expect(reply.status, `${path} cursor=${other} for ${cursor}`).toBe(400);
        expect(reply.json().code).toBe("invalid_cursor");
      }
    }
    expect((await shop().api("GET", next)).status).toBe(200);
  });

  it("serves /orders with validators, Vary: authorization, HEAD and 304", async () => {
    const a = await newUser();
    await newOrder(a.id);
    // Last-Modified goes out once the second of the change is over (settledLastModified).
    shop().advanceClock(1_000);
    for (const token of [shop().adminToken, a.token]) {
      const read = await shop().api("GET", "/orders?limit=1", { token });
      expect(read.headers.get("cache-control")).toBe("private, no-cache");
      expect(read.headers.get("vary")).toBe("authorization");
      const etag = read.headers.get("etag") as string;
      const lastModified = read.headers.get("last-modified") as string;
      expect(etag).toMatch(/^"/);
      expect(Date.parse(lastModified)).not.toBeNaN();
      const byTag = await shop().api("GET", "/orders?limit=1", { token, headers: { "if-none-match": etag } });
      expect(byTag.status).toBe(304);
      expect(byTag.text).toBe("");
      expect(byTag.headers.get("vary")).toBe("authorization");
      const byDate = await shop().api("GET", "/orders?limit=1", {
        token,
        headers: { "if-modified-since": lastModified },
      });
      expect(byDate.status).toBe(304);
      const head = await shop().api("HEAD", "/orders?limit=1", { token });
      expect(head.status).toBe(200);
      expect(head.text).toBe("");
      for (const name of ["etag", "last-modified", "link", "vary", "content-length"]) {
        expect(head.headers.get(name), name).toBe(read.headers.get(name));
      }
      const stale = await shop().api("GET", "/orders?limit=1", { token, headers: { "if-match": '"stale"' } });
      expect(stale.status).toBe(412);
    }
  });

  it("changes the validators when the next page goes or comes though the page's orders stay (RFC 9111 §4.3.4)", async () => {
    for (const list of ["a user's orders", "/orders"]) {
      const user = await newUser();
      // The admin's token (the client's default) for a user's list, the user's own for /orders.
      const [path, as] =
        list === "/orders" ? ["/orders?limit=1", { token: user.token }] : [`/users/${user.id}/orders?limit=1`, {}];
      const kept = await newOrder(user.id);
      const later = await newOrder(user.id);
      // Last-Modified goes out once the second of the change is over (settledLastModified).
      shop().advanceClock(1_000);
      const before = await shop().api("GET", path, as);
      expect(nextOf(before), list).toBeDefined();
      // Cross an HTTP-date second, so that the deletion is visible to If-Modified-Since.
      shop().advanceClock(2_000);
      expect((await shop().api("DELETE", `/users/${user.id}/orders/${later}`)).status).toBe(204);
      // A 304 would leave a cache its stored rel="next" to a page that is gone: it cannot remove a field.
      const gone = await shop().api("GET", path, {
        ...as,
        headers: { "if-none-match": before.headers.get("etag") as string },
      });
      expect(gone.status, `${list}: If-None-Match`).toBe(200);
      expect(gone.text, list).toBe(before.text);
      expect(gone.headers.get("link"), list).toBeNull();
      const byDate = await shop().api("GET", path, {
        ...as,
        headers: { "if-modified-since": before.headers.get("last-modified") as string },
      });
      expect(byDate.status, `${list}: If-Modified-Since`).toBe(200);
      // And the reverse: a next page that appears is not hidden behind a 304 either.
      await newOrder(user.id);
      const back = await shop().api("GET", path, {
        ...as,
        headers: { "if-none-match": gone.headers.get("etag") as string },
      });
      expect(back.status, `${list}: If-None-Match`).toBe(200);
      expect(
        back.json<ListedOrder[]>().map((o) => o.id),
        list,
      ).toEqual([kept]);
      expect(nextOf(back), list).toBeDefined();
    }
  });

  it("dates an admin's /orders by the latest change to any user's orders; a user's by its own", async () => {
    const a = await newUser();
    const b = await newUser();
    const bOrder = await newOrder(b.id);
    // The admin's page that holds b's order (other cases' orders come first).
    let adminPage: string | undefined = "/orders?limit=100";
    for (;;) {
      const reply = await shop().api("GET", adminPage as string, { token: shop().adminToken });
      if (reply.json<ListedOrder[]>().some((o) => o.id === bOrder)) break;
      adminPage = nextOf(reply);
      expect(adminPage, "b's order is listed").toBeDefined();
    }
    const pages = [
      { who: "admin", path: adminPage as string, token: shop().adminToken },
      { who: "a", path: "/orders", token: a.token },
    ];
    // Last-Modified goes out once the second of the change is over (settledLastModified).
    shop().advanceClock(1_000);
    const before = await Promise.all(
      pages.map(async ({ path, token }) => {
        const reply = await shop().api("GET", path, { token });
        return { etag: reply.headers.get("etag") as string, date: reply.headers.get("last-modified") as string };
      }),
    );
    // Cross an HTTP-date second, so that a change is visible to If-Modified-Since.
    shop().advanceClock(2_000);
    // Another user's order is deleted: the admin's list changed, user a's did not.
    expect((await shop().api("DELETE", `/users/${b.id}/orders/${bOrder}`)).status).toBe(204);
    const expected = { admin: 200, a: 304 };
    for (const [i, { who, path, token }] of pages.entries()) {
      const { etag, date } = before[i] as { etag: string; date: string };
      const byDate = await shop().api("GET", path, { token, headers: { "if-modified-since": date } });
      expect(byDate.status, `${who}: If-Modified-Since`).toBe(expected[who as keyof typeof expected]);
      const byTag = await shop().api("GET", path, { token, headers: { "if-none-match": etag } });
      expect(byTag.status, `${who}: If-None-Match`).toBe(expected[who as keyof typeof expected]);
    }
  });

  it("moves the list's Last-Modified when an order is placed, for the user's list and the admin's", async () => {
    const user = await newUser();
    await newOrder(user.id);
    const lists = [`/users/${user.id}/orders`, "/orders?limit=1"];
    // Last-Modified goes out once the second of the change is over (settledLastModified).
    shop().advanceClock(1_000);
    const before = await Promise.all(
      lists.map(async (path) => (await shop().api("GET", path)).headers.get("last-modified") as string),
    );
    // Cross an HTTP-date second, so that the order's time is later than the validators' own.
    shop().advanceClock(2_000);
    await newOrder(user.id);
    shop().advanceClock(1_000);
    for (const [i, path] of lists.entries()) {
      const reply = await shop().api("GET", path);
      expect(Date.parse(reply.headers.get("last-modified") as string), path).toBeGreaterThan(
        Date.parse(before[i] as string),
      );
    }
  });
}
