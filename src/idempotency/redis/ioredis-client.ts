import type { RedisScriptClient } from "./redis-store";

// What the store must know of the ioredis client it is given: how to send a command so that the reply stays bytes,
// the prefix ioredis puts before every key (which decides a key's cluster slot), and how it returns integers.

/** The commands the store sends. */
type StoreCommand = "set" | "evalsha" | "eval";

type NamedBufferMethods = Record<`${StoreCommand}Buffer`, (...args: (string | Buffer | number)[]) => Promise<unknown>>;

interface ClientOptions {
  enableAutoPipelining?: unknown;
  keyPrefix?: unknown;
}

const optionsOf = (client: RedisScriptClient): ClientOptions | undefined =>
  (client as { options?: ClientOptions }).options;

// ioredis's `callBuffer` loses the command's name when the client pipelines on its own (`enableAutoPipelining`): the
// pipeline is handed the arguments without it, and Redis answers "ERR unknown command '<the key>'" (redis/ioredis#1923,
// open in 5.x and 6.0). Its named `…Buffer` methods (`setBuffer`, `evalshaBuffer`, `evalBuffer`) keep it.
function autoPipelines(client: RedisScriptClient): client is RedisScriptClient & NamedBufferMethods {
  const named = client as Partial<NamedBufferMethods>;
  return (
    optionsOf(client)?.enableAutoPipelining === true &&
    typeof named.setBuffer === "function" &&
    typeof named.evalshaBuffer === "function" &&
    typeof named.evalBuffer === "function"
  );
}

/**
 * The client the store sends its commands to: `client` itself, or, where its `callBuffer` fails, a `callBuffer` that
 * sends through the named methods. The store calls `callBuffer` directly on the usual client: a bound function in
 * that path cost ~0.25 µs per begin+complete (docs/benchmarks.md, bench/idempotency, "The Redis store on other
 * client options").
 */
export function bufferClient(client: RedisScriptClient): RedisScriptClient {
  if (!autoPipelines(client)) return client;
  return { callBuffer: (command, ...args) => client[`${command as StoreCommand}Buffer`](...args) };
}

/** The prefix ioredis writes before every key the store sends (its `keyPrefix` option), or "". */
export function keyPrefixOf(client: RedisScriptClient): string {
  const prefix = optionsOf(client)?.keyPrefix;
  return typeof prefix === "string" ? prefix : "";
}

/**
 * An integer reply as a number: ioredis returns integers as their decimal text when the client has `stringNumbers`
 * set. Any other reply comes back as it was.
 */
export function integerReply(reply: unknown): unknown {
  return typeof reply === "string" && /^-?\d{1,15}$/.test(reply) ? Number(reply) : reply;
}
