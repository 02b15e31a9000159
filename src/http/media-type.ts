/**
 * Media types, RFC 9110 §8.3.1:
 *   media-type = type "/" subtype parameters
 *   parameters = *( OWS ";" OWS [ parameter ] )
 *   parameter  = parameter-name "=" parameter-value
 *   parameter-value = ( token / quoted-string )
 */
import { trimOws, trimOwsEnd } from "./ows";
import { formatTokenOrQuotedString, readQuotedString } from "./quoted-string";
import { isToken } from "./token";

export { isToken } from "./token";

/** A parsed media type; `type`, `subtype` and parameter names are lower-cased (case-insensitive, §8.3.1). */
export interface MediaType {
  readonly type: string;
  readonly subtype: string;
  /** The `+suffix` of a structured syntax (RFC 6838 §4.2.8), e.g. `json` for `application/problem+json`. */
  readonly suffix: string | undefined;
  readonly parameters: Readonly<Record<string, string>>;
}

/** Parses a `Content-Type`-style media type; `undefined` when it does not follow the grammar. */
export function parseMediaType(input: string): MediaType | undefined {
  const semi = input.indexOf(";");
  // Only OWS around it (§5.6.3): a media type followed by NBSP, VT or U+FEFF is malformed (a 415), not the type.
  const essence = trimOws(semi === -1 ? input : input.slice(0, semi));
  const slash = essence.indexOf("/");
  if (slash <= 0) return undefined;
  const type = essence.slice(0, slash).toLowerCase();
  const subtype = essence.slice(slash + 1).toLowerCase();
  if (!isToken(type) || !isToken(subtype)) return undefined;
  const plus = subtype.lastIndexOf("+");
  const parameters: Record<string, string> = {};
  let i = semi === -1 ? input.length : semi;
  while (i < input.length) {
    // at a ";"
    i++;
    while (i < input.length && (input[i] === " " || input[i] === "\t")) i++;
    if (i >= input.length) break;
    if (input[i] === ";") continue;
    const eq = input.indexOf("=", i);
    if (eq === -1) return undefined;
    const name = input.slice(i, eq).toLowerCase();
    if (!isToken(name)) return undefined;
    let value: string;
    let end: number;
    if (input[eq + 1] === '"') {
      const quoted = readQuotedString(input, eq + 1);
      if (!quoted) return undefined;
      value = quoted.value;
      end = quoted.end;
    } else {
      const next = input.indexOf(";", eq + 1);
      end = next === -1 ? input.length : next;
      value = trimOwsEnd(input.slice(eq + 1, end));
      if (!isToken(value)) return undefined;
    }
    // §8.3.1 leaves duplicate parameters undefined; the first one wins.
    if (!Object.hasOwn(parameters, name)) {
      // defineProperty, not assignment: a parameter named "__proto__" must stay a plain member.
      Object.defineProperty(parameters, name, { value, enumerable: true, writable: true, configurable: true });
    }
    while (end < input.length && (input[end] === " " || input[end] === "\t")) end++;
    if (end < input.length && input[end] !== ";") return undefined;
    i = end;
  }
  return { type, subtype, suffix: plus === -1 ? undefined : subtype.slice(plus + 1), parameters };
}

/** Whether the media type is JSON: `application/json` or any `+json` structured syntax suffix (RFC 6839 §3.1). */
export function isJsonMediaType(media: MediaType | undefined): boolean {
  if (!media) return false;
  return (media.type === "application" && media.subtype === "json") || media.suffix === "json";
}

/** The parts {@link formatMediaType} needs; a {@link MediaType} from {@link parseMediaType} fits. */
export interface MediaTypeInit {
  readonly type: string;
  readonly subtype: string;
  readonly parameters?: Readonly<Record<string, string>> | undefined;
}

/**
 * Formats a media type (RFC 9110 §8.3.1), quoting parameter values that are not tokens (§5.6.6).
 * Type, subtype and parameter names are lower-cased, as {@link parseMediaType} returns them.
 * @throws TypeError when the type, subtype or a parameter name is not a token, or a value cannot be quoted.
 * @example formatMediaType({ type: "text", subtype: "plain", parameters: { charset: "utf-8" } }) // "text/plain; charset=utf-8"
 */
export function formatMediaType(media: MediaTypeInit): string {
  if (!isToken(media.type) || !isToken(media.subtype)) {
    throw new TypeError(`Not a media type: ${JSON.stringify(`${media.type}/${media.subtype}`)}`);
  }
  let out = `${media.type}/${media.subtype}`.toLowerCase();
  for (const [name, value] of Object.entries(media.parameters ?? {})) {
    if (!isToken(name)) throw new TypeError(`Not a parameter name: ${JSON.stringify(name)}`);
    out += `; ${name.toLowerCase()}=${formatTokenOrQuotedString(value)}`;
  }
  return out;
}
