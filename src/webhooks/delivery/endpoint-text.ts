import { findStringFault } from "../../http/json-limits";
import { STORED_TEXT_REFUSALS } from "../../options/stored-text";
import type { EndpointPatch } from "./endpoint-store";

// Every field of an endpoint that holds text a caller wrote (the id and tenant are checked where they are taken).
const TEXT_FIELDS = ["url", "enabledEvents", "secrets", "description", "metadata", "headers"] as const;

/**
 * Refuses the text of an endpoint, or of a patch, that a PostgreSQL store could not keep as given, so that every
 * store refuses it alike: a program tested on the memory store must not fail, or read back other text, on PostgreSQL.
 * The endpoint API refuses the same text at its boundary (422 `invalid_string`); this catches a program's own writes.
 * @param owner the call, for the message (`EndpointStore.create`)
 * @throws TypeError naming the field and where in it, e.g. `metadata/plan`
 */
export function checkEndpointText(owner: string, fields: EndpointPatch): void {
  for (const field of TEXT_FIELDS) {
    const value = fields[field];
    if (value === undefined) continue;
    const found = findStringFault(value, false);
    if (found !== undefined) {
      throw new TypeError(`${owner}: ${field}${found.pointer} holds ${STORED_TEXT_REFUSALS[found.fault]}.`);
    }
  }
}
