/**
 * Times in and out of `timestamptz`: every instant a JavaScript Date holds that PostgreSQL does too (year 1 to
 * +275760-09-13) is written from epoch milliseconds and read back as the same number, whatever the session's zone.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SqlDatabase, transaction } from "../../src/postgres/index";
import { epochMsOf, timestampOf } from "../../src/postgres/sql-time";
import { databases } from "../support/databases";

const YEAR_1 = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const LAST_DATE = 8.64e15; // +275760-09-13T00:00:00Z, the last instant of a Date (ECMA-262 21.4.1.1)

describe.each(databases())("timestampOf and epochMsOf on $name", (backend) => {
  let db: SqlDatabase;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await backend.open({ max: 1 }));
  });
  afterAll(() => close());

  /** Each of `instants` written with timestampOf and read back with epochMsOf, in a session on `zone`. */
  const roundTrip = (instants: number[], zone = "UTC") =>
    transaction(db, async (tx) => {
      await tx.query(`SET LOCAL TIME ZONE '${zone}'`);
      const { rows } = await tx.query(
        `SELECT ${epochMsOf(timestampOf("v"))} AS back FROM unnest($1::float8[]) WITH ORDINALITY AS u(v, i) ORDER BY i`,
        [instants],
      );
      return rows.map((row) => (row as { back: number }).back);
    });

  // Regression: timestampOf divided by 1000 in float8 and PostgreSQL scaled the seconds to microseconds in float8
  // too, which past 2^42 s (year ~141,600) rounds to a step of about a millisecond: these came back 1 ms late.
  it("round-trips the instants past year 141,600 that came back a millisecond off", async () => {
    const late = [4_406_918_809_886_232, 4_612_840_455_648_661, 6_574_093_341_386_821, 7_647_738_843_440_108];
    expect(await roundTrip(late)).toEqual(late);
  });

  it("round-trips the ends of the range, the epoch and the instants beside them", async () => {
    const edges = [YEAR_1, YEAR_1 + 1, -86_400_001, -86_400_000, -1, 0, 1, 86_399_999, 86_400_000];
    const last = [LAST_DATE - 86_400_001, LAST_DATE - 1, LAST_DATE];
    expect(await roundTrip([...edges, ...last])).toEqual([...edges, ...last]);
  });

  it("round-trips any whole millisecond of the range, in a zone with daylight saving time too", async () => {
    const instants = fc.sample(fc.integer({ min: YEAR_1, max: LAST_DATE }), 2000);
    expect(await roundTrip(instants)).toEqual(instants);
    expect(await roundTrip(instants, "America/New_York")).toEqual(instants);
  });

  it("drops a fraction of a millisecond (Math.floor, the rule of every store), below the epoch too", async () => {
    const { rows } = await db.query(
      `SELECT (extract(epoch from ${timestampOf("$1")}) * 1000)::float8 AS exact, ${timestampOf("$2")} = timestamptz '1970-01-01 00:00:00.001+00' AS same, (extract(epoch from ${timestampOf("$3")}) * 1000)::float8 AS before`,
      [1_700_000_000_000.25, 1.5, -0.5],
    );
    expect(rows).toEqual([{ exact: 1_700_000_000_000, same: true, before: -1 }]);
  });

  it("keeps ±Infinity as ±infinity (a purge before Infinity takes everything), NULL as NULL, and refuses NaN", async () => {
    const { rows } = await db.query(
      `SELECT ${timestampOf("$1")} = 'infinity' AS later, ${timestampOf("$2")} = '-infinity' AS earlier, ${timestampOf("$3")} IS NULL AS none`,
      ["Infinity", "-Infinity", null],
    );
    expect(rows).toEqual([{ later: true, earlier: true, none: true }]);
    await expect(db.query(`SELECT ${timestampOf("$1")}`, ["NaN"])).rejects.toMatchObject({ code: "22008" });
  });

  it("writes the same timestamptz as before for the instants of today's calendar", async () => {
    const instants = [...fc.sample(fc.integer({ min: 0, max: 4_102_444_800_000 }), 500), 1_741_417_200_000];
    const { rows } = await transaction(db, async (tx) => {
      await tx.query("SET LOCAL TIME ZONE 'America/New_York'");
      return tx.query(
        `SELECT count(*)::int AS n FROM unnest($1::float8[]) AS u(v) WHERE ${timestampOf("v")} <> to_timestamp(v / 1000)`,
        [instants],
      );
    });
    expect(rows).toEqual([{ n: 0 }]);
  });
});
