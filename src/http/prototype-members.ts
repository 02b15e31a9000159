import { pointerToken } from "./json-limits";

/**
 * Members of a parsed JSON value that set a prototype once a handler copies them: `JSON.parse` keeps `__proto__` as
 * an ordinary own member, and `Object.assign(target, body)` (or a deep merge, or a spread into a class instance's
 * fields) then assigns it, which sets `target`'s prototype; `constructor.prototype` does the same to a merge that
 * follows it. Refused as Fastify's `onProtoPoisoning` and `onConstructorPoisoning` do by default (secure-json-parse).
 */

/** Why a member was refused: an own `__proto__`, or a `constructor` member holding a `prototype` member. */
export type PrototypeFault = "proto_key" | "constructor_prototype";

/** The first refused member of a value, and where (an RFC 6901 JSON Pointer to the offending member). */
export interface PrototypeFaultAt {
  readonly pointer: string;
  readonly fault: PrototypeFault;
}

// A member name as JSON text may write it, each character as itself or as a \u escape (RFC 8259 §7; hex digits in
// either case). No other escape writes a letter or "_", so without a \u in the text the name appears as written.
function escapable(name: string): string {
  return [...name]
    .map((char) => {
      const hex = (char.codePointAt(0) as number).toString(16).padStart(4, "0");
      return `(?:${char}|\\\\u${hex.replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`)})`;
    })
    .join("");
}

// One search of the text for both names, where String#includes would take one pass per name.
const PLAIN = /"(?:__proto__|constructor)"/;
const ESCAPED = new RegExp(`"(?:${escapable("__proto__")}|${escapable("constructor")})"`);

/**
 * Whether JSON text can hold a refused member: false means no walk is needed. The names are searched as strings, so
 * a value that spells one, or a `constructor` member without `prototype`, answers true too (the walk then finds
 * nothing); a refused member is never missed.
 * @param unicodeEscape the text holds a `\u` escape (as `scanJsonText` reports): only then is the escape-aware
 *   search needed.
 */
export function mayHoldPrototypeMember(text: string, unicodeEscape: boolean): boolean {
  return (unicodeEscape ? ESCAPED : PLAIN).test(text);
}

/**
 * An own `__proto__` member, or `constructor` member whose value is an object with a `prototype` member, in
 * a parsed JSON value, walking with an explicit stack (never recursing, whatever the depth).
 * @example findPrototypeMember(JSON.parse('{"a":{"__proto__":{}}}')) // { pointer: "/a/__proto__", fault: "proto_key" }
 */
export function findPrototypeMember(value: unknown): PrototypeFaultAt | undefined {
  const stack: Array<{ value: unknown; pointer: string }> = [{ value, pointer: "" }];
  while (stack.length > 0) {
    const { value: current, pointer } = stack.pop() as { value: unknown; pointer: string };
    if (current === null || typeof current !== "object") continue;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], pointer: `${pointer}/${i}` });
      continue;
    }
    if (Object.hasOwn(current, "__proto__")) return { pointer: `${pointer}/__proto__`, fault: "proto_key" };
    const record = current as Record<string, unknown>;
    const ctor = Object.hasOwn(record, "constructor") ? record["constructor"] : undefined;
    if (ctor !== null && typeof ctor === "object" && Object.hasOwn(ctor, "prototype")) {
      return { pointer: `${pointer}/constructor/prototype`, fault: "constructor_prototype" };
    }
    const keys = Object.keys(record);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      stack.push({ value: record[key], pointer: `${pointer}/${pointerToken(key)}` });
    }
  }
  return undefined;
}

/**
 * The first refused member of `value`, parsed from JSON `text`: the search of the text, then the walk only when it
 * finds a name. The one check the JSON body readers and the signed-payload reader make.
 * @param text the JSON text `value` was parsed from.
 * @param value the parsed value.
 * @param unicodeEscape the text may hold a `\u` escape (true when unknown): only then is the escape-aware search made.
 * @example prototypeMemberOf('{"__proto__":{}}', JSON.parse('{"__proto__":{}}'), false) // { pointer: "/__proto__", … }
 */
export function prototypeMemberOf(text: string, value: unknown, unicodeEscape: boolean): PrototypeFaultAt | undefined {
  return mayHoldPrototypeMember(text, unicodeEscape) ? findPrototypeMember(value) : undefined;
}
