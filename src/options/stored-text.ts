import type { StringFault } from "../http/json-limits";

/**
 * Why a store refuses text with a fault, for the TypeError a store throws (`… holds <reason>.`): every store refuses
 * what PostgreSQL could not keep as given, so a program tested on memory does not fail on PostgreSQL.
 */
export const STORED_TEXT_REFUSALS: Readonly<Record<StringFault, string>> = {
  nul_character: "U+0000, which PostgreSQL's text and jsonb cannot hold",
  // RFC 3629 §3: UTF-8 has no form for a surrogate; PostgreSQL refuses one in jsonb, it and Redis read one as U+FFFD.
  lone_surrogate: "a lone surrogate, which UTF-8 cannot encode (String.prototype.toWellFormed replaces it with U+FFFD)",
};
