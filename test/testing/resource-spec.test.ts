import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { json } from "../../src/http/message";
import { fromFetchHandler, fromHandler, LawViolation, type ResourceSpec, Transcript } from "../../src/testing/index";
import { countResources } from "../../src/testing/resource-spec";

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
  ];
  for (const [what, link] of links) {
    it(`follows rel="next" to the last page: ${what}`, async () => {
      expect(await count(pagedList(7, 3, link))).toBe(7);
    });
  }

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
