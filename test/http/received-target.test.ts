import { describe, expect, it } from "vitest";
import type { HttpRequest } from "../../src/http/message";
import { MOUNT_POINT, mountPointOf, RECEIVED_TARGET, receivedTarget } from "../../src/http/received-target";

const request = (extra: Record<symbol, string>): HttpRequest =>
  ({ method: "GET", path: "/items", search: "a=1", headers: {}, body: new Uint8Array(), ...extra }) as HttpRequest;

describe("receivedTarget", () => {
  it("is the adapter's record of the target as sent, else path and query", () => {
    expect(receivedTarget(request({ [RECEIVED_TARGET]: "/api/items?a=1" }))).toBe("/api/items?a=1");
    expect(receivedTarget(request({}))).toBe("/items?a=1");
  });
});

describe("mountPointOf", () => {
  it.each([
    ["/api", "/api"],
    ["/api/", "/api"],
    ["/t/acme", "/t/acme"],
  ])("reads the mount %j as %j", (mount, expected) => {
    expect(mountPointOf(request({ [MOUNT_POINT]: mount }))).toBe(expected);
  });

  // RFC 3986 §4.2: a location starting "//" (or "/\", which browsers read alike) names another host.
  it.each(["//evil.example", "/\\evil.example", "api", ""])(
    "counts %j as no mount, so no location leaves the host",
    (mount) => {
      expect(mountPointOf(request({ [MOUNT_POINT]: mount }))).toBe("");
    },
  );

  it("is none at the root", () => {
    expect(mountPointOf(request({}))).toBe("");
  });
});
