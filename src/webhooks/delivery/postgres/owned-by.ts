/**
 * The condition that an endpoint belongs to `tenant`, its value pushed onto `values`; `null` (the operator's endpoints)
 * as IS NULL, which the tenant index serves where `IS NOT DISTINCT FROM` would not.
 */
export function ownedBy(tenant: string | null, values: unknown[], column = "tenant"): string {
  if (tenant === null) return `${column} IS NULL`;
  return `${column} = $${values.push(tenant)}`;
}
