import { describe } from "vitest";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { shopSuite } from "./shop-suite";

describe("the example shop on memory storage", () => {
  shopSuite(async () => ({ storage: createMemoryStorage() }));
});
