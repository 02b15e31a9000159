/**
 * The transcript a failing law prints: credentials (RFC 9110 §11.6.2, §11.7.2; RFC 6265 cookies) appear only by
 * fingerprint, in the requests and in the responses.
 */
import { describe, expect, it } from "vitest";
import { fromFetchHandler } from "../../src/testing/index";
import { CREDENTIAL_FIELDS, redactedField, requestUrl, shownField, Transcript } from "../../src/testing/transcript";
import { secretFingerprint } from "../../src/webhooks/signing/index";

const echo = fromFetchHandler(async () =>
  Response.json({ ok: true }, { headers: { "set-cookie": "session=c00k1e-S3CRET; HttpOnly" } }),
);

describe("Transcript.format() prints credentials by fingerprint only (regression: check printed --header tokens)", () => {
  it("masks Authorization, Proxy-Authorization, Cookie and Set-Cookie, whatever the name's case", async () => {
    const t = new Transcript(echo);
    await t.send({
      method: "GET",
      path: "/things",
      headers: {
        Authorization: "Bearer s3cr3t-T0KEN",
        "proxy-authorization": "Basic dXNlcjpwYXNz",
        cookie: "session=c00k1e-S3CRET",
        accept: "application/json",
      },
    });
    const text = t.format();
    for (const secret of ["s3cr3t-T0KEN", "dXNlcjpwYXNz", "c00k1e-S3CRET"]) expect(text).not.toContain(secret);
    expect(text).toContain(`Authorization: Bearer … (fingerprint ${secretFingerprint("s3cr3t-T0KEN")})`);
    expect(text).toContain(`proxy-authorization: Basic … (fingerprint ${secretFingerprint("dXNlcjpwYXNz")})`);
    expect(text).toContain("set-cookie: … (fingerprint ");
    expect(text).toContain("accept: application/json");
    // The exchanges themselves keep the values: only what is printed is masked.
    expect(t.exchanges[0]?.requestHeaders.Authorization).toBe("Bearer s3cr3t-T0KEN");
  });

  it("masks a law violation's transcript too", async () => {
    const t = new Transcript(echo);
    await t.send({ method: "GET", path: "/", headers: { authorization: "Bearer s3cr3t-T0KEN" } });
    const error = (() => {
      try {
        t.fail("a law", "broken");
      } catch (thrown) {
        return thrown as Error;
      }
    })();
    expect(error?.message).not.toContain("s3cr3t-T0KEN");
  });
});

describe("redactedField()", () => {
  it("keeps the auth scheme and fingerprints the credentials (RFC 9110 §11.4)", () => {
    expect(redactedField("Authorization", "Bearer abc")).toBe(`Bearer … (fingerprint ${secretFingerprint("abc")})`);
  });
  it("fingerprints the whole value of other fields", () => {
    expect(redactedField("x-api-key", "k1 k2")).toBe(`… (fingerprint ${secretFingerprint("k1 k2")})`);
    expect(redactedField("authorization", "token-without-scheme")).toBe(
      `… (fingerprint ${secretFingerprint("token-without-scheme")})`,
    );
  });
  it("covers the four credential fields", () => {
    expect([...CREDENTIAL_FIELDS].sort()).toEqual(["authorization", "cookie", "proxy-authorization", "set-cookie"]);
  });
});

describe("shownField(): a value as a law's reason quotes it, masked as the transcript masks it", () => {
  it("fingerprints the credential fields, whatever the name's case", () => {
    expect(shownField("Set-Cookie", "session=s3cr3t")).toBe(redactedField("set-cookie", "session=s3cr3t"));
    expect(shownField("authorization", "Bearer abc")).toBe(`Bearer … (fingerprint ${secretFingerprint("abc")})`);
  });
  it("fingerprints the fields named as secret (the spec's headers, the CLI's --header), whatever their case", () => {
    expect(shownField("x-api-key", "k1", ["X-Api-Key"])).toBe(`… (fingerprint ${secretFingerprint("k1")})`);
  });
  it("shows other fields as they are, and an absent one as null", () => {
    expect(shownField("etag", '"v1"', ["x-api-key"])).toBe('"v1"');
    expect(shownField("set-cookie", null)).toBe("null");
  });
});

describe("requestUrl()", () => {
  it("appends a path to the base URL, its own path kept, and takes an absolute URL as it is", () => {
    const target = { baseUrl: "http://h/api", send: echo.send };
    expect(requestUrl(target, "/things")).toBe("http://h/api/things");
    expect(requestUrl(target, "http://other/x")).toBe("http://other/x");
  });
});
