import { pointerToken } from "./json-limits";

/**
 * Member names given twice in one JSON object. RFC 8259 §4 says the names of an object SHOULD be unique and leaves
 * the outcome to the parser; I-JSON (RFC 7493 §2.3) says they MUST NOT repeat. `JSON.parse` keeps the last value, other
 * parsers the first, so a body read one way by a proxy or a signature check and another way here is refused instead.
 */

/**
 * How many members the objects of a parsed JSON value have in all, walking with an explicit stack. Compared with the
 * name separators of its text (`JsonTextScan.members`): fewer members than separators means a name was given twice.
 */
export function countMembers(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  let members = 0;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const current = stack.pop() as object;
    // for…in rather than Object.keys: no array per object.
    if (Array.isArray(current)) {
      for (const child of current) if (child !== null && typeof child === "object") stack.push(child);
    } else {
      for (const key in current) {
        members++;
        const child = (current as Record<string, unknown>)[key];
        if (child !== null && typeof child === "object") stack.push(child);
      }
    }
  }
  return members;
}

interface Frame {
  readonly pointer: string;
  /** The names read so far in an object; `undefined` in an array. */
  readonly names: Set<string> | undefined;
  /** The last name read in an object, or the index of the current item in an array. */
  last: string;
  index: number;
}

// RFC 8259 §2: ws = *( %x20 / %x09 / %x0A / %x0D ).
function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/**
 * The RFC 6901 JSON Pointer of the first member whose object already has its name (names compared decoded, so
 * `"a"` and `"\u0061"` are one name), or `undefined`. The text must be JSON (`JSON.parse` accepted it).
 * @example findDuplicateMember('{"a":{"b":1,"b":2}}') // "/a/b"
 */
export function findDuplicateMember(text: string): string | undefined {
  const frames: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const frame = frames[frames.length - 1];
    if (c === 0x22 /* " */) {
      let end = i + 1;
      while (end < text.length && text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c ? 2 : 1;
      let next = end + 1;
      while (isWhitespace(text.charCodeAt(next))) next++;
      // RFC 8259 §4: in an object, a string followed by ":" is a name.
      if (frame?.names !== undefined && text.charCodeAt(next) === 0x3a /* : */) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (frame.names.has(name)) return `${frame.pointer}/${pointerToken(name)}`;
        frame.names.add(name);
        frame.last = name;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const at = frame === undefined ? "" : frame.names === undefined ? String(frame.index) : pointerToken(frame.last);
      const pointer = frame === undefined ? "" : `${frame.pointer}/${at}`;
      frames.push({ pointer, names: c === 0x7b ? new Set() : undefined, last: "", index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) frames.pop();
    else if (c === 0x2c /* , */ && frame?.names === undefined && frame !== undefined) frame.index++;
  }
  return undefined;
}
