import { refuseOption } from "./refuse-option";

/**
 * The checks a numeric option gets where it is taken (a constructor, a factory): each returns the value when it fits
 * and otherwise throws a `TypeError` that names who takes the option, the option and the value it got, in one wording
 * everywhere: "createMemoryInbox: maxDone must be a positive integer, got 0."
 */

// "a positive integer number of milliseconds", "a positive number of milliseconds".
function refuse(owner: string, name: string, value: unknown, what: string, unit: string | undefined): never {
  const kind = unit === undefined ? what : `${what}${what.endsWith("integer") ? " number" : ""} of ${unit}`;
  refuseOption(owner, name, value, `a ${kind}`);
}

/** `value` when it is a safe integer of 1 or more (a count, a bound). */
export function positiveInteger(owner: string, name: string, value: unknown, unit?: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    refuse(owner, name, value, "positive integer", unit);
  }
  return value;
}

/** `value` when it is a number other than NaN: ±Infinity included (a bound that may mean "all" or "none"). */
export function notNaN(owner: string, name: string, value: unknown, unit?: string): number {
  if (typeof value !== "number" || Number.isNaN(value)) refuse(owner, name, value, "number (Infinity included)", unit);
  return value;
}

/** `value` when it is a finite number (an instant, which may be before the epoch). */
export function finiteNumber(owner: string, name: string, value: unknown, unit?: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) refuse(owner, name, value, "finite number", unit);
  return value;
}

/** `value` when it is a finite number above 0 (a duration, a rate). */
export function positiveNumber(owner: string, name: string, value: unknown, unit?: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    refuse(owner, name, value, "positive number", unit);
  }
  return value;
}

/** `value` when it is a finite number of 0 or more (a delay that may be none). */
export function nonNegativeNumber(owner: string, name: string, value: unknown, unit?: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    refuse(owner, name, value, "non-negative number", unit);
  }
  return value;
}

/** `value` when it is a safe integer of 0 or more (a size in bytes, a count that may be none). */
export function nonNegativeInteger(owner: string, name: string, value: unknown, unit?: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    refuse(owner, name, value, "non-negative integer", unit);
  }
  return value;
}
