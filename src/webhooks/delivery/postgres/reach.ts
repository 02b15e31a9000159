/**
 * A row count rounded up to a power of two (0 stays 0): the reach a statement states instead of the exact count, so
 * that a handful of texts (each planned once per connection) serve every count. Internal.
 */
export function reachOf(count: number): number {
  return count <= 0 ? 0 : 2 ** Math.ceil(Math.log2(count));
}
