import type { CompositePattern } from "./composite";

/*
 * Whether two composite segments can both match one segment, decided exactly. Under the matching rule of
 * composite.ts each pattern reads a segment deterministically: a literal character by character; a
 * parameter takes its first character whatever it is, then ends where the literal after it first occurs
 * (a string-matching automaton for that literal tracks it) or, before a final literal, wherever the
 * segment ends with that literal. So each pattern is a small DFA, and the two overlap exactly when their
 * product accepts some string. A breadth-first search of the product finds the shortest such segment.
 * Characters that occur in neither pattern's literals all act alike, so one stands for them all.
 * Folded patterns (a case-insensitive table) read the lower-cased segment; the segment found is lower case, so it
 * is its own lower-cased form, and the answer stays exact.
 */

// A DFA state: the part being read and the progress within it (-1: a parameter has read nothing yet).
interface Position {
  readonly part: number;
  readonly k: number;
}

const DEAD: Position = { part: -1, k: 0 };

/** A segment both patterns match (the shortest), or `undefined` when no segment matches both. */
export function compositeOverlap(a: CompositePattern, b: CompositePattern): string | undefined {
  const alphabet = [...new Set(literals(a) + literals(b))];
  alphabet.push(outsider(alphabet));
  const da = new PatternDfa(a);
  const db = new PatternDfa(b);
  const start: [Position, Position, string] = [da.start, db.start, ""];
  const seen = new Set([key(start[0], start[1])]);
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const [pa, pb, text] = queue[i] as [Position, Position, string];
    if (da.accepts(pa) && db.accepts(pb)) return text;
    for (const c of alphabet) {
      const na = da.next(pa, c);
      const nb = db.next(pb, c);
      if (na === DEAD || nb === DEAD) continue;
      const k = key(na, nb);
      if (seen.has(k)) continue;
      seen.add(k);
      queue.push([na, nb, text + c]);
    }
  }
  return undefined;
}

function key(a: Position, b: Position): string {
  return `${a.part},${a.k}|${b.part},${b.k}`;
}

function literals(pattern: CompositePattern): string {
  return pattern.parts.map((part) => part.literal ?? "").join("");
}

// A segment character (RFC 3986 pchar) that no literal uses. No capital: under case folding (folded patterns, whose
// literals are lower case) a capital would stand for the small letter a literal may use.
function outsider(used: readonly string[]): string {
  for (const c of "abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@") {
    if (!used.includes(c)) return c;
  }
  return "\u00e9";
}

class PatternDfa {
  readonly #parts: CompositePattern["parts"];
  // KMP failure function of each literal, by part index.
  readonly #fail = new Map<number, number[]>();
  readonly start: Position;

  constructor(pattern: CompositePattern) {
    this.#parts = pattern.parts;
    this.#parts.forEach((part, i) => {
      if (part.literal !== undefined) this.#fail.set(i, failure(part.literal));
    });
    this.start = this.#enter(0);
  }

  #enter(part: number): Position {
    return { part, k: this.#parts[part]?.name === undefined ? 0 : -1 };
  }

  accepts(p: Position): boolean {
    if (p === DEAD) return false;
    const parts = this.#parts;
    if (p.part === parts.length) return true;
    const part = parts[p.part];
    if (part?.name === undefined || p.k === -1) return false;
    const next = parts[p.part + 1];
    // A last parameter takes the rest; one before a final literal needs the segment to end with it.
    if (next === undefined) return true;
    return p.part + 2 === parts.length && p.k === (next.literal as string).length;
  }

  next(p: Position, c: string): Position {
    if (p === DEAD) return DEAD;
    const parts = this.#parts;
    const part = parts[p.part];
    if (part === undefined) return DEAD; // the whole pattern is read: nothing may follow
    if (part.name === undefined) {
      if (part.literal[p.k] !== c) return DEAD;
      return p.k + 1 === part.literal.length ? this.#enter(p.part + 1) : { part: p.part, k: p.k + 1 };
    }
    // A parameter's first character is its own: the literal after it is searched from the next one.
    if (p.k === -1) return { part: p.part, k: 0 };
    const next = parts[p.part + 1];
    if (next === undefined) return p;
    const literal = next.literal as string;
    const k = advance(literal, this.#fail.get(p.part + 1) as number[], p.k, c);
    if (p.part + 2 === parts.length) return { part: p.part, k };
    // The first occurrence ends the parameter, and the literal is read: on to the part after it.
    return k === literal.length ? this.#enter(p.part + 2) : { part: p.part, k };
  }
}

function failure(literal: string): number[] {
  const fail = new Array<number>(literal.length).fill(0);
  for (let i = 1, k = 0; i < literal.length; i++) {
    while (k > 0 && literal[i] !== literal[k]) k = fail[k - 1] as number;
    if (literal[i] === literal[k]) k++;
    fail[i] = k;
  }
  return fail;
}

// The string-matching automaton: the longest prefix of `literal` that ends the text read, after `c`.
function advance(literal: string, fail: readonly number[], state: number, c: string): number {
  // After a whole occurrence (a final literal read so far), fall back as KMP does.
  let k = state === literal.length ? (fail[state - 1] as number) : state;
  while (k > 0 && literal[k] !== c) k = fail[k - 1] as number;
  return literal[k] === c ? k + 1 : 0;
}
