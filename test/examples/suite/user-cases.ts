import { expect, it } from "vitest";
import type { RunningShop } from "../shop-harness";

interface FieldError {
  pointer: string;
  code: string;
}

/** POST/GET/PUT of users: 201 + Location, validators and 304, exact PUT state, 412 and 422. */
export function userCases(shop: () => RunningShop): void {
  it("creates a new user on each POST, with 201 and Location", async () => {
    const first = await shop().api("POST", "/users", { body: { name: "Ada", tier: "gold" } });
    const second = await shop().api("POST", "/users", { body: { name: "Ada", tier: "gold" } });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    const a = first.json<{ id: string; name: string; tier: string }>();
    expect(a).toEqual({ id: expect.stringMatching(/^usr_/), name: "Ada", tier: "gold" });
    expect(first.headers.get("location")).toBe(`/users/${a.id}`);
    expect(second.json().id).not.toBe(a.id);
    const read = await shop().api("GET", `/users/${a.id}`);
    expect(read.json()).toEqual(a);
  });

  it("serves GET with ETag, Last-Modified and Cache-Control, and 304 for matching validators", async () => {
    const created = await shop().api("POST", "/users", { body: { name: "Cache", tier: "basic" } });
    const path = created.headers.get("location") as string;
    // Last-Modified goes out once the second of the change is over (settledLastModified).
    shop().advanceClock(1_000);
    const read = await shop().api("GET", path);
    expect(read.status).toBe(200);
    const etag = read.headers.get("etag") as string;
    const lastModified = read.headers.get("last-modified") as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(Date.parse(lastModified)).not.toBeNaN();
    expect(read.headers.get("cache-control")).toBe("private, no-cache");
    const byTag = await shop().api("GET", path, { headers: { "if-none-match": etag } });
    expect(byTag.status).toBe(304);
    expect(byTag.text).toBe("");
    expect(byTag.headers.get("etag")).toBe(etag);
    const byDate = await shop().api("GET", path, { headers: { "if-modified-since": lastModified } });
    expect(byDate.status).toBe(304);
    const other = await shop().api("GET", path, { headers: { "if-none-match": '"other"' } });
    expect(other.status).toBe(200);
  });

  it("answers 404 for a user that does not exist", async () => {
    const reply = await shop().api("GET", "/users/usr_missing");
    expect(reply.status).toBe(404);
    expect(reply.json().code).toBe("user_not_found");
  });

  it("sets exactly the sent state on PUT, honouring If-Match", async () => {
    const created = await shop().api("POST", "/users", { body: { name: "Put", tier: "basic" } });
    const path = created.headers.get("location") as string;
    const etag = created.headers.get("etag") as string;
    const put = await shop().api("PUT", path, {
      body: { name: "Put", tier: "platinum" },
      headers: { "if-match": etag },
    });
    expect(put.status).toBe(200);
    expect(put.json()).toMatchObject({ name: "Put", tier: "platinum" });
    expect(put.headers.get("etag")).not.toBe(etag);
    const stale = await shop().api("PUT", path, {
      body: { name: "Late", tier: "basic" },
      headers: { "if-match": etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.json().code).toBe("precondition_failed");
    expect((await shop().api("GET", path)).json()).toMatchObject({ name: "Put", tier: "platinum" });
    const missing = await shop().api("PUT", "/users/usr_missing", { body: { name: "X", tier: "y" } });
    expect(missing.status).toBe(404);
  });

  const invalid: [string, unknown, string, string][] = [
    ["a missing field", { name: "No tier" }, "/tier", "invalid_type"],
    ["an empty tier", { name: "Empty", tier: "" }, "/tier", "too_small"],
    ["a wrong type", { name: 42, tier: "gold" }, "/name", "invalid_type"],
    ["an unknown field", { name: "Extra", tier: "gold", admin: true }, "", "unrecognized_keys"],
  ];
  for (const [what, body, pointer, code] of invalid) {
    it(`answers 422 with the field error for ${what} (POST and PUT)`, async () => {
      const post = await shop().api("POST", "/users", { body });
      expect(post.status).toBe(422);
      expect(post.headers.get("content-type")).toBe("application/problem+json");
      expect(post.json<{ errors: FieldError[] }>().errors).toContainEqual(expect.objectContaining({ pointer, code }));
      const created = await shop().api("POST", "/users", { body: { name: "Valid", tier: "gold" } });
      const put = await shop().api("PUT", created.headers.get("location") as string, { body });
      expect(put.status).toBe(422);
      expect(put.json<{ errors: FieldError[] }>().errors).toContainEqual(expect.objectContaining({ pointer, code }));
    });
  }

  it("answers 400 for malformed JSON, 415 for another media type, 413 for an oversized body", async () => {
    const malformed = await shop().api("POST", "/users", { body: '{"name": "Ada",' });
    expect(malformed.status).toBe(400);
    expect(malformed.json().code).toBe("malformed_json");
    const text = await shop().api("POST", "/users", { body: "name=Ada", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    const huge = await shop().api("POST", "/users", {
      body: { name: "x".repeat(shop().config.bodyLimit + 1), tier: "gold" },
    });
    expect(huge.status).toBe(413);
    expect(huge.json().code).toBe("body_too_large");
  });
}
