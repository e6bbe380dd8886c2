import type { PgRunner } from './pg-runner.js';

/** PostgreSQL error codes a concurrent `migrate()` can hit on `CREATE ... IF NOT EXISTS`. */
const CONCURRENT_DDL = new Set(['23505', '42P07', '42710', '42P06']);

/**
 * Runs idempotent DDL (`CREATE ... IF NOT EXISTS`) as one transaction, with a deadline of at
 * least 30 s. When another instance migrating at the same moment wins a race on a catalog entry,
 * runs it again (up to 3 attempts). Throws `BackendUnavailableError` otherwise.
 */
export async function runMigration(runner: PgRunner, ddl: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      // Without parameters pg uses the simple protocol: the statements run as one transaction.
      await runner.query('migrate', ddl, undefined, {
        deadline: Date.now() + Math.max(30_000, runner.timeoutMs),
      });
      return;
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (attempt < 3 && code && CONCURRENT_DDL.has(code)) continue; // another instance won
      throw error;
    }
  }
}
