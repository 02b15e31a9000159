// Redis Cluster specification, "Hash tags": when a key has a "{" and, after it, a "}" with at
// least one character between them, only those characters are hashed; otherwise the whole key is.
function hashedPart(key: string): string {
  const open = key.indexOf("{");
  if (open === -1) return key;
  const close = key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/**
 * A key in the same cluster slot as `recordKey`, for staging a completed value before the COMPLETE
 * script renames it over the record (a script may only touch keys of one slot). Both keys are as
 * the store sends them: the client writes `keyPrefix` (ioredis's option of that name) before each,
 * so the slots compared are those of the prefixed keys. Undefined when no such name exists (a record
 * key without a hash tag that is empty or contains a "}" cannot be wrapped in one): the value then
 * goes through the script.
 */
export function stagingKey(recordKey: string, nonce: string, keyPrefix = ""): string | undefined {
  const full = keyPrefix + recordKey;
  const tag = hashedPart(full);
  // Appending keeps a key's first hash tag; wrapping a key without one makes the whole key the tag (the prefix
  // included: the client puts it before the braces too).
  let staged: string;
  if (tag !== full) staged = `${recordKey}:staged:${nonce}`;
  else if (full.length === 0 || full.includes("}")) return undefined;
  else staged = `{${full}}:staged:${nonce}`;
  // A prefix with a stray "{" could open a hash tag of its own before the braces.
  return hashedPart(keyPrefix + staged) === tag ? staged : undefined;
}
