/**
 * The hostile-input suite against the shop's PostgreSQL storage: on embedded PGlite always, and on the server when
 * DATABASE_URL is set. Both refuse NUL in text and lone surrogates in jsonb, which is what the suite is about.
 */
import { describe } from "vitest";
import { databases } from "../support/databases";
import { hostileInputSuite } from "./hostile-input-suite";
import { openPostgresShopStorage } from "./postgres-storage";

describe.each(databases())("hostile input against the example shop on PostgreSQL storage ($name)", (backend) => {
  hostileInputSuite(() => openPostgresShopStorage(backend, "shop_hostile", 4));
});
