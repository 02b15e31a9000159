import { refuseOption } from "./refuse-option";

/**
 * A callback option checked where it is taken, not where it is first called: a value that is no function (a fixed
 * name, a string from a configuration file) would otherwise fail every request, claim or attempt that calls it.
 * Returns `value` when it is a function or left out; `wanted` says what the function does, for the error
 * ("now must be a function returning ms since the epoch, got \"5\".").
 */
export function optionalFunction<T>(
  owner: string,
  name: string,
  value: T | undefined,
  wanted = "a function",
): T | undefined {
  if (value !== undefined && typeof value !== "function") refuseOption(owner, name, value, wanted);
  return value;
}

/** `value` when it is a function; anything else, `undefined` included, is refused as `optionalFunction` says. */
export function requiredFunction<T>(owner: string, name: string, value: T, wanted = "a function"): T {
  if (typeof value !== "function") refuseOption(owner, name, value, wanted);
  return value;
}
