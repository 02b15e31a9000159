import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { json } from "../../src/http/message";
import { fromFetchHandler, fromHandler, LawViolation, type ResourceSpec, Transcript } from "../../src/testing/index";
import { countResources, createItem, readState } from "../../src/testing/resource-spec";

const LAW = "one Idempotency-Key creates one resource";

function spec(collection: string): ResourceSpec {
  return { collection, createBody: fc.constant({}) };
}

/** A list of `total` items served `size` at a time, each page linking to the next with `link(offset)`. */
function pagedList(
  total: number,
  size: number,
  link: (offset: number) => string,
  shape: (items: number[]) => unknown = (items) => items,
) {
  return fromHandler((request) => {
    const offset = Number(new URLSearchParams(request.search).get("offset") ?? 0);
    const items = Array.from({ length: Math.max(0, Math.min(size, total - offset)) }, (_, i) => offset + i);
    const headers: Record<string, string> = {};
    if (offset + size < total) headers.link = link(offset + size);
    return json(200, shape(items), headers);
  });
}

async function count(target: ReturnType<typeof fromHandler>, collection = "/things"): Promise<number> {
  return countResources(new Transcript(target), spec(collection), LAW);
}

async function violation(run: Promise<unknown>): Promise<LawViolation> {
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(LawViolation);
  expect((error as LawViolation).code).toBe("law_violated");
  return error as LawViolation;
}

describe("countResources() lists the collection when the spec has no count()", () => {
  const links: [string, (offset: number) => string][] = [
    ["a path-absolute target", (offset) => `</things?offset=${offset}>; rel="next"`],
    ["a relative target, resolved against the page's URL", (offset) => `<things?offset=${offset}>; rel="next"`],
    ["an absolute target", (offset) => `<http://in-process.test/things?offset=${offset}>; rel="next"`],
    ["an unquoted rel among other links", (offset) => `</things>; rel=first, </things?offset=${offset}>; rel=next`],
    ["several relation types in one rel", (offset) => `</things?offset=${offset}>; rel="next last"`],
    // Regression: a comma inside a quoted-string cut the link's parameters, so rel="next" after it was missed and
    // the idempotency law failed a correct API (RFC 8288 §3).
    [
      "a comma in a quoted title before rel",
      (offset) => `</things?offset=${offset}>; title="next page, please"; rel="next"`,
    ],
    ["an upper-case REL=NEXT", (offset) => `</things?offset=${offset}>; REL=NEXT`],
    [
      "next among prev and first",
      (offset) => `</things>; rel="first prev", </things?offset=${offset}>; rel="prev next"`,
    ],
  ];
  for (const [what, link] of links) {
    it(`follows rel="next" to the last page: ${what}`, async () => {
      expect(await count(pagedList(7, 3, link))).toBe(7);
    });
  }

  it("follows rel=next across repeated Link field lines (RFC 9110 §5.3)", async () => {
    const target = fromFetchHandler(async (request) => {
      const offset = Number(new URL(request.url).searchParams.get("offset") ?? 0);
      const headers = new Headers();
      headers.append("link", '</things>; rel="first"; title="the first, page"');
      if (offset < 4) headers.append("link", `</things?offset=${offset + 2}>; rel=next`);
      return Response.json([offset, offset + 1], { headers });
    });
    expect(await count(target)).toBe(6);
  });

  it("counts a JSON array, or the array of a data or items envelope", async () => {
    const next = (offset: number) => `</things?offset=${offset}>; rel="next"`;
    expect(await count(pagedList(5, 2, next, (data) => ({ object: "list", data, has_more: true })))).toBe(5);
    expect(await count(pagedList(5, 2, next, (items) => ({ items })))).toBe(5);
    expect(await count(pagedList(0, 2, next))).toBe(0);
  });

  it("keeps a base URL's own path", async () => {
    const target = fromFetchHandler(async (request) => {
      const url = new URL(request.url);
      const page = url.searchParams.get("page");
      if (url.pathname !== "/api/things") return new Response("not here", { status: 404 });
      return Response.json(page === null ? [1, 2] : [3], {
        headers: page === null ? { link: '<things?page=2>; rel="next"' } : {},
      });
    });
    const transcript = new Transcript({ ...target, baseUrl: "http://in-process.test/api" });
    expect(await countResources(transcript, spec("/things"), LAW)).toBe(3);
  });

  it("fails the law when rel=next leads back to a page already read", async () => {
    const looping = pagedList(10, 2, (offset) => `</things?offset=${offset % 6}>; rel="next"`);
    // Without the check the count would read the loop until its page cap and answer a number.
    const error = await violation(count(looping));
    expect(error.law).toBe(LAW);
  });

  it("fails the law when a page is not a JSON list", async () => {
    expect((await violation(count(fromHandler(() => json(200, { total: 3 }))))).law).toBe(LAW);
  });
});

describe("createItem() resolves the Location against the POST's URL (RFC 9110 §10.2.2)", () => {
  // A store mounted under /api that answers Location with its full path, as a server behind a prefix does.
  function mounted(location: (id: string) => string) {
    const seen: string[] = [];
    const target = fromFetchHandler(async (request) => {
      const url = new URL(request.url);
      seen.push(`${request.method} ${url.origin}${url.pathname}`);
      if (request.method === "POST") return new Response(null, { status: 201, headers: { location: location("t1") } });
      return url.pathname === "/api/things/t1" ? Response.json({ id: "t1" }) : new Response(null, { status: 404 });
    });
    return { seen, target: { ...target, baseUrl: "http://in-process.test/api" } };
  }

  async function itemOf(location: (id: string) => string) {
    const { seen, target } = mounted(location);
    const t = new Transcript(target);
    const item = await createItem(t, spec("/things"), LAW, {});
    const state = await readState(t, spec("/things"), item);
    return { item, state, seen };
  }

  it("does not double a base URL's path (regression: GET /api/api/things/t1)", async () => {
    const { item, state, seen } = await itemOf((id) => `/api/things/${id}`);
    expect(item).toBe("/things/t1");
    expect(state.status).toBe(200);
    expect(seen).toEqual(["POST http://in-process.test/api/things", "GET http://in-process.test/api/things/t1"]);
  });

  it("resolves a relative reference against the collection's URL", async () => {
    expect((await itemOf((id) => `things/${id}`)).state.status).toBe(200);
  });

  it("takes an absolute Location on the target's origin", async () => {
    expect((await itemOf((id) => `http://in-process.test/api/things/${id}`)).item).toBe("/things/t1");
  });

  it("keeps only the path of a Location on another origin: the laws send to the target alone", async () => {
    const { item, seen } = await itemOf((id) => `https://api.example.com/api/things/${id}`);
    expect(item).toBe("/things/t1");
    expect(seen.every((request) => request.includes("http://in-process.test/"))).toBe(true);
  });

  it("keeps a path outside the base URL's path absolute, on the target's origin", async () => {
    const { item, seen } = await itemOf((id) => `/elsewhere/${id}`);
    expect(item).toBe("http://in-process.test/elsewhere/t1");
    expect(seen.at(-1)).toBe("GET http://in-process.test/elsewhere/t1");
  });
});
