// Redis Cluster specification, "Hash tags": when a key has a "{" and, after it, a "}" with at
// least one character between them, only those characters are hashed; otherwise the whole key is.
function hasHashTag(key: string): boolean {
  const open = key.indexOf("{");
  return open >= 0 && key.indexOf("}", open + 1) > open + 1;
}

/**
 * A key in the same cluster slot as `recordKey`, for staging a completed value before the COMPLETE
 * script renames it over the record (a script may only touch keys of one slot). Undefined when no
 * such name exists: a record key without a hash tag that is empty or contains a "}" cannot be
 * wrapped in one.
 */
export function stagingKey(recordKey: string, nonce: string): string | undefined {
  // Appending keeps a key's first hash tag; wrapping a key without one makes the whole key the tag.
  if (hasHashTag(recordKey)) return `${recordKey}:staged:${nonce}`;
  if (recordKey.length === 0 || recordKey.includes("}")) return undefined;
  return `{${recordKey}}:staged:${nonce}`;
}
