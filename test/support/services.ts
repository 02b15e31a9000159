/**
 * Real-service wiring for store tests. Without REDIS_URL a Redis suite skips with a printed reason; PostgreSQL suites
 * run on PGlite without DATABASE_URL (see databases.ts). With them set (as .ci/run does), an unreachable service fails
 * the suite instead.
 */

export const databaseUrl: string | undefined = process.env.DATABASE_URL;
export const redisUrl: string | undefined = process.env.REDIS_URL;

const reported = new Set<string>();

function report(name: string, variable: string): void {
  if (reported.has(name)) return;
  reported.add(name);
  console.warn(`[skip] ${name} suites skipped: ${variable} is not set (run them with ${variable}=... or bash .ci/run)`);
}

/** True when the Redis suites must skip; prints the reason once. */
export function skipWithoutRedis(): boolean {
  if (redisUrl) return false;
  report("Redis", "REDIS_URL");
  return true;
}

/** A name unique to this test run, for tables, schemas and key prefixes shared services see. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
