import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildDeliveryRequest } from "../../../src/webhooks/delivery/delivery-request";
import {
  activeSecrets,
  type EndpointSecret,
  MAX_ENDPOINT_SECRETS,
  rotateSecrets,
} from "../../../src/webhooks/delivery/endpoint";
import { generateSecret } from "../../../src/webhooks/signing/standard-keys";
import { verify } from "../../../src/webhooks/signing/verify";

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;

describe("rotateSecrets", () => {
  it("keeps the previous secret for the grace period and drops expired ones", () => {
    const once = rotateSecrets([{ secret: "whsec_a", expiresAt: null }], "whsec_b", T0, 1_000);
    expect(once).toEqual([
      { secret: "whsec_a", expiresAt: T0 + 1_000 },
      { secret: "whsec_b", expiresAt: null },
    ]);
    expect(rotateSecrets(once, "whsec_c", T0 + 1_000, 1_000).map((s) => s.secret)).toEqual(["whsec_b", "whsec_c"]);
  });

  it("keeps at most 10 secrets: the new one and the 9 that expire last (regression: 10 rotations in a day made every delivery fail verification)", () => {
    let secrets: EndpointSecret[] = [{ secret: generateSecret(), expiresAt: null }];
    let now = T0;
    for (let i = 0; i < 10; i++) {
      now += 60_000;
      secrets = rotateSecrets(secrets, generateSecret(), now, DAY);
    }
    expect(secrets).toHaveLength(MAX_ENDPOINT_SECRETS);
    // The first secret expired soonest: it went; the others keep their order, newest last.
    const newest = secrets.at(-1) as EndpointSecret;
    expect(newest.expiresAt).toBeNull();
    const request = buildDeliveryRequest(
      { eventId: "evt_1", payload: '{"type":"order.created"}' },
      { url: "https://h.example/", secrets },
      now,
    );
    expect(request.headers["webhook-signature"]?.split(" ")).toHaveLength(10);
    const checked = verify({ body: request.body, headers: request.headers, secrets: newest.secret, now: () => now });
    expect(checked.ok).toBe(true);
  });

  it("drops the secrets that expire soonest, whatever the order they were stored in (fast-check)", () => {
    const entry = fc.record({
      secret: fc.string({ minLength: 1 }),
      expiresAt: fc.option(fc.integer({ min: T0 + 1, max: T0 + DAY }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), fc.integer({ min: 0, max: 2 * DAY }), (stored, grace) => {
        const out = rotateSecrets(stored, "whsec_new", T0, grace);
        expect(out.length).toBeLessThanOrEqual(MAX_ENDPOINT_SECRETS);
        expect(out.at(-1)).toEqual({ secret: "whsec_new", expiresAt: null });
        const kept = out.slice(0, -1).map((s) => s.expiresAt as number);
        const candidates = stored
          .map((s) => Math.min(s.expiresAt ?? Number.POSITIVE_INFINITY, T0 + grace))
          .filter((at) => at > T0);
        // Nothing dropped expires later than anything kept.
        const dropped = candidates.length - kept.length;
        if (dropped > 0)
          expect(Math.min(...kept)).toBeGreaterThanOrEqual(
            [...candidates].sort((a, b) => a - b)[dropped - 1] as number,
          );
        else expect(kept.length).toBe(candidates.length);
      }),
    );
  });
});

describe("activeSecrets", () => {
  it("signs with at most 10 secrets even when more are stored (an endpoint rotated before the cap), the current one always", () => {
    const secrets: EndpointSecret[] = Array.from({ length: 12 }, (_, i) => ({
      secret: `whsec_${i}`,
      expiresAt: T0 + 1_000 + i,
    }));
    secrets.push({ secret: "whsec_current", expiresAt: null });
    const active = activeSecrets({ secrets }, T0);
    expect(active).toHaveLength(10);
    expect(active.at(-1)).toBe("whsec_current");
    expect(active).not.toContain("whsec_0");
    expect(active).toContain("whsec_11");
  });
});
