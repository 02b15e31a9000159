import { expect } from "vitest";
import { CachingError, type CachingErrorCode } from "../../src/caching/index";

/** Asserts that `run` throws a {@link CachingError} (a TypeError) with `code`. */
export function expectCode(run: () => unknown, code: CachingErrorCode): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(CachingError);
  expect(thrown).toBeInstanceOf(TypeError);
  expect((thrown as CachingError).code).toBe(code);
}
