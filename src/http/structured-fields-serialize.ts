/**
 * Serializing Structured Fields, RFC 9651 §4.1. A value the data model cannot carry (§4.1: "fail
 * serialization") is programmer error here, so it throws a TypeError.
 */
import {
  type BareItem,
  isInnerList,
  type SfInnerList,
  type SfItem,
  type SfMember,
  type SfParameters,
  Token,
} from "./structured-fields-model";

const KEY = /^[a-z*][a-z0-9_\-.*]*$/;
const TOKEN = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*$/;
const PRINTABLE = /^[\x20-\x7e]*$/;

function invalid(what: string, value: unknown): never {
  throw new TypeError(`Structured field: cannot serialize ${what} ${JSON.stringify(String(value))}`);
}

// §4.1.1.3 Serializing a Key
function key(value: string): string {
  if (typeof value !== "string" || !KEY.test(value)) invalid("key", value);
  return value;
}

// §4.1.4 Serializing an Integer: at most 15 digits
function integer(value: number): string {
  if (Math.abs(value) > 999_999_999_999_999) invalid("integer out of range", value);
  return String(value === 0 ? 0 : value);
}

// §4.1.5 Serializing a Decimal: round to 3 fractional digits (ties to even), at most 12 integer digits
function decimal(value: number): string {
  if (!Number.isFinite(value)) invalid("number", value);
  const scaled = Math.abs(value) * 1000;
  let rounded = Math.round(scaled);
  if (rounded - scaled === 0.5 && rounded % 2 === 1) rounded--; // Math.round rounds ties up
  const whole = Math.floor(rounded / 1000);
  if (whole > 999_999_999_999) invalid("decimal out of range", value);
  const fraction = String(rounded % 1000)
    .padStart(3, "0")
    .replace(/0{1,2}$/, "");
  return `${value < 0 && rounded !== 0 ? "-" : ""}${whole}.${fraction}`;
}

// §4.1.6 Serializing a String: printable ASCII, escaping only DQUOTE and "\"
function string(value: string): string {
  if (!PRINTABLE.test(value)) invalid("string with characters outside %x20-7E", value);
  return `"${value.replace(/[\\"]/g, "\\$&")}"`;
}

// §4.1.8 Serializing a Byte Sequence: ":" base64 ":" with padding
function byteSequence(value: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < value.length; i += 0x8000) {
    binary += String.fromCharCode(...value.subarray(i, i + 0x8000));
  }
  return `:${btoa(binary)}:`;
}

// §4.1.3.1 Serializing a Bare Item
function bareItem(value: BareItem): string {
  switch (typeof value) {
    case "number":
      return Number.isInteger(value) ? integer(value) : decimal(value);
    case "string":
      return string(value);
    case "boolean":
      return value ? "?1" : "?0"; // §4.1.9
    default:
      if (value instanceof Token) {
        // §4.1.7 Serializing a Token
        if (!TOKEN.test(value.value)) invalid("token", value.value);
        return value.value;
      }
      if (value instanceof Uint8Array) return byteSequence(value);
      return invalid("bare item", value);
  }
}

// §4.1.1.2 Serializing Parameters: a true value is sent as the key alone
function parameters(params: SfParameters): string {
  let out = "";
  for (const [name, value] of params) {
    out += `;${key(name)}`;
    if (value !== true) out += `=${bareItem(value)}`;
  }
  return out;
}

function itemText(item: SfItem): string {
  if (item === null || typeof item !== "object" || !(item.params instanceof Map)) invalid("item", item);
  return bareItem(item.value) + parameters(item.params);
}

// §4.1.1.1 Serializing an Inner List
function innerList(list: SfInnerList): string {
  if (!(list.params instanceof Map)) invalid("inner list", list);
  return `(${list.items.map(itemText).join(" ")})${parameters(list.params)}`;
}

function member(value: SfMember): string {
  return isInnerList(value) ? innerList(value) : itemText(value);
}

/**
 * Serializes an Item (RFC 9651 §4.1.3).
 * @throws TypeError when a value cannot be serialized (non-ASCII string, integer over 15 digits, bad key or token).
 * @example serializeItem(item("name", { q: 100, w: 60 })) // '"name";q=100;w=60'
 */
export function serializeItem(item: SfItem): string {
  return itemText(item);
}

/**
 * Serializes a List (RFC 9651 §4.1.1). An empty list gives "": RFC 9651 §4.1 says to omit the field then.
 * @throws TypeError when a member cannot be serialized.
 */
export function serializeList(list: readonly SfMember[]): string {
  return list.map(member).join(", ");
}

/**
 * Serializes a Dictionary (RFC 9651 §4.1.2); a member whose value is Boolean true is sent as its key alone.
 * An empty dictionary gives "": RFC 9651 §4.1 says to omit the field then.
 * @throws TypeError when a key or member cannot be serialized.
 */
export function serializeDictionary(dict: ReadonlyMap<string, SfMember>): string {
  const parts: string[] = [];
  for (const [name, value] of dict) {
    if (!isInnerList(value) && value.value === true) parts.push(key(name) + parameters(value.params));
    else parts.push(`${key(name)}=${member(value)}`);
  }
  return parts.join(", ");
}
