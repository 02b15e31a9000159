import { afterAll, beforeAll, describe } from "vitest";
import { migrate, type SqlClient } from "../../../src/postgres/index";
import { createMemoryCircuitBoard } from "../../../src/webhooks/delivery/memory/index";
import { createPostgresCircuitBoard, deliveryMigrations } from "../../../src/webhooks/delivery/postgres/index";
import { databases, type OpenDatabase } from "../../support/databases";
import { uniqueName } from "../../support/services";
import { circuitBoardContract } from "./circuit-board-contract";

circuitBoardContract("memory", () => createMemoryCircuitBoard());

describe.each(databases())("the PostgreSQL circuit board on $name", (backend) => {
  const schema = uniqueName("whcb").toLowerCase();
  let open: OpenDatabase;
  beforeAll(async () => {
    open = await backend.open({ max: 8 });
    await migrate(open.db, deliveryMigrations({ schema }));
  });
  afterAll(async () => {
    await open.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await open.close();
  });
  circuitBoardContract(
    `postgres (${backend.name})`,
    () => createPostgresCircuitBoard({ client: open.db as SqlClient, schema }),
    backend.concurrent,
  );
});
