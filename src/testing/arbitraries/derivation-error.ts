/** Raised when a schema has a construct values cannot be derived for (a custom type, a refinement nothing satisfies). */
export class ArbitraryDerivationError extends Error {
  readonly code = "arbitrary_not_derivable";
  override readonly name = "ArbitraryDerivationError";
}
