// The Redis stores speak to ioredis through its own methods. node-redis (the `redis` package, 4, 5 and 6) has none of
// them: every command goes through `sendCommand`, whose signature differs between a client (or a pool) and a cluster,
// which must be told the key that routes the command. This file turns any of the three into one way to send.

/** A bulk string argument of node-redis: it refuses numbers. */
type Argument = string | Buffer;

/** The options of `sendCommand` the stores pass: how replies map to JavaScript types. */
export interface NodeRedisCommandOptions {
  /** node-redis 5 and 6. */
  typeMapping?: { [respType: number]: unknown };
  /** node-redis 4. */
  returnBuffers?: boolean;
}

/** A node-redis client (`createClient()`, 4, 5 or 6) or pool (`createClientPool()`, 5 or 6). */
export interface NodeRedisClient {
  sendCommand(args: ReadonlyArray<Argument>, options?: NodeRedisCommandOptions): Promise<unknown>;
}

/** A node-redis cluster (`createCluster()`), version 4, 5 or 6. */
export interface NodeRedisCluster {
  sendCommand(
    firstKey: Argument | undefined,
    isReadonly: boolean | undefined,
    args: ReadonlyArray<Argument>,
    options?: NodeRedisCommandOptions,
  ): Promise<unknown>;
  getSlotMaster(slot: number): unknown;
}

/** A node-redis 4 client in legacy mode (`legacyMode: true`): callbacks outside, the promise API under `v4`. */
export interface NodeRedisLegacyClient {
  v4: NodeRedisClient;
}

/** Any node-redis connection the stores accept. */
export type NodeRedis = NodeRedisClient | NodeRedisCluster | NodeRedisLegacyClient;

/**
 * One command on a node-redis connection: its name first, then its arguments; `firstKey` routes it on a cluster.
 * With `bytes`, bulk strings in the reply come back as Buffers. Ask only where a reply may hold bytes that are not
 * text: node-redis spends ~1.5 µs more on a command with a type mapping (bench/idempotency, node-redis).
 */
export interface NodeRedisSender {
  send(args: ReadonlyArray<Argument | number>, firstKey: Argument, bytes: boolean): Promise<unknown>;
  /**
   * Whether two commands sent back to back run in that order. A pool hands each command to whichever of its
   * connections is free, so it does not promise that; a client and a cluster (for keys of one slot) do.
   */
  readonly inOrder: boolean;
}

// RESP's "$" type: bulk strings, which node-redis returns as strings unless told otherwise. The stores keep bodies
// as bytes. (node-redis exports it as RESP_TYPES.BLOB_STRING; the stores do not import the client.) node-redis 4 is
// told with `returnBuffers` instead; each version ignores the other's option.
const BLOB_STRING = 36;
const AS_BYTES: NodeRedisCommandOptions = { typeMapping: { [BLOB_STRING]: Buffer }, returnBuffers: true };

const isCluster = (client: NodeRedis): client is NodeRedisCluster =>
  typeof (client as Partial<NodeRedisCluster>).getSlotMaster === "function";

// A legacy-mode client also has v3's lower-case commands (`evalsha`…) taking callbacks, so it is recognised by its
// `v4` first: taken for ioredis, it would never answer.
// Outside legacy mode, node-redis 4's `v4` getter throws.
const isLegacy = (client: unknown): client is NodeRedisLegacyClient => {
  let v4: unknown;
  try {
    v4 = (client as { v4?: unknown }).v4;
  } catch {
    return false;
  }
  return typeof v4 === "object" && v4 !== null && typeof (v4 as { sendCommand?: unknown }).sendCommand === "function";
};

// A pool counts its connections; a client and a cluster have no such property.
const isPool = (client: NodeRedis): boolean => "totalClients" in client;

/**
 * True for a node-redis client, pool or cluster: it sends through `sendCommand` and has none of ioredis's methods
 * (ioredis has a `sendCommand` too, taking a command object).
 */
export function isNodeRedis(client: unknown): client is NodeRedis {
  if (typeof client !== "object" || client === null) return false;
  if (isLegacy(client)) return true;
  const methods = client as Record<string, unknown>;
  return (
    typeof methods.sendCommand === "function" &&
    typeof methods.callBuffer !== "function" &&
    typeof methods.evalsha !== "function"
  );
}

const text = (arg: Argument | number): Argument => (typeof arg === "number" ? String(arg) : arg);

/** Sends commands on a node-redis client, pool or cluster. */
export function nodeRedisSender(connection: NodeRedis): NodeRedisSender {
  const client = isLegacy(connection) ? connection.v4 : connection;
  if (isCluster(client)) {
    return {
      send: (args, firstKey, bytes) =>
        client.sendCommand(firstKey, false, args.map(text), bytes ? AS_BYTES : undefined),
      inOrder: true,
    };
  }
  return {
    send: (args, _firstKey, bytes) => client.sendCommand(args.map(text), bytes ? AS_BYTES : undefined),
    inOrder: !isPool(client),
  };
}
