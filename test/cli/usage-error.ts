import { UsageError } from "../../src/cli/output";

/** The UsageError `run` throws (exit 2); anything else it throws is rethrown, and throwing nothing fails. */
export function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error("no UsageError");
}
