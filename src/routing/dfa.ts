import { answeredBy } from "../http/methods";
import { type CompositePattern, matchComposite } from "./composite";
import { type MatchResult, NOT_FOUND } from "./match-result";
import { type SegmentTable, segmentTable } from "./segment-table";
import { compareSpecificity, type ParsedTemplate } from "./template";

/** A route as the matcher stores it. */
export interface Entry<R> {
  readonly method: string;
  readonly parsed: ParsedTemplate;
  readonly route: R;
  readonly label: string;
  /** Whole-segment parameters: segment index and name. */
  readonly indexes: readonly number[];
  readonly names: readonly string[];
  /** Composite segments: segment index and pattern. */
  readonly composites: readonly { readonly index: number; readonly pattern: CompositePattern }[];
  /** Segment index of the wildcard, or -1. */
  readonly wildcard: number;
  /** The wildcard's parameter name ("*" for a bare wildcard). */
  readonly wildcardName: string;
  /** Index of the first segment holding a parameter (none: 0). */
  readonly first: number;
  /** Exactly one parameter, a whole segment (then `first` is its segment index). */
  readonly single: boolean;
  /** Shared answer for a route without parameters: matching it allocates nothing. */
  readonly staticResult: MatchResult<R> | undefined;
}

// A node of the template trie: one per distinct template prefix.
interface TrieNode<R> {
  readonly id: number;
  /** A wildcard node: it accepts every further segment. */
  readonly sink: boolean;
  readonly statics: Map<string, TrieNode<R>>;
  readonly composites: Map<string, { readonly pattern: CompositePattern; readonly child: TrieNode<R> }>;
  param: TrieNode<R> | undefined;
  wildcard: TrieNode<R> | undefined;
  readonly entries: Entry<R>[];
}

/*
 * A state of the deterministic matcher: the set of trie nodes whose templates match the path read so
 * far (subset construction). Each segment is one transition, so a match reads the path once and never
 * backtracks: time is linear in the path length whatever the table. States are built on first use and
 * memoised up to a bound, so an unusual table never multiplies memory.
 */
export interface State<R> extends SegmentTable {
  readonly members: readonly TrieNode<R>[];
  /** The target of each literal of `keys` (filled on first use). */
  readonly targets: (State<R> | undefined)[];
  readonly keyIndex: ReadonlyMap<string, number>;
  other: State<R> | undefined;
  empty: State<R> | undefined;
  readonly composites: readonly { readonly pattern: CompositePattern; readonly child: TrieNode<R> }[];
  readonly compositeTargets: Map<number | string, State<R>>;
  readonly dead: boolean;
  /** Only wildcards: every further segment leads back here, so the rest of the path need not be read. */
  readonly final: boolean;
  /** `dead` or `final`: the walk stops here. */
  readonly halt: boolean;
  /** No composite segment to try: a literal or the parameter decides the transition alone. */
  readonly simple: boolean;
  /**
   * Neither `halt` nor `jump`, `simple`, its literals found in place (no hash slots) and compared
   * case-sensitively: the matcher's small common loop handles it.
   */
  readonly plain: boolean;
  /**
   * Nothing ahead but wildcards: whatever the next segment (empty or not), it leads to the same state,
   * where only wildcards are left or none; so the rest of the path need not be read.
   */
  readonly jump: boolean;
  /** The route per method slot (see method-slots.ts), HEAD answered by GET unless declared. */
  readonly byMethod: readonly (Entry<R> | undefined)[];
  readonly declared: readonly string[];
  /** The answer for a method without a route here: 405 with `Allow`, or 404 when none is declared. */
  readonly refusal: MatchResult<R>;
}

const MAX_STATES = 20_000;

/** Builds the trie, then the states on demand. */
export class Automaton<R> {
  readonly #caseSensitive: boolean;
  readonly #fold: (segment: string) => string;
  readonly #methods: readonly string[];
  readonly #allow: (declared: readonly string[]) => readonly string[];
  #nextId = 0;
  readonly root: TrieNode<R>;
  readonly #memo = new Map<string, State<R>>();
  readonly #dead: State<R>;

  /**
   * @param caseSensitive whether literal segments compare case-sensitively (else they are lowercased).
   * @param methods the method of each slot of `State.byMethod`.
   * @param allow the `Allow` list of a 405 for the methods declared on a path.
   */
  constructor(
    caseSensitive: boolean,
    methods: readonly string[],
    allow: (declared: readonly string[]) => readonly string[],
  ) {
    this.#caseSensitive = caseSensitive;
    this.#fold = caseSensitive ? (segment) => segment : (segment) => segment.toLowerCase();
    this.#methods = methods;
    this.#allow = allow;
    this.root = this.#node(false);
    this.#dead = this.#state([]);
  }

  #node(sink: boolean): TrieNode<R> {
    const id = this.#nextId++;
    return { id, sink, statics: new Map(), composites: new Map(), param: undefined, wildcard: undefined, entries: [] };
  }

  insert(entry: Entry<R>): void {
    let node = this.root;
    for (const segment of entry.parsed.segments) {
      if (segment.kind === "static") {
        const key = this.#fold(segment.value);
        let next = node.statics.get(key);
        if (next === undefined) {
          next = this.#node(false);
          node.statics.set(key, next);
        }
        node = next;
      } else if (segment.kind === "composite") {
        let next = node.composites.get(segment.pattern.shape);
        if (next === undefined) {
          next = { pattern: segment.pattern, child: this.#node(false) };
          node.composites.set(segment.pattern.shape, next);
        }
        node = next.child;
      } else if (segment.kind === "param") {
        node.param ??= this.#node(false);
        node = node.param;
      } else {
        node.wildcard ??= this.#node(true);
        node = node.wildcard;
      }
    }
    node.entries.push(entry);
  }

  /** The state of a set of trie nodes. */
  stateOf(members: TrieNode<R>[]): State<R> {
    if (members.length === 0) return this.#dead;
    members.sort((a, b) => a.id - b.id);
    const key = members.map((member) => member.id).join(",");
    const known = this.#memo.get(key);
    if (known !== undefined) return known;
    const state = this.#state(members);
    if (this.#memo.size < MAX_STATES) this.#memo.set(key, state);
    return state;
  }

  /** How many states are memoised (for tests and introspection). */
  get size(): number {
    return this.#memo.size;
  }

  #state(members: readonly TrieNode<R>[]): State<R> {
    const keys = new Set<string>();
    const composites: State<R>["composites"][number][] = [];
    const methods = new Map<string, Entry<R>>();
    for (const member of members) {
      if (!member.sink) {
        for (const key of member.statics.keys()) keys.add(key);
        composites.push(...member.composites.values());
      }
      for (const entry of member.entries) {
        const current = methods.get(entry.method);
        // The most specific template wins, per method (same method and shape is refused at build).
        if (current === undefined || compareSpecificity(entry.parsed, current.parsed) < 0)
          methods.set(entry.method, entry);
      }
    }
    const declared = [...methods.keys()];
    // RFC 9110 §9.3.2: HEAD is answered as GET without content unless declared (the method table says which).
    for (const method of this.#methods) {
      const via = answeredBy(method);
      const entry = via === undefined || methods.has(method) ? undefined : methods.get(via);
      if (entry !== undefined) methods.set(method, entry);
    }
    const table = segmentTable(keys);
    const dead = members.length === 0;
    const final = !dead && members.every((member) => member.sink);
    const jump =
      !dead && keys.size === 0 && composites.length === 0 && members.every((member) => member.param === undefined);
    return {
      members,
      keys: table.keys,
      codes: table.codes,
      offsets: table.offsets,
      base: table.base,
      dispatch: table.dispatch,
      slots: table.slots,
      targets: table.keys.map(() => undefined),
      keyIndex: new Map(table.keys.map((key, i) => [key, i])),
      other: undefined,
      empty: undefined,
      composites,
      compositeTargets: new Map(),
      dead,
      final,
      halt: dead || final,
      simple: composites.length === 0,
      jump,
      plain: this.#caseSensitive && !dead && !final && composites.length === 0 && !jump && table.slots.length === 0,
      byMethod: this.#methods.map((method) => methods.get(method)),
      declared,
      refusal:
        declared.length === 0
          ? NOT_FOUND
          : Object.freeze({ kind: "method_not_allowed" as const, allow: Object.freeze(this.#allow(declared)) }),
    };
  }

  /**
   * The state after one more segment.
   * @param index the segment's position in `state.keys`, or -1 when it is no literal of the state.
   * @param raw the segment as sent (composites are matched on it).
   */
  step(state: State<R>, index: number, raw: string): State<R> {
    if (state.dead) return state;
    const empty = raw === "";
    // Which composites matched: a bit set while it fits a number, a list beyond.
    let matched = 0;
    let list = "";
    const children: TrieNode<R>[] = [];
    if (!empty) {
      for (let i = 0; i < state.composites.length; i++) {
        const composite = state.composites[i] as State<R>["composites"][number];
        if (matchComposite(composite.pattern, raw) !== undefined) {
          if (i < 30) matched |= 1 << i;
          else list += `,${i}`;
          children.push(composite.child);
        }
      }
    }
    const some = matched !== 0 || list !== "";
    const cacheKey = list === "" ? matched * (state.keys.length + 1) + index + 1 : `${index}:${matched}${list}`;
    const cached = some
      ? state.compositeTargets.get(cacheKey)
      : index !== -1
        ? state.targets[index]
        : empty
          ? state.empty
          : state.other;
    if (cached !== undefined) return cached;
    const key = index === -1 ? undefined : state.keys[index];
    for (const member of state.members) {
      if (member.sink) {
        children.push(member);
        continue;
      }
      if (!empty) {
        const child = key === undefined ? undefined : member.statics.get(key);
        if (child !== undefined) children.push(child);
        if (member.param !== undefined) children.push(member.param);
      }
      if (member.wildcard !== undefined) children.push(member.wildcard);
    }
    const target = this.stateOf(children);
    if (this.#memo.size < MAX_STATES || target.dead) {
      if (some) state.compositeTargets.set(cacheKey, target);
      else if (index !== -1) state.targets[index] = target;
      else if (empty) state.empty = target;
      else state.other = target;
    }
    return target;
  }

  /** Steps by a literal segment (already folded), as the fast path for literal routes does at build. */
  stepLiteral(state: State<R>, segment: string): State<R> {
    return this.step(state, state.keyIndex.get(segment) ?? -1, segment);
  }
}
