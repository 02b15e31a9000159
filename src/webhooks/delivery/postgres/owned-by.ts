/**
 * The condition that an endpoint belongs to `tenant`, its value pushed onto `values`; `null` (the operator's endpoints)
 * as IS NULL, which the tenant index serves where `IS NOT DISTINCT FROM` would not.
 */
export function ownedBy(tenant: string | null, values: unknown[], column = "tenant"): string {
  if (tenant === null) return `${column} IS NULL`;
  return `${column} = $${values.push(tenant)}`;
}

/**
 * The condition that an endpoint receives the events published for `tenant`: the tenant's own and the operator's
 * with `all_tenants` (`null`: the operator's, all of them), its value pushed onto `values`. An OR of two indexed
 * conditions, which PostgreSQL reads as two index scans.
 */
export function receivingFor(tenant: string | null, values: unknown[], alias = ""): string {
  const c = (column: string) => (alias === "" ? column : `${alias}.${column}`);
  if (tenant === null) return `${c("tenant")} IS NULL`;
  return `(${ownedBy(tenant, values, c("tenant"))} OR (${c("tenant")} IS NULL AND ${c("all_tenants")}))`;
}
