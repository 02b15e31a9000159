/**
 * The data model of Structured Field Values, RFC 9651 §3 (obsoletes RFC 8941).
 */

/**
 * An sf-token (RFC 9651 §3.3.4): a short textual word, kept apart from a String.
 * @example new Token("gzip")
 */
export class Token {
  constructor(readonly value: string) {}
}

/**
 * A bare item (RFC 9651 §3.3): a number (Integer when `Number.isInteger`, else Decimal),
 * a String, a Boolean, a {@link Token}, or a Byte Sequence as a `Uint8Array`.
 */
export type BareItem = number | string | boolean | Token | Uint8Array;

/** Parameters (RFC 9651 §3.1.2): an ordered map of keys to bare items. */
export type SfParameters = Map<string, BareItem>;

/** An Item (RFC 9651 §3.3): a bare item with parameters. */
export interface SfItem {
  value: BareItem;
  params: SfParameters;
}

/** An Inner List (RFC 9651 §3.1.1): a parenthesised list of items, with parameters of its own. */
export interface SfInnerList {
  items: SfItem[];
  params: SfParameters;
}

/** A member of a List or a Dictionary value: an Item or an Inner List. */
export type SfMember = SfItem | SfInnerList;

/**
 * Builds an {@link SfItem}.
 * @example serializeItem(item("name", { q: 100, w: 60 })) // '"name";q=100;w=60'
 */
export function item(value: BareItem, params?: Record<string, BareItem>): SfItem {
  return { value, params: new Map(params === undefined ? [] : Object.entries(params)) };
}

/** Whether a List or Dictionary member is an Inner List. */
export function isInnerList(member: SfMember): member is SfInnerList {
  return Array.isArray((member as SfInnerList).items);
}
