import { describe } from "vitest";
import { createMemoryStorage } from "../../examples/shop/storage/memory";
import { hostileInputSuite } from "./hostile-input-suite";

describe("hostile input against the example shop on memory storage", () => {
  hostileInputSuite(async () => ({ storage: createMemoryStorage() }));
});
