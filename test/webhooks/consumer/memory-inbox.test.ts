import { createMemoryInbox } from "../../../src/webhooks/memory/inbox/index";
import { inboxContract } from "./inbox-contract";

inboxContract("memory", async () => ({ inbox: createMemoryInbox() }));
