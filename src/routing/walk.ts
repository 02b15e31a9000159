import type { Automaton, State } from "./dfa";
import { type MatchResult, NOT_FOUND } from "./match-result";
import { paramsOf } from "./params";
import { hashedAt, keyLength, literalAt } from "./segment-table";

/*
 * The walk of a request path through the matcher's automaton: one transition per segment, each
 * decided by the segment alone, so the path is read once, left to right, and matching time is linear
 * in its length. The common states (see `State.plain`) go through a small loop that finds literals in
 * place; the first other state hands the rest of the path to the general loop.
 */

/**
 * The walk for one compiled table: `walk(slot, path)` answers a method slot (-1: no route declares
 * the method) and a path that is not a literal route.
 * @param slashState the state for "/" (the root, and for a root wildcard its one empty segment).
 */
export function walker<R>(
  automaton: Automaton<R>,
  rootState: State<R>,
  slashState: State<R>,
  caseSensitive: boolean,
  maxParamLength: number,
): (slot: number, path: string) => MatchResult<R> {
  const fold = caseSensitive ? (segment: string) => segment : (segment: string) => segment.toLowerCase();

  // A transition that is not the plain literal-or-parameter kind: an empty segment, or composites.
  function special(state: State<R>, index: number, path: string, start: number, end: number): State<R> {
    if (start === end) return state.empty ?? automaton.step(state, -1, "");
    return automaton.step(state, index, path.slice(start, end));
  }

  // The answer once the walk has stopped in `state` with `count` segment offsets recorded.
  function answer(slot: number, path: string, state: State<R>, count: number): MatchResult<R> {
    const found = slot === -1 ? undefined : state.byMethod[slot];
    if (found === undefined) return state.refusal;
    return found.staticResult ?? paramsOf(found, path, starts, count, maxParamLength);
  }

  // The walk through plain states (see `State.plain`), the common case kept small; the first other
  // state hands the rest of the path to `walkFrom`.
  function walk(slot: number, path: string): MatchResult<R> {
    const length = path.length;
    if (length === 0 || path.charCodeAt(0) !== 47 /* "/" */) return NOT_FOUND;
    if (length === 1) {
      starts[0] = 1;
      return answer(slot, path, slashState, 1);
    }
    // A path has fewer segments than characters: room for all of them is checked once (a longer
    // path takes the general walk, which checks segment by segment).
    if (!rootState.plain || length > starts.length) return walkFrom(slot, path, rootState, 1, 0);
    const at = starts;
    let state = rootState;
    let count = 0;
    let start = 1;
    for (;;) {
      at[count++] = start;
      // A literal is found in place and gives the segment's end; anything else is read to the "/".
      // The search is `literalAt` written out: inlined by hand, it measured 3-10 % faster.
      let end = -1;
      const dispatch = state.dispatch;
      if (dispatch.length !== 0 && start < length) {
        const d = 2 * (path.charCodeAt(start) - state.base);
        if (d >= 0 && d < dispatch.length) {
          const first = dispatch[d] as number;
          if (first !== 0) {
            const last = dispatch[d + 1] as number;
            const { codes, offsets } = state;
            for (let index = first - 1; index < last; index++) {
              const from = offsets[index] as number;
              const stop = start + (offsets[index + 1] as number) - from;
              if (stop > length || (stop < length && path.charCodeAt(stop) !== 47) /* "/" */) continue;
              // The first character is the group's.
              let i = start + 1;
              let j = from + 1;
              while (i < stop && codes[j] === path.charCodeAt(i)) {
                i++;
                j++;
              }
              if (i === stop) {
                end = stop;
                state = state.targets[index] ?? automaton.step(state, index, state.keys[index] as string);
                break;
              }
            }
          }
        }
      }
      if (end === -1) {
        // A native search: faster than reading characters one by one from here.
        end = path.indexOf("/", start);
        if (end === -1) end = length;
        if (end !== start) state = state.other ?? automaton.step(state, -1, path.slice(start, end));
        else state = state.empty ?? automaton.step(state, -1, "");
      }
      if (!state.plain) {
        if (state.dead) return NOT_FOUND;
        // Only wildcards are left: they take the rest of the path whatever it holds.
        if (state.final || end === length) break;
        return walkFrom(slot, path, state, end + 1, count);
      }
      if (end === length) break;
      start = end + 1;
    }
    return answer(slot, path, state, count);
  }

  // The general walk from the segment at `start`, for any state.
  function walkFrom(slot: number, path: string, from: State<R>, first: number, recorded: number): MatchResult<R> {
    const length = path.length;
    let state = from;
    let count = recorded;
    let start = first;
    for (;;) {
      if (count === starts.length) starts = grow(starts);
      starts[count++] = start;
      if (state.jump) {
        // The segment decides nothing: only wildcards are ahead, taking the rest of the path.
        state = state.other ?? automaton.step(state, -1, start === length ? "" : path.slice(start, start + 1));
        if (state.dead) return NOT_FOUND;
        break;
      }
      let index = caseSensitive && start < length ? literalAt(state, path, start) : -1;
      let end: number;
      if (index !== -1) end = start + keyLength(state, index);
      else {
        end = path.indexOf("/", start);
        if (end === -1) end = length;
        if (end !== start && state.keys.length !== 0) {
          if (!caseSensitive) index = state.keyIndex.get(fold(path.slice(start, end))) ?? -1;
          else if (state.slots.length !== 0) index = hashedAt(state, path, start, end);
        }
      }
      if (!state.simple || start === end) state = special(state, index, path, start, end);
      else if (index !== -1) state = state.targets[index] ?? automaton.step(state, index, state.keys[index] as string);
      else state = state.other ?? automaton.step(state, -1, path.slice(start, end));
      if (state.halt) {
        if (state.dead) return NOT_FOUND;
        break;
      }
      if (end === length) break;
      start = end + 1;
    }
    return answer(slot, path, state, count);
  }

  return walk;
}

// Segment offsets of the path being matched: matching is synchronous, so one array serves every call.
let starts: Int32Array = new Int32Array(256);

function grow(array: Int32Array): Int32Array {
  const grown = new Int32Array(array.length * 2);
  grown.set(array);
  return grown;
}
