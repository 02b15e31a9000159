import { type NodeRedis, nodeRedisSender } from "../../redis/node-redis";
import type { RedisScriptClient } from "./redis-store";
import { BEGIN } from "./scripts";

/** The store's `callBuffer` on a node-redis connection, and whether two commands sent back to back run in order. */
export interface NodeRedisScriptClient {
  client: RedisScriptClient;
  inOrder: boolean;
}

// Only a begin's reply can hold a record, whose body stays bytes: `SET … GET`, or the BEGIN script before Redis 7.0.
// The other replies are integers and "OK".
function mayHoldRecord(command: string, args: ReadonlyArray<unknown>): boolean {
  if (command === "set") return args.includes("GET");
  return args[0] === BEGIN.sha || args[0] === BEGIN.source;
}

/**
 * ioredis's `callBuffer` on a node-redis client, pool or cluster. The store sends `set` with the key first, and
 * `evalsha` / `eval` with the script and the key count before the first key: a cluster routes each by that key.
 */
export function nodeRedisScriptClient(client: NodeRedis): NodeRedisScriptClient {
  const sender = nodeRedisSender(client);
  return {
    client: {
      callBuffer: (command, ...args) =>
        sender.send([command, ...args], String(command === "set" ? args[0] : args[2]), mayHoldRecord(command, args)),
    },
    inOrder: sender.inOrder,
  };
}
