import { randomUUID } from 'node:crypto';
import { cron, every, type JobContext, Scheduler } from '@fleetcron/core';
import { PostgresLock } from '@fleetcron/lock-postgres';
import { PostgresStore } from '@fleetcron/store-postgres';
import pg from 'pg';

/** One run as the job itself saw it (the append-only ledger the e2e test judges). */
export interface LedgerEntry {
  job: string;
  instanceId: string;
  fireAt: number;
  /** `ctx.request.data` of a run answering a fleet run request; absent otherwise. */
  data?: unknown;
}

/** A fleet of real Schedulers sharing one PostgreSQL schema (lock and store). */
export interface PgFleet {
  store: PostgresStore;
  schedulers: Scheduler[];
  ledger: LedgerEntry[];
  /** Every job the fleet defines. */
  jobs: string[];
  stop(): Promise<void>;
}

/**
 * Starts `size` Schedulers on `url` in a fresh schema, each defining the same jobs: `tick`
 * (every second), `flaky` (every 2 s, always throws), `nightly-report` (03:00 Berlin; it runs
 * in a test only when someone asks for a run now).
 */
export async function startPgFleet(url: string, size = 3): Promise<PgFleet> {
  const schema = `e2e_${randomUUID().slice(0, 8)}`;
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  const lock = new PostgresLock(pool, { schema });
  const store = new PostgresStore(pool, { schema });
  await lock.migrate();
  await store.migrate();
  const ledger: LedgerEntry[] = [];
  const record = (ctx: JobContext) => {
    ledger.push({
      ...{ job: ctx.job, instanceId: ctx.instanceId, fireAt: ctx.fireAt.getTime() },
      ...(ctx.request ? { data: ctx.request.data } : {}),
    });
  };
  const triggers = {
    tick: every(1000),
    flaky: every(2000),
    'nightly-report': cron('0 3 * * *', { tz: 'Europe/Berlin' }),
  };
  const schedulers: Scheduler[] = [];
  for (let i = 0; i < size; i++) {
    const scheduler = new Scheduler({
      lock,
      store,
      instanceId: `e2e-${i + 1}`,
      leaseMs: 5000,
      heartbeatMs: 1000,
    });
    scheduler.add({ name: 'tick', trigger: triggers.tick, run: record });
    scheduler.add({
      name: 'flaky',
      trigger: triggers.flaky,
      run: (ctx) => {
        record(ctx);
        throw new Error('payment provider answered 503');
      },
    });
    scheduler.add({ name: 'nightly-report', trigger: triggers['nightly-report'], run: record });
    scheduler.start();
    schedulers.push(scheduler);
  }
  return {
    store,
    schedulers,
    ledger,
    jobs: ['flaky', 'nightly-report', 'tick'],
    async stop() {
      await Promise.all(schedulers.map((s) => s.stop({ drainMs: 2000 })));
      await pool.end();
    },
  };
}
