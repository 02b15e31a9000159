import { createHash } from "node:crypto";

/** A Lua script and its SHA-1, for EVALSHA with an EVAL fallback. */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash("sha1").update(source).digest("hex") };
}

/**
 * begin, when the server has no `SET … NX GET` (before Redis 7.0): KEYS[1] = record key;
 * ARGV[1] = in-progress value, ARGV[2] = lease (ms). Returns 0 when the key was free and is now leased, else { value, PTTL }.
 * Redis expires the key itself (PX), so an expired lease or response is simply absent.
 */
export const BEGIN = script(`local v = redis.call('GET', KEYS[1])
if v then return {v, redis.call('PTTL', KEYS[1])} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 0`);

/**
 * complete, small values: KEYS[1] = record key; ARGV[1] = the caller's in-progress value,
 * ARGV[2] = the completed value, ARGV[3] = TTL (ms). Writes only under the caller's live lease
 * (fencing). ARGV[2] goes to SET as it came, without Lua string concatenation.
 */
export const COMPLETE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`);

/**
 * complete, large values: KEYS[1] = record key, KEYS[2] = the staging key the client has just
 * written the completed value to (plain SET: a large argument is costly to pass into Lua at all);
 * ARGV[1] = the caller's in-progress value, ARGV[2] = TTL (ms). Under the caller's live lease the
 * staged value replaces the record in one RENAME, so a reader sees the lease or the whole
 * response, never a part; otherwise the staged value is deleted. A staged value gone missing (it
 * cannot, short of a failed SET) makes RENAME fail the script: an error, not a lost lease.
 */
export const COMPLETE_STAGED = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('RENAME', KEYS[2], KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
redis.call('DEL', KEYS[2])
return 0`);

/**
 * release: KEYS[1] = record key; ARGV[1] = the caller's in-progress value. Deletes only the caller's own lease; one
 * past its PX is gone already, so it is refused as complete refuses it.
 */
export const RELEASE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`);
