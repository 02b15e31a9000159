import fc from "fast-check";

/**
 * The values of `base` that `accepts`, trying at most `maxAttempts` in a row; then `exhausted(lastRejected)`
 * builds the error thrown. `.filter` loops forever on a predicate nothing satisfies; this fails fast and
 * says why. Shrinking keeps only accepted values, like `.filter`.
 */
export class BoundedFilter<T> extends fc.Arbitrary<T> {
  constructor(
    private readonly base: fc.Arbitrary<T>,
    private readonly accepts: (value: unknown) => boolean,
    private readonly maxAttempts: number,
    private readonly exhausted: (last: unknown) => Error,
  ) {
    super();
  }

  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    let last: unknown;
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const candidate = this.base.generate(mrng, biasFactor);
      if (this.accepts(candidate.value_)) return candidate;
      last = candidate.value_;
    }
    throw this.exhausted(last);
  }

  canShrinkWithoutContext(value: unknown): value is T {
    return this.base.canShrinkWithoutContext(value) && this.accepts(value);
  }

  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    return this.base.shrink(value, context).filter((candidate) => this.accepts(candidate.value_));
  }
}
