/**
 * Parsing Structured Fields, RFC 9651 §4.2. Each step fails the whole field (RFC 9651 §4.2:
 * "fail parsing"), which here is a thrown sentinel caught at the three public entry points,
 * so `parseItem`/`parseList`/`parseDictionary` never throw.
 */
import {
  type BareItem,
  type SfInnerList,
  type SfItem,
  type SfMember,
  type SfParameters,
  Token,
} from "./structured-fields-model";

const FAIL: unique symbol = Symbol("sf-fail");

function fail(): never {
  throw FAIL;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isLcAlpha = (c: number) => c >= 0x61 && c <= 0x7a;
// RFC 9110 §5.6.2 tchar
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const isTchar = (s: string, i: number) => i < s.length && TCHAR.test(s[i] as string);
// RFC 9651 §4.2.7: the base64 alphabet plus "="
const isBase64 = (c: number) => isAlpha(c) || isDigit(c) || c === 0x2b || c === 0x2f || c === 0x3d;

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  code(): number {
    return this.s.charCodeAt(this.i);
  }

  skipSP(): void {
    while (this.s.charCodeAt(this.i) === 0x20) this.i++;
  }

  skipOWS(): void {
    let c = this.s.charCodeAt(this.i);
    while (c === 0x20 || c === 0x09) c = this.s.charCodeAt(++this.i);
  }

  done(): boolean {
    return this.i >= this.s.length;
  }

  // §4.2.1 Parsing a List
  list(): SfMember[] {
    const members: SfMember[] = [];
    while (!this.done()) {
      members.push(this.itemOrInnerList());
      this.skipOWS();
      if (this.done()) return members;
      if (this.code() !== 0x2c) fail();
      this.i++;
      this.skipOWS();
      if (this.done()) fail(); // trailing comma
    }
    return members;
  }

  // §4.2.1.1
  itemOrInnerList(): SfMember {
    return this.code() === 0x28 ? this.innerList() : this.item();
  }

  // §4.2.1.2 Parsing an Inner List
  innerList(): SfInnerList {
    this.i++; // "("
    const items: SfItem[] = [];
    while (!this.done()) {
      this.skipSP();
      if (this.code() === 0x29) {
        this.i++;
        return { items, params: this.parameters() };
      }
      items.push(this.item());
      const c = this.code();
      if (c !== 0x20 && c !== 0x29) fail();
    }
    return fail(); // no closing ")"
  }

  // §4.2.2 Parsing a Dictionary
  dictionary(): Map<string, SfMember> {
    const dict = new Map<string, SfMember>();
    while (!this.done()) {
      const key = this.key();
      let member: SfMember;
      if (this.code() === 0x3d) {
        this.i++;
        member = this.itemOrInnerList();
      } else {
        member = { value: true, params: this.parameters() };
      }
      // Duplicate keys: the last value wins, in the first key's position (an ordered map overwrite).
      dict.set(key, member);
      this.skipOWS();
      if (this.done()) return dict;
      if (this.code() !== 0x2c) fail();
      this.i++;
      this.skipOWS();
      if (this.done()) fail();
    }
    return dict;
  }

  // §4.2.3 Parsing an Item
  item(): SfItem {
    const value = this.bareItem();
    return { value, params: this.parameters() };
  }

  // §4.2.3.1 Parsing a Bare Item
  bareItem(): BareItem {
    const c = this.code();
    if (c === 0x2d || isDigit(c)) return this.number();
    if (c === 0x22) return this.string();
    if (c === 0x2a || isAlpha(c)) return this.token();
    if (c === 0x3a) return this.byteSequence();
    if (c === 0x3f) return this.boolean();
    // "@" Date and "%" Display String (RFC 9651 §3.3.7-8) have no BareItem form here: fail the field.
    return fail();
  }

  // §4.2.3.2 Parsing Parameters
  parameters(): SfParameters {
    const params: SfParameters = new Map();
    while (this.code() === 0x3b) {
      this.i++;
      this.skipSP();
      const key = this.key();
      let value: BareItem = true;
      if (this.code() === 0x3d) {
        this.i++;
        value = this.bareItem();
      }
      params.set(key, value);
    }
    return params;
  }

  // §4.2.3.3 Parsing a Key: key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )
  key(): string {
    const start = this.i;
    let c = this.code();
    if (!isLcAlpha(c) && c !== 0x2a) fail();
    do c = this.s.charCodeAt(++this.i);
    while (isLcAlpha(c) || isDigit(c) || c === 0x5f || c === 0x2d || c === 0x2e || c === 0x2a);
    return this.s.slice(start, this.i);
  }

  // §4.2.4 Parsing an Integer or Decimal
  number(): number {
    let sign = 1;
    if (this.code() === 0x2d) {
      sign = -1;
      this.i++;
    }
    if (!isDigit(this.code())) fail();
    const start = this.i;
    let dot = -1;
    for (;;) {
      const c = this.code();
      if (isDigit(c)) this.i++;
      else if (c === 0x2e && dot === -1) {
        if (this.i - start > 12) fail();
        dot = this.i++;
      } else break;
      const length = this.i - start;
      if (dot === -1 ? length > 15 : length > 16) fail();
    }
    if (dot !== -1) {
      const fraction = this.i - dot - 1;
      if (fraction === 0 || fraction > 3) fail();
    }
    const n = Number(this.s.slice(start, this.i));
    return n === 0 ? 0 : sign * n; // no -0: the data model has one zero
  }

  // §4.2.5 Parsing a String
  string(): string {
    this.i++; // DQUOTE
    let out = "";
    let from = this.i;
    while (!this.done()) {
      const c = this.code();
      if (c === 0x5c) {
        out += this.s.slice(from, this.i);
        const next = this.s.charCodeAt(++this.i);
        if (next !== 0x22 && next !== 0x5c) fail();
        out += this.s[this.i];
        from = ++this.i;
      } else if (c === 0x22) {
        out += this.s.slice(from, this.i++);
        return out;
      } else if (c < 0x20 || c > 0x7e) {
        fail();
      } else {
        this.i++;
      }
    }
    return fail(); // no closing DQUOTE
  }

  // §4.2.6 Parsing a Token: sf-token = ( ALPHA / "*" ) *( tchar / ":" / "/" )
  token(): Token {
    const start = this.i++;
    for (;;) {
      const c = this.code();
      if (c === 0x3a || c === 0x2f || isTchar(this.s, this.i)) this.i++;
      else break;
    }
    return new Token(this.s.slice(start, this.i));
  }

  // §4.2.7 Parsing a Byte Sequence
  byteSequence(): Uint8Array {
    const start = ++this.i;
    while (!this.done() && this.code() !== 0x3a) {
      if (!isBase64(this.code())) fail();
      this.i++;
    }
    if (this.done()) fail();
    const b64 = this.s.slice(start, this.i++);
    let binary: string;
    try {
      // forgiving-base64 decode: "=" only as trailing padding; padding may be omitted (§4.2.7 allows either).
      binary = atob(b64);
    } catch {
      return fail();
    }
    const bytes = new Uint8Array(binary.length);
    for (let k = 0; k < binary.length; k++) bytes[k] = binary.charCodeAt(k);
    return bytes;
  }

  // §4.2.8 Parsing a Boolean
  boolean(): boolean {
    const c = this.s.charCodeAt(this.i + 1);
    if (c === 0x31 || c === 0x30) {
      this.i += 2;
      return c === 0x31;
    }
    return fail();
  }
}

// §4.2 steps 1-8: strip leading/trailing SP, parse, and fail on anything left over.
function top<T>(input: string, parse: (p: Parser) => T): T | undefined {
  if (typeof input !== "string") return undefined;
  const p = new Parser(input);
  p.skipSP();
  try {
    const value = parse(p);
    p.skipSP();
    return p.done() ? value : undefined;
  } catch (error) {
    if (error === FAIL) return undefined;
    throw error;
  }
}

/**
 * Parses an Item field value (RFC 9651 §4.2 with type "item").
 * @returns `undefined` when the value does not parse: RFC 9651 §4.2 fails the whole field.
 * @example parseItem('"abc"')?.value // "abc"  (an Idempotency-Key)
 */
export function parseItem(input: string): SfItem | undefined {
  return top(input, (p) => p.item());
}

/**
 * Parses a List field value (RFC 9651 §4.2 with type "list"); an empty value is an empty list.
 * Combine repeated field lines with ", " first (RFC 9651 §4.2).
 */
export function parseList(input: string): SfMember[] | undefined {
  return top(input, (p) => p.list());
}

/** Parses a Dictionary field value (RFC 9651 §4.2 with type "dictionary"); an empty value is an empty map. */
export function parseDictionary(input: string): Map<string, SfMember> | undefined {
  return top(input, (p) => p.dictionary());
}
